/**
 * Reasoning is replayed only to the provider that produced it (a signature
 * or encrypted content is meaningless, or rejected, elsewhere). For an
 * outside adapter: the history without other providers' reasoning, and the
 * `dropped_reasoning` warning the built-in adapters give for the same case.
 */
import type { Item, ProviderName, ReasoningItem } from "../item.ts";
import type { ClientWarning } from "../request.ts";

export interface ForeignReasoningResult {
  /** `items` without reasoning from other providers (the same array when nothing was dropped). */
  items: readonly Item[];
  /** Set when reasoning with content was dropped (empty reasoning items are dropped silently). */
  warning?: ClientWarning;
}

/** Drops the reasoning items of `items` that a provider other than `provider` produced. */
export function dropForeignReasoning(provider: ProviderName, items: readonly Item[]): ForeignReasoningResult {
  const dropped: ReasoningItem[] = [];
  const kept = items.filter((item) => {
    if (item.type !== "reasoning" || item.provider === provider) return true;
    dropped.push(item);
    return false;
  });
  if (dropped.length === 0) return { items };
  const withContent = dropped.filter(
    (r) => r.text !== "" || (r.summary?.some((s) => s !== "") ?? false) || r.encryptedContent !== undefined,
  );
  if (withContent.length === 0) return { items: kept };
  const from = [...new Set(withContent.map((r) => r.provider))].join(", ");
  return {
    items: kept,
    warning: {
      code: "dropped_reasoning",
      message: `${provider}: ${withContent.length} reasoning item(s) from ${from} were not sent (only the provider that produced reasoning can take it back)`,
      detail: { count: withContent.length },
    },
  };
}
