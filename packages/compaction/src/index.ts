export { canDelete, type DeletableBlobStore, renderContent } from "./blob-access.ts";
export {
  DEFAULT_MAX_MATCHES,
  DEFAULT_READ_LIMIT,
  type GrepRequest,
  grepLines,
  type ReadLimits,
  type ReadRequest,
  readLines,
} from "./cache-read.ts";
export { createCacheTools, grepInputSchema, readInputSchema } from "./cache-tools.ts";
export {
  buildCompactedHistory,
  type CheckAndCompactOptions,
  type CheckAndCompactResult,
  checkAndCompact,
  compactionThreshold,
  MAX_KEPT_SHARE_OF_THRESHOLD,
  shouldCompact,
} from "./check-and-compact.ts";
export {
  buildSummaryRequest,
  type CompactOptions,
  type CompactResult,
  compact,
  fitSummaryInput,
  SUMMARY_MAX_TOKENS,
  summaryRequestFromItems,
} from "./compact.ts";
export { resolveCompactionConfig, resolveToolOutputCacheConfig } from "./config.ts";
export { type ModelLimits, resolveModelLimits } from "./context-limit.ts";
export {
  type ContextPolicyOptions,
  createContextPolicy,
  TRIM_TARGET_RATIO,
  type YoiContextPolicy,
} from "./context-policy.ts";
export { CompactionError, type CompactionErrorCode } from "./errors.ts";
export { itemsTokens, itemTokens } from "./estimate.ts";
export {
  closeIdleMatchers,
  type FileMatch,
  GREP_TIMEOUT_MS,
  GrepMatcher,
  type GrepMatcherOptions,
  type HitChunk,
  type MatchJob,
} from "./grep-matcher.ts";
export {
  type CompactionPlan,
  isCompactionMessage,
  keepPairedToolItems,
  lastTurnsStart,
  planCompaction,
  prepareForSummary,
  RETAIN_HEADER,
  SUMMARY_HEADER,
} from "./history-shape.ts";
export {
  buildInContextView,
  GREP_TOOL_NAME,
  type InContextView,
  READ_TOOL_NAME,
  type ViewLimits,
} from "./in-context-view.ts";
export {
  buildCompactionInstruction,
  DEFAULT_RETAIN_PROMPT,
  DEFAULT_SUMMARY_PROMPT,
  extractTag,
  withDirectives,
} from "./prompts.ts";
export { collectRefs } from "./refs.ts";
export { type TokenUsage, tokenUsageFromUsage } from "./token-usage.ts";
export { type GcReport, ToolOutputCache, type ToolOutputCacheOptions } from "./tool-output-cache.ts";
export {
  isTrimmed,
  type TrimOptions,
  type TrimResult,
  totalToolOutputTokens,
  trimPlaceholder,
  trimToolOutputs,
} from "./trim.ts";
