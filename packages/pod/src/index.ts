export {
  AGENT_NAME_PATTERN,
  type AgentDefinition,
  AgentDefinitionError,
  type AgentDefinitionErrorCode,
  agentDirs,
  type LoadedAgents,
  loadAgents,
  parseAgentFile,
} from "./agents/index.ts";
export { type Alert, AlertBus, type AlertLevel, type AlertListener, oneLine } from "./alerts.ts";
export {
  type AutoReadOptions,
  type AutoReadResult,
  type CompactingPolicy,
  insertAfterSummary,
  renderAutoRead,
  withAutoRead,
} from "./auto-read.ts";
export {
  type BuiltinToolsOptions,
  createBuiltinTools,
  MUTATING_TOOLS,
  READ_ONLY_TOOLS,
} from "./builtin-tools.ts";
export {
  type CheckpointInfo,
  CheckpointRecorder,
  type CheckpointRecorderOptions,
  type ForkOptions,
  forkSession,
  listCheckpoints,
  type RewindConflict,
  type RewindContext,
  RewindError,
  type RewindOptions,
  type RewindResult,
  type RewindTarget,
  rewind,
} from "./checkpoints/index.ts";
export {
  ConfiguredHooks,
  type CustomCommand,
  type ExtensionProblem,
  type ExtensionSource,
  type Extensions,
  expandCommand,
  FrontMatterError,
  HOOK_TIMEOUT_MS,
  loadCommands,
  loadExtensions,
  loadSkills,
  RESERVED_COMMANDS,
  SKILL_TOOL_NAME,
  type Skill,
} from "./extensions/index.ts";
export {
  FileRefError,
  type FileRefErrorCode,
  type ResolvedFileRef,
  resolveFileRef,
  truncationNote,
} from "./file-ref.ts";
export { BinaryFileError, PodFsView, type ReadTextOptions, type TextRead } from "./fs-view.ts";
export {
  checkImageFile,
  IMAGE_MAX_BYTES,
  IMAGE_MAX_SIDE,
  ImageError,
  type ImageErrorCode,
  type ImageMediaType,
  imageTypeOfPath,
} from "./images/index.ts";
export {
  INSTRUCTIONS_HEADING,
  type InstructionFile,
  type InstructionsOptions,
  ProjectInstructions,
} from "./instructions/index.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export {
  expandVars,
  MCP_PREFIX,
  McpManager,
  type McpManagerOptions,
  type McpPromptCommand,
  type McpServerState,
  type McpServerStatus,
  MissingVariableError,
  mcpName,
} from "./mcp/index.ts";
export {
  analyzeShell,
  bashPrefixRule,
  formatRuleSpec,
  isPermissionModeError,
  MODE_CYCLE,
  type PermissionDecider,
  type PermissionDecision,
  type PermissionDenial,
  type PermissionEvaluation,
  PermissionModeError,
  type PermissionOutcome,
  PermissionPolicy,
  type PermissionPolicyOptions,
  type PermissionPrefixGrant,
  type PermissionPrompt,
  type PermissionRequest,
  type PermissionSettingErrorCode,
  parseRuleSpec,
  primaryArgument,
  type SandboxStatus,
  type ShellAnalysis,
  type ShellWrite,
} from "./permissions/index.ts";
export { clientFromConfig, type ModelTarget, Pod, type PodOptions, type PodRunOptions } from "./pod.ts";
export type {
  AlertPodEvent,
  AutoReadPodEvent,
  PermissionOutcomePodEvent,
  PermissionRequestPodEvent,
  PodEvent,
  PodEventListener,
  SubagentPodEvent,
  TodosPodEvent,
} from "./pod-events.ts";
export { type ReadRecord, ReadTracker } from "./read-tracker.ts";
export {
  bwrapArgs,
  detectSandbox,
  isSandbox,
  PLAN_MODE_NOTE,
  type PodSandbox,
  type Sandbox,
  type SandboxedCommand,
  type SandboxPolicy,
  type SandboxUnavailable,
  seatbeltProfile,
} from "./sandbox/index.ts";
export { isScopeError, ScopeError, type ScopeErrorCode } from "./scope-error.ts";
export {
  type AccessMode,
  type DirEntry,
  type EntryKind,
  isInside,
  type ResolvedPath,
  ScopedFs,
  type ScopedFsOptions,
  type ScopedReadHandle,
  type ScopedStat,
  type WriteOptions,
} from "./scoped-fs.ts";
export {
  type FileRefSegment,
  fileRefPlaceholder,
  fileRefs,
  flattenSegments,
  parseSegments,
  type Segment,
  type TextSegment,
} from "./segments.ts";
export { type Classification, classifyBytes, SNIFF_BYTES } from "./text-sniff.ts";
export { BASH_MAX_TIMEOUT_MS, type BashToolOptions, bashTool, defaultBashEnv } from "./tools/bash.ts";
export type { GrepToolOptions } from "./tools/grep.ts";
export {
  type SubagentEventInfo,
  type SubagentResult,
  TASK_TOOL_NAME,
  type TaskToolOptions,
  taskTool,
} from "./tools/task.ts";
export {
  parseTodos,
  renderTodos,
  TODO_MESSAGE_HEADER,
  type TodoItem,
  TodoList,
  type TodoStatus,
  withTodoList,
} from "./tools/todo-list.ts";
export { todoWriteTool } from "./tools/todo-write.ts";
export { WEB_FETCH_TOOL_NAME, type WebFetchOptions, webFetchHost, webFetchTool } from "./tools/web-fetch.ts";
