import type { Item, ToolCallItem, ToolResultItem } from "@yoi/llm-client";
import { assistantMessage, userMessage } from "@yoi/llm-client";

export const user = userMessage;
export const assistant = assistantMessage;

export function call(callId: string, name = "read", args: Record<string, unknown> = {}): ToolCallItem {
  return { type: "tool_call", callId, name, arguments: JSON.stringify(args) };
}

export function result(callId: string, output: string, refId?: string, name = "read"): ToolResultItem {
  return {
    type: "tool_result",
    callId,
    name,
    output,
    isError: false,
    ...(refId ? { outputRef: { id: refId } } : {}),
  };
}

/** A fake UUID-shaped ref id, distinct per n. */
export function ref(n: number): string {
  return `00000000-0000-7000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** n tool rounds after one user message, each result of `bytes` bytes with ref(i). */
export function toolRounds(n: number, bytes: number): Item[] {
  const items: Item[] = [user("start")];
  for (let i = 0; i < n; i++) {
    items.push(call(`c${i}`));
    items.push(result(`c${i}`, `${i}:`.padEnd(bytes, "x"), ref(i)));
  }
  return items;
}
