/**
 * Shapes of history that compaction relies on: tool call/result pairing,
 * the summary-input cleanup
 * (docs/design/context-management.md#shaping-history-for-the-summary), turn
 * boundaries, and the messages compaction inserts.
 */
import type { Item, MessageItem } from "@yoi/llm-client";
import { itemTokens } from "./estimate.ts";
import { totalToolOutputTokens, trimToolOutputs } from "./trim.ts";

/** First line of the summary message compaction inserts; marks it so later compactions recognise it. */
export const SUMMARY_HEADER =
  "[Compacted conversation] The earlier part of this conversation was replaced by this summary to free context.";
/** First line of the retain message compaction inserts. */
export const RETAIN_HEADER = "[Compacted conversation] Information retained verbatim from the earlier part:";

function isSystem(item: Item): boolean {
  return item.type === "message" && item.role === "system";
}

function isUser(item: Item): item is MessageItem {
  return item.type === "message" && item.role === "user";
}

/** Whether an item is a retain or summary message inserted by compaction. */
export function isCompactionMessage(item: Item): boolean {
  if (!isUser(item)) return false;
  const first = item.content[0];
  return (
    first?.type === "text" && (first.text.startsWith(SUMMARY_HEADER) || first.text.startsWith(RETAIN_HEADER))
  );
}

/** Whether an item starts a turn: a user message typed by the user (not one compaction inserted). */
export function startsTurn(item: Item): boolean {
  return isUser(item) && !isCompactionMessage(item);
}

/**
 * Keeps only well-formed tool call/result pairs: a result is kept when its
 * call came before it (and it is the first result for that call); a call is
 * kept when one of its results is kept. Everything else is unchanged. Two
 * linear passes.
 */
export function keepPairedToolItems(items: readonly Item[]): Item[] {
  const seenCalls = new Set<string>();
  const answered = new Set<string>();
  const keepResult = new Array<boolean>(items.length).fill(false);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.type === "tool_call") seenCalls.add(item.callId);
    else if (item.type === "tool_result" && seenCalls.has(item.callId) && !answered.has(item.callId)) {
      answered.add(item.callId);
      keepResult[i] = true;
    }
  }
  const out: Item[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.type === "tool_call" && !answered.has(item.callId)) continue;
    if (item.type === "tool_result" && !keepResult[i]) continue;
    out.push(item);
  }
  return out;
}

/**
 * Drops reasoning items left without the assistant output they belonged to
 * (a thinking block whose tool calls were removed): providers reject an
 * assistant turn made of reasoning only.
 */
export function dropStrandedReasoning(items: readonly Item[]): Item[] {
  const out: Item[] = [];
  let followedByOutput = false; // scanning backwards: does assistant output follow in this group?
  const keep = new Array<boolean>(items.length).fill(true);
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.type === "reasoning") keep[i] = followedByOutput;
    else if (
      item.type === "tool_call" ||
      item.type === "server_tool" ||
      (item.type === "message" && item.role === "assistant")
    )
      followedByOutput = true;
    else followedByOutput = false;
  }
  for (let i = 0; i < items.length; i++) if (keep[i]) out.push(items[i]!);
  return out;
}

/**
 * History shaped for the summary request: the trailing
 * assistant tool calls (no results yet) are removed, so the assistant turn
 * is reduced to its text or dropped when it has none; any other call
 * without a result and any result without its call are dropped too, and
 * reasoning left alone is removed. Without this, the providers reject the
 * request (a tool call must be answered by the next message).
 */
export function prepareForSummary(history: readonly Item[]): Item[] {
  return dropStrandedReasoning(keepPairedToolItems(history));
}

/**
 * Index where the kept tail starts when the last `turns` turns are kept (a
 * turn starts at a user message). `history.length` for 0 turns; 0 when the
 * history has no more turns than that.
 */
export function lastTurnsStart(history: readonly Item[], turns: number): number {
  if (turns <= 0) return history.length;
  let seen = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    if (startsTurn(history[i]!)) {
      seen++;
      if (seen === turns) return i;
    }
  }
  return firstTurnStart(history);
}

function firstTurnStart(history: readonly Item[]): number {
  for (let i = 0; i < history.length; i++) if (startsTurn(history[i]!)) return i;
  return history.length;
}

/**
 * Indexes in `[from, to)` where history may be cut without separating a tool
 * result from its call: the start of an assistant group (an item that is not
 * a tool result, right after a tool result or a user message) with no
 * answered call still open.
 */
export function safeCutPoints(history: readonly Item[], from: number, to: number): number[] {
  const answered = new Set<string>();
  for (let i = from; i < to; i++) {
    const item = history[i]!;
    if (item.type === "tool_result") answered.add(item.callId);
  }
  const open = new Set<string>();
  const cuts: number[] = [];
  for (let i = from; i < to; i++) {
    const item = history[i]!;
    const prev = i > from ? history[i - 1] : undefined;
    if (
      i > from &&
      open.size === 0 &&
      item.type !== "tool_result" &&
      !(item.type === "message" && item.role === "user") &&
      prev !== undefined &&
      (prev.type === "tool_result" || (prev.type === "message" && prev.role === "user"))
    ) {
      cuts.push(i);
    }
    if (item.type === "tool_call" && answered.has(item.callId)) open.add(item.callId);
    else if (item.type === "tool_result") open.delete(item.callId);
  }
  return cuts;
}

/** What compaction keeps verbatim and what it folds into the summary. */
export interface CompactionPlan {
  /**
   * The system messages that lead history (before any other item), kept
   * first. System messages later in history are folded or kept with their
   * turn like any other item.
   */
  system: Item[];
  /** Items the summary replaces. */
  folded: Item[];
  /** Items kept verbatim after the summary (tool outputs in them may be trimmed to their refs). */
  kept: Item[];
  /** Whether folded holds anything besides earlier retain/summary messages. */
  foldsNewItems: boolean;
  /**
   * Ref ids of the tool outputs inside the kept turns that were replaced by
   * their placeholder (`[tool output trimmed; ref=<id>]`) so the turns could
   * stay whole, oldest first. Empty when the turns fit as they were.
   */
  trimmedRefs: string[];
  /**
   * Items of the last `retainLastTurns` turns that had to be folded after
   * all because even with every tool output trimmed the turns did not fit.
   * 0 when the turns were kept whole.
   */
  droppedFromKeptTurns: number;
}

/**
 * Start of the trailing assistant group when it ends with tool calls that
 * have no result yet (the worker is about to run them); `items.length`
 * otherwise. Those calls must stay in history or their results would be
 * orphans.
 */
export function pendingCallsStart(items: readonly Item[]): number {
  let i = items.length;
  if (i === 0 || items[i - 1]!.type !== "tool_call") return items.length;
  while (i > 0) {
    const prev = items[i - 1]!;
    if (
      prev.type === "tool_call" ||
      prev.type === "reasoning" ||
      prev.type === "server_tool" ||
      (prev.type === "message" && prev.role === "assistant")
    )
      i--;
    else break;
  }
  return i;
}

/**
 * Splits history into what compaction folds and what it keeps: the last
 * `retainLastTurns` turns, whole
 * (docs/design/context-management.md#the-compacted-history). When they are
 * larger than `maxKeptTokens`, the tool outputs inside them are trimmed to
 * their refs first, oldest first (the trimming placeholder; the ref stays on
 * the item, so `tool_output_cache` reads them back). Only when the turns still
 * do not fit does the kept part shrink to the turn's user message plus the
 * newest assistant groups that fit, cut at a safe point so every kept result
 * stays next to its call. Tool calls still waiting for their results are always
 * kept.
 */
export function planCompaction(
  history: readonly Item[],
  options: { retainLastTurns: number; maxKeptTokens: number },
): CompactionPlan {
  // Only system messages that lead history (a host's standing instructions)
  // stay first. Later ones are attachments (`[File: <path>]` bodies of @path
  // refs and auto-read): they are folded into the summary with their turn
  // like any other item, or kept in place with a kept turn, so compaction
  // never piles up stale copies of a file and the retain message comes first.
  let leading = 0;
  while (leading < history.length && isSystem(history[leading]!)) leading++;
  const system = history.slice(0, leading);
  let rest = history.slice(leading);
  const pending = pendingCallsStart(rest);
  const start = Math.min(lastTurnsStart(rest, options.retainLastTurns), pending);
  let keptTokens = 0;
  for (let i = start; i < rest.length; i++) keptTokens += itemTokens(rest[i]!);
  let trimmedRefs: string[] = [];
  if (keptTokens > options.maxKeptTokens) {
    // Whole turns before whole outputs: trim the kept tool outputs to their refs.
    const tail = rest.slice(start);
    const toolTokens = totalToolOutputTokens(tail);
    const trim = trimToolOutputs(tail, {
      budgetTokens: Math.max(0, options.maxKeptTokens - (keptTokens - toolTokens)),
      knownTotalTokens: toolTokens,
    });
    if (trim.trimmed.length > 0) {
      trimmedRefs = trim.trimmed;
      rest = [...rest.slice(0, start), ...trim.history];
      keptTokens = 0;
      for (let i = start; i < rest.length; i++) keptTokens += itemTokens(rest[i]!);
    }
  }
  let kept = rest.slice(start);
  let folded = rest.slice(0, start);
  let droppedFromKeptTurns = 0;
  if (keptTokens > options.maxKeptTokens && start < pending) {
    // Still too large: keep the user's own words of the current turn, then the newest groups that fit.
    const lead = startsTurn(rest[start]!) ? rest[start]! : undefined;
    const budget = options.maxKeptTokens - (lead ? itemTokens(lead) : 0);
    let tail = 0;
    for (let i = pending; i < rest.length; i++) tail += itemTokens(rest[i]!);
    let cut = pending;
    const cuts = safeCutPoints(rest, start, pending);
    for (let c = cuts.length - 1; c >= 0; c--) {
      const at = cuts[c]!;
      let groupTokens = 0;
      for (let i = at; i < cut; i++) groupTokens += itemTokens(rest[i]!);
      if (tail + groupTokens > budget) break;
      tail += groupTokens;
      cut = at;
    }
    if (cut > start) {
      folded = rest.slice(0, cut);
      kept = lead ? [lead, ...rest.slice(cut)] : rest.slice(cut);
      droppedFromKeptTurns = cut - start - (lead ? 1 : 0);
      // A trimmed output that was folded after all is no longer "kept trimmed".
      const keptRefs = new Set<string>();
      for (const item of kept)
        if (item.type === "tool_result" && item.outputRef) keptRefs.add(item.outputRef.id);
      trimmedRefs = trimmedRefs.filter((id) => keptRefs.has(id));
    }
  }
  const foldsNewItems = folded.some((item) => !isCompactionMessage(item));
  return { system, folded, kept, foldsNewItems, trimmedRefs, droppedFromKeptTurns };
}

/** The summary message of compacted history (a user message). */
export function summaryMessage(summary: string): MessageItem {
  return {
    type: "message",
    role: "user",
    content: [{ type: "text", text: `${SUMMARY_HEADER}\n\n<summary>\n${summary}\n</summary>` }],
  };
}

/** The retain message of compacted history (a user message placed first). */
export function retainMessage(retain: string): MessageItem {
  return {
    type: "message",
    role: "user",
    content: [{ type: "text", text: `${RETAIN_HEADER}\n\n<retain>\n${retain}\n</retain>` }],
  };
}
