export {
  createClient,
  DEFAULT_FIRST_EVENT_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  PROVIDER_KINDS,
} from "./client.ts";
export { LlmError, type LlmErrorCode, type LlmErrorOptions } from "./errors.ts";
export type {
  BlockAbortEvent,
  BlockDeltaEvent,
  BlockKind,
  BlockStartEvent,
  BlockStopEvent,
  DeltaKind,
  ErrorEvent,
  Event,
  EventType,
  PingEvent,
  RetryEvent,
  ServerToolEvent,
  StatusEvent,
  StopReason,
  ThinkingReplay,
  Usage,
  UsageEvent,
} from "./event.ts";
export {
  MISSING_RESULT_TEXT,
  type PairedHistory,
  type PairingRepair,
  pairToolResults,
} from "./history.ts";
export {
  assistantMessage,
  type Citation,
  type ContentPart,
  type ImagePart,
  type Item,
  type MessageItem,
  messageText,
  type OutputRef,
  type ProviderData,
  type ProviderKind,
  type ProviderName,
  type ReasoningItem,
  type Role,
  type ServerToolItem,
  type ServerToolSource,
  serverToolInput,
  systemMessage,
  type TextPart,
  type ToolCallItem,
  type ToolResultItem,
  userMessage,
} from "./item.ts";
export {
  createModelClient,
  type ModelClientOptions,
  type ModelEndpoint,
  modelEndpoint,
  PLACEHOLDER_API_KEY,
} from "./model-client.ts";
export { isProviderKind } from "./model-info.ts";
export {
  clearRegisteredSecrets,
  hasUrlCredentials,
  MIN_SECRET_LENGTH,
  REDACTED,
  redactDeep,
  redactedJson,
  redactSecrets,
  registerClientSecrets,
  registerSecret,
} from "./redact.ts";
export type {
  ClientOptions,
  ClientWarning,
  LlmClient,
  PromptCacheSettings,
  ReasoningSettings,
  Request,
  RequestSettings,
  RetryOptions,
  StreamOptions,
  TimeoutOptions,
  ToolSpec,
} from "./request.ts";
export { STREAM_HOLDBACK_LIMIT, StreamRedactor } from "./stream-redactor.ts";
export {
  activeContext,
  captureMessageContent,
  GEN_AI_DURATION_BUCKETS,
  genAiProviderName,
  lazyHistogram,
  withSpan,
} from "./telemetry.ts";
export { acceptsToolResultImages, omittedToolResultImages } from "./tool-result-images.ts";
