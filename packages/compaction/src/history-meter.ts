/**
 * Running token estimates of a history that grows by appending, so a
 * checkpoint costs O(items added since the last one) instead of O(history).
 */
import type { Item } from "@yoi/llm-client";
import { itemTokens } from "./estimate.ts";
import { toolOutputTokens } from "./trim.ts";

export interface HistoryTotals {
  /** Estimated tokens of every item. */
  items: number;
  /** Estimated tokens of tool outputs only (what the cache budget covers). */
  toolOutputs: number;
}

export class HistoryMeter {
  #length = 0;
  #last: Item | undefined;
  #items = 0;
  #tools = 0;
  /** Where the next trim starts looking; reset whenever history is replaced by someone else. */
  trimFrontier = 0;

  /** Totals for `history`; incremental when `history` extends the last one measured. */
  measure(history: readonly Item[]): HistoryTotals {
    const extends_ =
      history.length >= this.#length && (this.#length === 0 || history[this.#length - 1] === this.#last);
    if (!extends_) return this.reset(history);
    for (let i = this.#length; i < history.length; i++) this.#add(history[i]!);
    this.#length = history.length;
    this.#last = history[history.length - 1];
    return { items: this.#items, toolOutputs: this.#tools };
  }

  /** Measures `history` from scratch (after a replacement). Per-item values are memoized, so this is cheap. */
  reset(history: readonly Item[]): HistoryTotals {
    this.trimFrontier = 0;
    this.#items = 0;
    this.#tools = 0;
    for (const item of history) this.#add(item);
    this.#length = history.length;
    this.#last = history[history.length - 1];
    return { items: this.#items, toolOutputs: this.#tools };
  }

  /**
   * Re-anchors on `history` after this policy replaced some items in place
   * (trimming): same length, totals lowered by what the replacement saved.
   * O(1), so trimming does not re-measure the whole history.
   */
  replaced(
    history: readonly Item[],
    saved: { items: number; toolOutputs: number },
    trimFrontier: number,
  ): HistoryTotals {
    this.#items -= saved.items;
    this.#tools -= saved.toolOutputs;
    this.#length = history.length;
    this.#last = history[history.length - 1];
    this.trimFrontier = trimFrontier;
    return { items: this.#items, toolOutputs: this.#tools };
  }

  #add(item: Item): void {
    this.#items += itemTokens(item);
    if (item.type === "tool_result") this.#tools += toolOutputTokens(item);
  }
}
