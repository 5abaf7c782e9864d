/**
 * Token estimates of history items by the bytes/4 rule
 * (docs/design/context-management.md#budget).
 */
import type { Item } from "@yoi/llm-client";
import { estimateTokens } from "@yoi/manifest";

/** Estimated cost of one image part (providers bill roughly 1-2k tokens for a typical screenshot). */
export const IMAGE_TOKEN_ESTIMATE = 1600;
/** Per-item overhead of roles, ids and framing. */
const ITEM_OVERHEAD_TOKENS = 4;

/**
 * Estimated tokens of one item. Not memoized: the policy measures each item
 * once as it is appended (`HistoryMeter`); whole-history passes happen only
 * when compaction runs.
 */
export function itemTokens(item: Item): number {
  let tokens = ITEM_OVERHEAD_TOKENS;
  switch (item.type) {
    case "message":
      for (const part of item.content)
        tokens += part.type === "text" ? estimateTokens(part.text) : IMAGE_TOKEN_ESTIMATE;
      break;
    case "tool_call":
      tokens += estimateTokens(item.name) + estimateTokens(item.arguments);
      break;
    case "tool_result":
      tokens += estimateTokens(item.output);
      break;
    case "reasoning":
      tokens += estimateTokens(item.text);
      for (const s of item.summary ?? []) tokens += estimateTokens(s);
      break;
    case "server_tool":
      // The provider counts what it sends back (Anthropic's search results, encrypted, go back whole).
      tokens +=
        estimateTokens(item.arguments) + estimateTokens(JSON.stringify(item.providerData ?? item.sources));
      break;
  }
  return tokens;
}

/** Estimated tokens of `items[from..to)`. */
export function itemsTokens(items: readonly Item[], from = 0, to = items.length): number {
  let total = 0;
  for (let i = from; i < to; i++) total += itemTokens(items[i]!);
  return total;
}
