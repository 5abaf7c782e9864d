import type { Usage } from "@yoi/llm-client";

/**
 * Token usage of one model call
 * (docs/design/context-management.md#token-usage):
 * `totalTokens = inputTokens + cacheCreationTokens + cacheReadTokens + outputTokens`.
 *
 * Unlike llm-client's `Usage`, `inputTokens` here is the UNCACHED part of the
 * prompt only, so the four parts do not overlap and `totalTokens` is the
 * real size of the context after the call (prompt + answer).
 */
export interface TokenUsage {
  /** Prompt tokens neither read from nor written to the provider's cache. */
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens written to the cache (Anthropic `cache_creation_input_tokens`). */
  cacheCreationTokens: number;
  /** Prompt tokens read from the cache. */
  cacheReadTokens: number;
  /** input + cache creation + cache read + output. */
  totalTokens: number;
}

/**
 * Builds a `TokenUsage` from llm-client's `Usage`, whose `inputTokens`
 * already includes the cached tokens: the uncached input is
 * `inputTokens - cacheReadTokens - cacheWriteTokens` (never below 0), so the
 * total counts every prompt token exactly once. Missing fields count as 0.
 */
export function tokenUsageFromUsage(usage: Usage | undefined): TokenUsage {
  const cacheRead = nonNegative(usage?.cacheReadTokens);
  const cacheCreation = nonNegative(usage?.cacheWriteTokens);
  const output = nonNegative(usage?.outputTokens);
  const promptTotal = nonNegative(usage?.inputTokens);
  // A provider that reports cache numbers but no input still had at least those prompt tokens.
  const input = Math.max(0, promptTotal - cacheRead - cacheCreation);
  return {
    inputTokens: input,
    outputTokens: output,
    cacheCreationTokens: cacheCreation,
    cacheReadTokens: cacheRead,
    totalTokens: input + cacheCreation + cacheRead + output,
  };
}

function nonNegative(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}
