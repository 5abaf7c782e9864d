/**
 * Trimming of tool outputs over the context budget (seed 004 1.7): the
 * oldest outputs are replaced by `[tool output trimmed; ref=<id>]`, the
 * newest are kept, and the ref stays on the item so the cache tools can
 * read the output back.
 */
import type { Item, ToolResultItem } from "@yoi/llm-client";
import { estimateTokens } from "@yoi/manifest";

/** The placeholder a trimmed tool output is replaced by; adapters send it as the result text. */
export function trimPlaceholder(refId: string): string {
  return `[tool output trimmed; ref=${refId}]`;
}

/** Whether a tool result has been trimmed to its placeholder. */
export function isTrimmed(item: ToolResultItem): boolean {
  return item.outputRef !== undefined && item.output === trimPlaceholder(item.outputRef.id);
}

const tokenCache = new WeakMap<ToolResultItem, number>();

/**
 * Estimated tokens of a tool result's in-context output (bytes/4). Memoized
 * per item object: items are immutable once in history, so a checkpoint
 * re-reads a number instead of re-measuring every string.
 */
export function toolOutputTokens(item: ToolResultItem): number {
  let tokens = tokenCache.get(item);
  if (tokens === undefined) {
    tokens = estimateTokens(item.output);
    tokenCache.set(item, tokens);
  }
  return tokens;
}

/** Estimated tokens of every tool output in `history` (trimmed ones count as their placeholder). */
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
    const saved = toolOutputTokens(item) - toolOutputTokens(next);
    if (saved <= 0) continue;
    out ??= history.slice();
    out[i] = next;
    total -= saved;
    trimmed.push(item.outputRef.id);
    trimmedIndexes.push(i);
  }
  return { history: out ?? history, trimmed, trimmedIndexes, frontier: i, totalBefore, totalAfter: total };
}
