/**
 * What tokens cost, from a model's list prices (USD per million tokens).
 * Token counts follow llm-client's usage convention: `inputTokens` includes
 * the cached reads and writes, which are priced on their own.
 */
import type { ModelPricing } from "./catalog.ts";

/** Token counts as llm-client's `Usage` carries them. */
export interface TokenCounts {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** Dollars for `usage`, or undefined when the model's prices are unknown. */
export function costOf(usage: TokenCounts, pricing: ModelPricing | undefined): number | undefined {
  if (pricing === undefined) return undefined;
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, (usage.inputTokens ?? 0) - read - write);
  const dollars =
    fresh * pricing.input +
    read * (pricing.cacheRead ?? pricing.input) +
    write * (pricing.cacheWrite ?? pricing.input) +
    (usage.outputTokens ?? 0) * pricing.output;
  return dollars / 1_000_000;
}
