/**
 * Streamed text with secrets masked even when a secret arrives split over
 * several `text_delta` / `thinking_delta` events: every place that prints
 * deltas (stream-json, the interactive renderer) passes pod events through
 * this filter first. Deltas come out re-cut (the end that could start a
 * secret waits for the next delta); any other event ends the block and
 * releases what was held, before the event itself.
 */
import { StreamRedactor } from "@yoi/llm-client";
import type { PodEvent } from "@yoi/pod";

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
