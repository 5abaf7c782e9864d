export {
  type BlobId,
  type BlobStore,
  BlobStoreError,
  type BlobStoreErrorCode,
  type Content,
  isBlobId,
} from "./blob-store.ts";
export type {
  ContextCheckpoint,
  ContextPolicy,
  ContextState,
  HistoryReplacement,
} from "./context-policy.ts";
export type {
  CommitReason,
  ErrorWorkerEvent,
  HistoryReplacedEvent,
  HistoryReplaceReason,
  ItemCommittedEvent,
  RequestStartEvent,
  RetryEvent,
  RunEndEvent,
  RunStartEvent,
  RunStatus,
  ServerToolWorkerEvent,
  TextDeltaEvent,
  ThinkingDeltaEvent,
  ToolCallEndEvent,
  ToolCallStartEvent,
  ToolOutputDeltaEvent,
  TurnEndEvent,
  UsageWorkerEvent,
  WarningEvent,
  WorkerError,
  WorkerEvent,
  WorkerEventListener,
  WorkerEventType,
  WorkerWarning,
} from "./events.ts";
export { type Hook, type HookPromptAction, type HookToolAction, hookAsInterceptor } from "./hook.ts";
export { createInspectTool, INSPECT_TOOL_NAME, type InspectToolOptions } from "./inspect-tool.ts";
export type {
  AfterToolCallAction,
  BeforeRequestInfo,
  Interceptor,
  PromptAction,
  PromptSubmitInfo,
  RequestAction,
  ToolCallAction,
  ToolCallInfo,
  ToolOutcome,
  ToolResultInfo,
  TurnEndAction,
  TurnEndInfo,
} from "./interceptor.ts";
export type { ResponseBounds, RunOptions, RunResult, ToolOutputLimits, WorkerOptions } from "./options.ts";
export { contentText } from "./output-processing.ts";
export { type SummaryLimits, summarize } from "./summary.ts";
export {
  defineTool,
  inputJsonSchema,
  type Tool,
  type ToolCheckContext,
  ToolError,
  type ToolExecutionContext,
  type ToolReturn,
  toolSpec,
} from "./tool.ts";
export {
  type InlineOutput,
  inlineOutput,
  isToolOutput,
  type StoredOutput,
  storedJson,
  storedText,
  type ToolOutput,
} from "./tool-output.ts";
export { sumUsage } from "./usage.ts";
export { Worker } from "./worker.ts";
