import type { Event } from "@yoi/llm-client";

/** Small builders for hand-written event streams. */
export const ev = {
  started: (): Event => ({ type: "status", status: "started" }),
  completed: (stopReason: "end_turn" | "tool_use" | "max_tokens" = "end_turn"): Event => ({
    type: "status",
    status: "completed",
    stopReason,
  }),
  textStart: (index: number): Event => ({ type: "block_start", index, block: "text" }),
  text: (index: number, text: string): Event => ({ type: "block_delta", index, delta: "text", text }),
  textStop: (index: number): Event => ({ type: "block_stop", index, block: "text" }),
  thinkingStart: (index: number): Event => ({ type: "block_start", index, block: "thinking" }),
  thinking: (index: number, text: string): Event => ({ type: "block_delta", index, delta: "thinking", text }),
  toolStart: (index: number, id: string, name: string): Event => ({
    type: "block_start",
    index,
    block: "tool_use",
    id,
    name,
  }),
  json: (index: number, text: string): Event => ({ type: "block_delta", index, delta: "input_json", text }),
  toolStop: (index: number): Event => ({ type: "block_stop", index, block: "tool_use" }),
  abort: (index: number, block: "text" | "thinking" | "tool_use", reason: string): Event => ({
    type: "block_abort",
    index,
    block,
    reason,
  }),
  usage: (usage: Record<string, number>): Event => ({ type: "usage", usage }),
  ping: (): Event => ({ type: "ping" }),
};

export async function* asStream(events: Event[]): AsyncIterable<Event> {
  for (const e of events) yield e;
}
