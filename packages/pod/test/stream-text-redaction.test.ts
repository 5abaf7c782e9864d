/**
 * The filter the interactive renderer and stream-json put pod events
 * through: a key split over deltas is masked, any other event first
 * releases what was held back, and a discarded attempt's held text is dropped.
 */
import { clearRegisteredSecrets, registerSecret } from "@yoi/llm-client";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import { createStreamTextRedaction } from "../src/events/stream-text-redaction.ts";

afterEach(() => clearRegisteredSecrets());

const KEY = "ui-Secret-5Hh8Kk2Zz";
const text = (t: string): PodEvent => ({ type: "text_delta", turnIndex: 0, text: t });
const thinking = (t: string): PodEvent => ({ type: "thinking_delta", turnIndex: 0, text: t });

function shownText(events: PodEvent[]): string {
  return events
    .map((e) => (e.type === "text_delta" || e.type === "thinking_delta" ? e.text : `[${e.type}]`))
    .join("");
}

describe("createStreamTextRedaction", () => {
  it("masks a key split over deltas and releases held text before the next event", () => {
    registerSecret(KEY);
    const filter = createStreamTextRedaction();
    const out: PodEvent[] = [];
    for (const e of [
      text("key: "),
      text(KEY.slice(0, 4)),
      text(KEY.slice(4, 11)),
      text(`${KEY.slice(11)} end`),
    ])
      out.push(...filter(e));
    out.push(...filter({ type: "turn_end", turnIndex: 0, stopReason: "end_turn", toolCalls: 0 }));
    expect(shownText(out)).toBe("key: <redacted> end[turn_end]");
    expect(out.at(-1)?.type).toBe("turn_end");
  });

  it("masks a key split over a subagent's deltas, each child on its own", () => {
    registerSecret(KEY);
    const filter = createStreamTextRedaction();
    const child = (callId: string, event: PodEvent): PodEvent =>
      ({ type: "subagent", callId, description: "d", model: "m/x", depth: 1, event }) as PodEvent;
    const out: PodEvent[] = [];
    for (const e of [
      child("a", text(`A ${KEY.slice(0, 6)}`)),
      child("b", text("B says hi ")),
      child("a", text(`${KEY.slice(6)} done`)),
      child("a", { type: "turn_end", turnIndex: 0, stopReason: "end_turn", toolCalls: 0 }),
      child("b", { type: "turn_end", turnIndex: 0, stopReason: "end_turn", toolCalls: 0 }),
    ])
      out.push(...filter(e));
    const of = (id: string) =>
      shownText(out.flatMap((e) => (e.type === "subagent" && e.callId === id ? [e.event as PodEvent] : [])));
    expect(of("a")).toBe("A <redacted> done[turn_end]");
    expect(of("b")).toBe("B says hi [turn_end]");
    expect(JSON.stringify(out)).not.toContain(KEY.slice(0, 6));
  });

  it("ends a thinking block when text starts, and keeps each kind's text apart", () => {
    const filter = createStreamTextRedaction();
    const out = [...filter(thinking("I will ans")), ...filter(text("Answer")), ...filter(text(" here."))];
    out.push(...filter({ type: "run_end", runId: "r", status: "completed", turns: 1, usage: {} }));
    expect(out.map((e) => e.type)).toEqual([
      "thinking_delta", // "I will " as it came
      "thinking_delta", // "ans", released when the text block began
      "text_delta", // "Answer "
      "text_delta", // "here.", released by run_end
      "run_end",
    ]);
    expect(shownText(out.filter((e) => e.type === "thinking_delta"))).toBe("I will ans");
    expect(shownText(out.filter((e) => e.type === "text_delta"))).toBe("Answer here.");
  });

  it("drops the held text of an attempt a retry discarded", () => {
    const filter = createStreamTextRedaction();
    const out = [
      ...filter(text("partial wor")),
      ...filter({ type: "retry", source: "client", attempt: 2, delayMs: 1, reason: "x", discarded: true }),
      ...filter(text("fresh")),
      ...filter({ type: "turn_end", turnIndex: 0, stopReason: "end_turn", toolCalls: 0 }),
    ];
    expect(shownText(out)).toBe("partial [retry]fresh[turn_end]");
  });
});

describe("live tool output", () => {
  const delta = (callId: string, t: string): PodEvent => ({
    type: "tool_output_delta",
    callId,
    name: "bash",
    turnIndex: 0,
    text: t,
  });
  const end = (callId: string): PodEvent => ({
    type: "tool_call_end",
    callId,
    name: "bash",
    batchId: "b",
    callIndex: 0,
    turnIndex: 0,
    isError: false,
    outcome: "ok",
    durationMs: 1,
    preview: "",
    outputBytes: 0,
    fullBytes: 0,
  });
  const shown = (events: PodEvent[], callId: string) =>
    events
      .filter((e) => e.type === "tool_output_delta" && e.callId === callId)
      .map((e) => (e.type === "tool_output_delta" ? e.text : ""))
      .join("");

  it("masks a key split over a command's chunks, per call, and releases the rest before the call's end", () => {
    registerSecret(KEY);
    const filter = createStreamTextRedaction();
    const out: PodEvent[] = [];
    for (const e of [
      delta("a", `token=${KEY.slice(0, 6)}`),
      delta("b", "other call "),
      delta("a", `${KEY.slice(6)} done`),
      delta("b", "still going"),
      end("a"),
    ])
      out.push(...filter(e));
    expect(shown(out, "a")).toBe("token=<redacted> done");
    expect(out.at(-1)?.type).toBe("tool_call_end");
    out.push(...filter(end("b")));
    expect(shown(out, "b")).toBe("other call still going");
    expect(JSON.stringify(out)).not.toContain(KEY.slice(0, 6) + KEY.slice(6));
  });
});
