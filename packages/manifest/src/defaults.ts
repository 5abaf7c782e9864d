/**
 * Named defaults from the design seeds. Every other package reads these
 * instead of repeating a number.
 */

/** Cap of a tool output or an `@path` file body sent to the model, in bytes (seed 001). */
export const TOOL_OUTPUT_MAX_BYTES = 16 * 1024;

/** A tool output longer than this (in UTF-8 bytes) is promoted to Stored (seed 000). */
export const INLINE_THRESHOLD_BYTES = 800;
/** Maximum size of an auto-generated Stored summary, in bytes (seed 000). */
export const SUMMARY_MAX_BYTES = 400;
/** Lines of the head shown in a text summary (seed 000). */
export const SUMMARY_HEAD_LINES = 5;
/** Lines of the tail shown in a text summary (seed 000). */
export const SUMMARY_TAIL_LINES = 3;

/** Tool output cache: cap of one in-context tool message, in bytes (seed 004). */
export const TOOL_OUTPUT_CACHE_MAX_MESSAGE_BYTES = 50 * 1024;
/** Tool output cache: longest line kept in the in-context view (seed 004). */
export const TOOL_OUTPUT_CACHE_MAX_LINE_LENGTH = 2000;
/** Tool output cache: the budget is `clamp(window * ratio, min, max)` tokens (seed 004). */
export const TOOL_OUTPUT_CACHE_BUDGET_RATIO = 0.25;
export const TOOL_OUTPUT_CACHE_BUDGET_MIN_TOKENS = 20_000;
export const TOOL_OUTPUT_CACHE_BUDGET_MAX_TOKENS = 60_000;
/** Bytes per token when no tokenizer is available (seed 004). */
export const BYTES_PER_TOKEN_ESTIMATE = 4;

/** The tool output cache's context budget for a model's context window, in tokens. */
export function toolOutputCacheBudgetTokens(contextWindow: number): number {
  const raw = Math.floor(contextWindow * TOOL_OUTPUT_CACHE_BUDGET_RATIO);
  return Math.min(TOOL_OUTPUT_CACHE_BUDGET_MAX_TOKENS, Math.max(TOOL_OUTPUT_CACHE_BUDGET_MIN_TOKENS, raw));
}

/** Token estimate of a string by the bytes/4 rule. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN_ESTIMATE);
}

/** Compaction starts when the context reaches this share of the window (seed 004). */
export const COMPACTION_THRESHOLD_RATIO = 0.8;
/** Turns kept verbatim after compaction (seed 004). */
export const COMPACTION_RETAIN_LAST_TURNS = 1;
export const COMPACTION_ENABLED = true;
export const COMPACTION_AUTO = true;

/** Worker defaults. */
export const WORKER_MAX_TURNS = 50;
export const WORKER_MAX_TOKENS = 8192;
/** Per-tool wall-clock limit. */
export const TOOL_TIMEOUT_MS = 120_000;
