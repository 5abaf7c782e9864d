/** Questions about the tail of a history, answered by scanning back only over the last response. */
import type { Item, ToolCallItem } from "@yoi/llm-client";

export interface PendingCall {
  item: ToolCallItem;
  /** Position among the tool calls of its response. */
  callIndex: number;
  /** Number of tool calls in that response. */
  batchSize: number;
}

/**
 * Tool calls of the last assistant response that have no result yet, in
 * call order. Scans back over that response only.
 */
export function pendingToolCalls(history: readonly Item[]): PendingCall[] {
  const answered = new Set<string>();
  const calls: ToolCallItem[] = [];
  let i = history.length - 1;
  // Results of the last response come after its calls.
  for (; i >= 0; i--) {
    const item = history[i]!;
    if (item.type !== "tool_result") break;
    answered.add(item.callId);
  }
  // The response itself: reasoning, assistant text and tool calls, back to the previous input.
  for (; i >= 0; i--) {
    const item = history[i]!;
    if (item.type === "tool_result" || (item.type === "message" && item.role !== "assistant")) break;
    if (item.type === "tool_call") calls.push(item);
  }
  calls.reverse();
  const pending: PendingCall[] = [];
  calls.forEach((item, callIndex) => {
    if (!answered.has(item.callId)) pending.push({ item, callIndex, batchSize: calls.length });
  });
  return pending;
}

/** Whether the model owes an answer: the history ends with input to it rather than with its own output. */
export function needsAnswer(history: readonly Item[]): boolean {
  const last = history[history.length - 1];
  if (!last) return false;
  if (last.type === "tool_result") return true;
  if (last.type === "message") return last.role !== "assistant";
  return false;
}
