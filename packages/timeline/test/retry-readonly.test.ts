/**
 * A client retry that discards the broken attempt's output resets what the
 * turn collector holds (no repeated text); and events reach handlers typed
 * read-only, so one handler cannot change what the next one sees.
 */
import type { UsageEvent } from "@yoi/llm-client";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createTurnCollector, Timeline } from "../src/index.ts";
import type { DeepReadonly, KindEvent } from "../src/kinds.ts";
import { asStream, ev } from "./helpers.ts";

describe("retry events", () => {
  it("a discarded attempt's blocks are dropped; usage is kept", async () => {
    const timeline = new Timeline();
    const turn = createTurnCollector();
    turn.register(timeline);
    await timeline.consume(
      asStream([
        ev.started(),
        ev.usage({ inputTokens: 10 }),
        ev.textStart(0),
        ev.text(0, "Hel"),
        ev.abort(0, "text", "incomplete_stream"),
        {
          type: "retry",
          attempt: 2,
          maxAttempts: 4,
          delayMs: 1,
          code: "incomplete_stream",
          message: "cut",
          discarded: true,
        },
        ev.textStart(0),
        ev.text(0, "Hello"),
        ev.textStop(0),
        ev.completed(),
      ]),
    );
    const result = turn.result();
    expect(result.text).toBe("Hello");
    expect(result.aborted).toEqual([]);
    expect(result.status).toBe("completed");
    expect(result.usage).toEqual({ inputTokens: 10 });
  });

  it("a retry before any output keeps the collector as it is", async () => {
    const timeline = new Timeline();
    const seen: number[] = [];
    timeline.on("retry", { name: "probe", onEvent: (e) => seen.push(e.attempt) });
    const turn = createTurnCollector();
    turn.register(timeline);
    await timeline.consume(
      asStream([
        ev.started(),
        {
          type: "retry",
          attempt: 2,
          maxAttempts: 4,
          delayMs: 1,
          code: "overloaded",
          message: "busy",
          discarded: false,
        },
        ev.textStart(0),
        ev.text(0, "ok"),
        ev.textStop(0),
        ev.completed(),
      ]),
    );
    expect(seen).toEqual([2]);
    expect(turn.result().text).toBe("ok");
  });
});

describe("read-only events", () => {
  it("handlers receive events typed read-only all the way down", () => {
    const timeline = new Timeline();
    timeline.on("usage", {
      name: "mutator",
      onEvent(event) {
        // @ts-expect-error: a handler cannot change what the next handler sees
        event.usage.inputTokens = 0;
      },
    });
    timeline.on("text", {
      name: "block-mutator",
      onEvent(_scope, event) {
        // @ts-expect-error: block lifecycle events are read-only too
        if (event.phase === "delta") event.text = "";
      },
    });
    // Compile-time checks (the @ts-expect-error lines above fail the typecheck if mutation becomes legal).
    expectTypeOf<KindEvent<"usage">>().toEqualTypeOf<DeepReadonly<UsageEvent>>();
  });
});
