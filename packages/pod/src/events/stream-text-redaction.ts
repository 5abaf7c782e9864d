/**
 * Streamed text with secrets masked even when a secret arrives split over
 * several `text_delta` / `thinking_delta` events: every place that prints
 * deltas (stream-json, `query()`, the interactive renderer) passes pod events through
 * this filter first. Deltas come out re-cut (the end that could start a
 * secret waits for the next delta); any other event ends the block and
 * releases what was held, before the event itself. A running tool's live
 * output (`tool_output_delta`) has a redactor per call, released when that
 * call ends, so parallel calls never mix and a key split over two chunks of
 * a command's output is masked like one in its final result.
 */
import { StreamRedactor } from "@yoi/llm-client";
import type { PodEvent } from "./pod-events.ts";

type DeltaKind = "text_delta" | "thinking_delta";

/** Returns a filter: pod event in, the events to show (in order) out. */
export function createStreamTextRedaction(): (event: PodEvent) => PodEvent[] {
  const redactors: Record<DeltaKind, StreamRedactor> = {
    text_delta: new StreamRedactor(),
    thinking_delta: new StreamRedactor(),
  };
  let turnIndex = 0;
  // Each subagent (task call) streams its own text: one filter per child, so a key split over its deltas is held too.
  const children = new Map<string, (event: PodEvent) => PodEvent[]>();
  const tools = new Map<string, { redactor: StreamRedactor; name: string; turnIndex: number }>();
  const flush = (kind: DeltaKind, out: PodEvent[]) => {
    const text = redactors[kind].flush();
    if (text !== "") out.push({ type: kind, turnIndex, text });
  };
  return (event) => {
    const out: PodEvent[] = [];
    if (event.type === "subagent") {
      let child = children.get(event.callId);
      if (child === undefined) {
        child = createStreamTextRedaction();
        children.set(event.callId, child);
      }
      for (const inner of child(event.event)) out.push({ ...event, event: inner as typeof event.event });
      return out;
    }
    if (event.type === "tool_output_delta") {
      let tool = tools.get(event.callId);
      if (tool === undefined) {
        tool = { redactor: new StreamRedactor(), name: event.name, turnIndex: event.turnIndex };
        tools.set(event.callId, tool);
      }
      const text = tool.redactor.push(event.text);
      if (text !== "") out.push({ ...event, text });
      return out;
    }
    if (event.type === "tool_call_end") {
      const tool = tools.get(event.callId);
      tools.delete(event.callId);
      const text = tool?.redactor.flush() ?? "";
      if (tool !== undefined && text !== "")
        out.push({
          type: "tool_output_delta",
          callId: event.callId,
          name: tool.name,
          turnIndex: tool.turnIndex,
          text,
        });
    }
    if (event.type === "text_delta" || event.type === "thinking_delta") {
      flush(event.type === "text_delta" ? "thinking_delta" : "text_delta", out);
      turnIndex = event.turnIndex;
      const text = redactors[event.type].push(event.text);
      if (text !== "") out.push({ ...event, text });
      return out;
    }
    if (event.type === "retry" && event.discarded) {
      // The streamed text is void: what is held back is never shown.
      redactors.text_delta.reset();
      redactors.thinking_delta.reset();
    } else {
      flush("thinking_delta", out);
      flush("text_delta", out);
    }
    out.push(event);
    return out;
  };
}
