export { qualifyModelRef } from "./bare-model-name.ts";
export { yoiCacheDir } from "./cache-dir.ts";
export type { ModelCapabilities, ModelInfo, ModelPricing, ProviderKind } from "./catalog.ts";
export { findModel, PROVIDER_KINDS } from "./catalog.ts";
export { MODEL_CATALOG } from "./catalog-data.ts";
export type { ConfigIssue, ConfigIssueCode } from "./config-error.ts";
export { ConfigError, displaySource } from "./config-error.ts";
export { resolveUserPath } from "./config-path.ts";
export type {
  CompactionConfig,
  CompactionConfigInput,
  Config,
  ConfigInput,
  LspConfig,
  LspServerConfig,
  ModelEntryConfig,
  ModelRef,
  NotificationsConfig,
  PermissionRule,
  PermissionsConfig,
  ProviderConfig,
  SandboxConfig,
  ScopeConfig,
  SessionConfig,
  StatusLineConfig,
  TaskConfig,
  ThemeName,
  ToolOutputCacheConfig,
  ToolOutputCacheConfigInput,
  ToolOutputConfig,
  WorkerConfig,
} from "./config-schema.ts";
export {
  CompactionSchema,
  ConfigSchema,
  parseModelRef,
  THEME_NAMES,
  ToolOutputCacheSchema,
} from "./config-schema.ts";
export { costOf, type TokenCounts } from "./cost.ts";
export {
  type Credentials,
  CredentialsError,
  type CredentialsErrorCode,
  credentialsFile,
  readCredentials,
  removeCredentials,
  saveCredential,
} from "./credentials.ts";
export {
  BYTES_PER_TOKEN_ESTIMATE,
  COMPACTION_DEFAULTS,
  CONFIG_DIR_NAME,
  CONFIG_FILE_NAME,
  estimateTokens,
  INLINE_THRESHOLD_BYTES,
  SUMMARY_HEAD_LINES,
  SUMMARY_MAX_BYTES,
  SUMMARY_TAIL_LINES,
  TOOL_OUTPUT_CACHE_BUDGET_MAX_TOKENS,
  TOOL_OUTPUT_CACHE_BUDGET_MIN_TOKENS,
  TOOL_OUTPUT_CACHE_BUDGET_RATIO,
  TOOL_OUTPUT_CACHE_DEFAULTS,
  TOOL_OUTPUT_CACHE_MIN_LINE_LENGTH,
  TOOL_OUTPUT_CACHE_MIN_MESSAGE_BYTES,
  TOOL_OUTPUT_MAX_BYTES,
  TOOLS_WARN_BYTES,
  TOOLS_WARN_COUNT,
  toolOutputCacheBudgetTokens,
  WORKER_DEFAULTS,
} from "./defaults.ts";
export type { ResolvedModel } from "./effective-catalog.ts";
export { buildModelCatalog, resolveModel } from "./effective-catalog.ts";
export type { EnvVariable } from "./env-layer.ts";
export { ENV_PATH_PREFIX, ENV_VARIABLES } from "./env-layer.ts";
export {
  checkMcpServer,
  HOOK_EVENTS,
  type HookCommandConfig,
  type HookEventName,
  type HooksConfig,
  MCP_SERVER_NAME_EXPECTED,
  MCP_SERVER_NAME_PATTERN,
  type McpServerConfig,
} from "./extensions-schema.ts";
export { formatConfig } from "./format-config.ts";
export { configJsonSchema } from "./json-schema.ts";
export type { LoadConfigOptions, LoadedConfig } from "./load-config.ts";
export { DEFAULT_SOURCE, loadConfig } from "./load-config.ts";
export { LSP_MAX_DIAGNOSTICS, LSP_SEVERITIES, LSP_TIMEOUT_MS, LspSchema } from "./lsp-schema.ts";
export { type ModelChoice, withModel } from "./model-choice.ts";
export {
  PERMISSION_MODES,
  type PermissionAction,
  type PermissionMode,
  PermissionModeSchema,
  type SandboxSettings,
  sandboxSettings,
} from "./permissions-schema.ts";
export { writePrivateFile } from "./private-file.ts";
export type { ProjectSettings, ProjectTrust } from "./project-trust.ts";
export {
  builtinProvider,
  isCustomServer,
  PROVIDER_REGISTRY,
  type ProviderInfo,
  providerOfKind,
} from "./provider-registry.ts";
export { saveUserSetting } from "./save-user-setting.ts";
export { TASK_MAX_DEPTH, TASK_MAX_TURNS, TASK_TIMEOUT_MS, TaskSchema } from "./task-schema.ts";
export { privateUserFiles, promptHistoryFile } from "./user-files.ts";
export { WEB_SEARCH_TOOL_NAME, webSearchServerTool } from "./web-search.ts";
