/**
 * Trimming of tool outputs over the context budget
 * (docs/design/context-management.md#trimming): the oldest outputs are replaced
 * by `[tool output trimmed; ref=<id>]`, the newest are kept, and the ref stays
 * on the item so the cache tools can read the output back.
 */
import type { Item, ToolResultItem } from "@yoi/llm-client";
import { estimateTokens } from "@yoi/manifest";

/** The placeholder a trimmed tool output is replaced by; adapters send it as the result text. */
export function trimPlaceholder(refId: string): string {
  return `[tool output trimmed; ref=${refId}]`;
}

/** Whether a tool result has been trimmed to its placeholder. */
export function isTrimmed(item: ToolResultItem): boolean {
  const ref = item.outputRef;
  // Length first: the common untrimmed case never builds the placeholder string.
  return (
    ref !== undefined && item.output.length === ref.id.length + 27 && item.output === trimPlaceholder(ref.id)
  );
}

/**
 * Estimated tokens (bytes/4) of a tool output the budget counts: 0 once it
 * is trimmed, since a placeholder is no longer a tool output and cannot be
 * trimmed further (what placeholders add up to is compaction's business).
 * Not memoized: the policy measures each item once as it is appended
 * (`HistoryMeter`), and a per-object cache costs more than it saves.
 */
export function toolOutputTokens(item: ToolResultItem): number {
  return isTrimmed(item) ? 0 : estimateTokens(item.output);
}

/** Estimated tokens of the tool outputs in `history` still shown in full (trimmed ones count 0). */
export function totalToolOutputTokens(history: readonly Item[], from = 0): number {
  let total = 0;
  for (let i = from; i < history.length; i++) {
    const item = history[i]!;
    if (item.type === "tool_result") total += toolOutputTokens(item);
  }
  return total;
}

export interface TrimOptions {
  /** Trimming starts when the total exceeds this many estimated tokens. */
  budgetTokens: number;
  /**
   * Trim down to this total once trimming has started. Default
   * `budgetTokens`. A lower target trims in batches, so the prompt prefix
   * (and the provider's prompt cache) changes less often.
   */
  targetTokens?: number;
  /** Total already known for `history` (skips the first pass). */
  knownTotalTokens?: number;
  /**
   * Index to start looking for trimmable outputs at: a previous result's
   * `frontier` (everything before it is already trimmed or cannot be).
   * Default 0.
   */
  from?: number;
}

export interface TrimResult {
  /** The new history; the same array when nothing was trimmed. */
  history: readonly Item[];
  /** Ref ids of the outputs trimmed now, oldest first. */
  trimmed: string[];
  /** Their indexes in history. */
  trimmedIndexes: number[];
  /** Where the next trim may start looking (see `TrimOptions.from`). */
  frontier: number;
  /** Estimated tool output tokens before and after. */
  totalBefore: number;
  totalAfter: number;
}

/**
 * Trims the oldest tool outputs until the estimated total is within the
 * target. Only outputs with a ref can be trimmed (anything else could not be
 * read back); the last batch of results (those after the last non-result
 * item: the model has not seen them yet) is never trimmed. One linear pass;
 * the history is copied once, only if something changes.
 */
export function trimToolOutputs(history: readonly Item[], options: TrimOptions): TrimResult {
  const totalBefore = options.knownTotalTokens ?? totalToolOutputTokens(history);
  if (totalBefore <= options.budgetTokens) {
    return {
      history,
      trimmed: [],
      trimmedIndexes: [],
      frontier: options.from ?? 0,
      totalBefore,
      totalAfter: totalBefore,
    };
  }
  const target = Math.min(options.targetTokens ?? options.budgetTokens, options.budgetTokens);
  let protectedFrom = history.length;
  while (protectedFrom > 0 && history[protectedFrom - 1]!.type === "tool_result") protectedFrom--;

  let total = totalBefore;
  let out: Item[] | undefined;
  const trimmed: string[] = [];
  const trimmedIndexes: number[] = [];
  let i = Math.max(0, options.from ?? 0);
  for (; i < protectedFrom && total > target; i++) {
    const item = history[i]!;
    if (item.type !== "tool_result" || item.outputRef === undefined || isTrimmed(item)) continue;
    const placeholder = trimPlaceholder(item.outputRef.id);
    const next: ToolResultItem = { ...item, output: placeholder };
    const saved = toolOutputTokens(item);
    if (saved <= 0) continue;
    out ??= history.slice();
    out[i] = next;
    total -= saved;
    trimmed.push(item.outputRef.id);
    trimmedIndexes.push(i);
  }
  return { history: out ?? history, trimmed, trimmedIndexes, frontier: i, totalBefore, totalAfter: total };
}
