/**
 * Tool-call pairing, the one rule every provider enforces on history: each
 * tool call of an assistant turn is answered by a result right after that
 * turn, and no result answers a call that is not there. A history that
 * breaks it (an interrupted turn, a crash between call and result, a
 * compaction that cut a call) is repaired here, once, for every adapter,
 * instead of failing with a 400 from the provider.
 */
import type { Item, MessageItem, ToolCallItem, ToolResultItem } from "./item.ts";

/** The result recorded for a tool call that never got one. */
export const MISSING_RESULT_TEXT = "No result: the tool call was interrupted before the tool returned.";

export interface PairingRepair {
  kind: "missing_result" | "orphan_result" | "duplicate_result" | "moved_result";
  callId: string;
}

export interface PairedHistory {
  items: Item[];
  /** What was changed; empty when the history was already valid (then `items` is the input array). */
  repairs: PairingRepair[];
}

function isAssistantSide(item: Item): boolean {
  return (
    item.type === "tool_call" ||
    item.type === "reasoning" ||
    item.type === "server_tool" ||
    (item.type === "message" && item.role === "assistant")
  );
}

/**
 * Returns history where every assistant turn's tool calls are followed,
 * before anything else, by exactly one result each (in the order they
 * were recorded; synthesized ones last). Missing
 * results become error results ({@link MISSING_RESULT_TEXT}); results whose
 * call is not in the turn before them become a user message that keeps
 * their text (the model still sees what the tool said).
 */
export function pairToolResults(items: Item[], checked?: PairingCheck): PairedHistory {
  if (checked === undefined ? isWellPaired(items) : checked.wellPaired(items)) return { items, repairs: [] };
  const out: Item[] = [];
  const repairs: PairingRepair[] = [];
  let i = 0;
  while (i < items.length) {
    // One assistant run, then the user side up to the next assistant run.
    const calls: ToolCallItem[] = [];
    while (i < items.length && isAssistantSide(items[i]!)) {
      const item = items[i]!;
      if (item.type === "tool_call") calls.push(item);
      out.push(item);
      i++;
    }
    const userSide: Item[] = [];
    while (i < items.length && !isAssistantSide(items[i]!)) userSide.push(items[i++]!);

    const wanted = new Map<string, ToolCallItem>();
    for (const call of calls) wanted.set(call.callId, call);
    const results = new Map<string, ToolResultItem>();
    const rest: Item[] = [];
    for (const item of userSide) {
      if (item.type !== "tool_result") {
        rest.push(item);
        continue;
      }
      if (!wanted.has(item.callId)) {
        repairs.push({ kind: "orphan_result", callId: item.callId });
        rest.push(orphanAsMessage(item));
      } else if (results.has(item.callId)) {
        repairs.push({ kind: "duplicate_result", callId: item.callId });
      } else {
        if (rest.length > 0) repairs.push({ kind: "moved_result", callId: item.callId });
        results.set(item.callId, item);
      }
    }
    out.push(...results.values());
    for (const call of calls) {
      if (!results.has(call.callId)) {
        repairs.push({ kind: "missing_result", callId: call.callId });
        out.push({
          type: "tool_result",
          callId: call.callId,
          name: call.name,
          output: MISSING_RESULT_TEXT,
          isError: true,
        });
      }
    }
    out.push(...rest);
  }
  return { items: out, repairs };
}

/**
 * Already valid: after each assistant run come exactly the results of its
 * calls (in any order: parallel tools finish in any order and every API
 * accepts that), before any other message.
 */
function isWellPaired(items: readonly Item[]): boolean {
  const scan = newScan();
  return scanPairing(items, 0, scan) && scan.pending.length === 0;
}

/** Where a pairing scan stands after some items: the open calls of the current assistant run, and whether results follow it. */
interface PairingScan {
  // An array, not a Set: a run holds a few calls, and a Set that grows and empties again for every turn
  // reallocated its table each time.
  pending: string[];
  inResults: boolean;
}

const newScan = (): PairingScan => ({ pending: [], inResults: false });

/** Scans `items[from..]` on from `scan`; false as soon as the pairing is broken. */
function scanPairing(items: readonly Item[], from: number, scan: PairingScan): boolean {
  const { pending } = scan;
  for (let i = from; i < items.length; i++) {
    const item = items[i]!;
    if (isAssistantSide(item)) {
      if (scan.inResults) {
        if (pending.length > 0) return false;
        scan.inResults = false;
      }
      // A call id given twice is open once, as in a set: its second result is then a duplicate.
      if (item.type === "tool_call" && !pending.includes(item.callId)) pending.push(item.callId);
      continue;
    }
    if (item.type === "tool_result") {
      const at = pending.indexOf(item.callId);
      if (at < 0) return false;
      // Order does not matter here: move the last open call into the answered one's place.
      pending[at] = pending[pending.length - 1]!;
      pending.pop();
      scan.inResults = true;
      continue;
    }
    // A user/system message: every call must already be answered.
    if (pending.length > 0) return false;
    scan.inResults = false;
  }
  return true;
}

/**
 * The pairing check of the history a client sent last, kept for its next
 * request. History only grows between compactions, so the next request's
 * items usually begin with the checked ones (the same objects, checked one
 * by one): only the items after them are scanned, instead of the whole
 * history before every model call. Any other history is scanned whole.
 */
export class PairingCheck {
  #items: readonly Item[] = [];
  /** The scan after `#items`; undefined when they broke the pairing (a repair follows, and the next check starts over). */
  #scan: PairingScan | undefined;

  /** Whether `items` is well paired (as {@link pairToolResults} decides), scanning only what is new. */
  wellPaired(items: readonly Item[]): boolean {
    const kept = this.#scan !== undefined && startsWith(items, this.#items);
    const scan = kept
      ? { pending: this.#scan!.pending.slice(), inResults: this.#scan!.inResults }
      : newScan();
    const ok = scanPairing(items, kept ? this.#items.length : 0, scan);
    this.#items = ok ? items.slice() : [];
    this.#scan = ok ? scan : undefined;
    return ok && scan.pending.length === 0;
  }
}

/** Whether `items` begins with the items of `prefix`, the same objects in the same order (and `prefix` is not empty). */
export function startsWith(items: readonly Item[], prefix: readonly Item[]): boolean {
  if (prefix.length === 0 || items.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (items[i] !== prefix[i]) return false;
  return true;
}

function orphanAsMessage(result: ToolResultItem): MessageItem {
  const name = result.name ? ` (${result.name})` : "";
  const status = result.isError ? " failed" : "";
  return {
    type: "message",
    role: "user",
    content: [
      {
        type: "text",
        text: `[tool result${name} for call ${result.callId}${status}; its call is no longer in the history]\n${result.output}`,
      },
    ],
  };
}
