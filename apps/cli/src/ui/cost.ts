/**
 * What tokens cost, from the catalog's list prices (USD per million
 * tokens). Usage follows llm-client's convention: `inputTokens` includes
 * the cached reads and writes, which are priced on their own.
 */
import type { Usage } from "@yoi/llm-client";
import type { ModelPricing } from "@yoi/manifest";

/** Dollars for `usage`, or undefined when the model's prices are unknown. */
export function costOf(usage: Usage, pricing: ModelPricing | undefined): number | undefined {
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

/** `$0.0042`, `$0.12`, `$3.40`; `$?` when unknown. */
export function formatCost(dollars: number | undefined): string {
  if (dollars === undefined) return "$?";
  if (dollars === 0) return "$0";
  if (dollars < 0.01) return `$${dollars.toFixed(4)}`;
  if (dollars < 1) return `$${dollars.toFixed(3)}`;
  return `$${dollars.toFixed(2)}`;
}
