import { describe, expect, it } from "vitest";
import { createTurnCollector, Timeline } from "../src/index.ts";
import { asStream, ev } from "./helpers.ts";

describe("createTurnCollector", () => {
  it("orders blocks by start, parses arguments, merges usage and keeps the terminal status", async () => {
    const timeline = new Timeline();
    const turn = createTurnCollector();
    turn.register(timeline);
    await timeline.consume(
      asStream([
        ev.started(),
        ev.usage({ inputTokens: 10, outputTokens: 1 }),
        { type: "block_start", index: 0, block: "thinking" },
        ev.thinking(0, "let me "),
        ev.thinking(0, "think"),
        {
          type: "block_stop",
          index: 0,
          block: "thinking",
          replay: { provider: "anthropic", signature: "sig" },
        },
        ev.textStart(1),
        ev.text(1, "Hello"),
        ev.text(1, " world"),
        ev.textStop(1),
        ev.toolStart(2, "call_a", "read"),
        ev.toolStart(3, "call_b", "grep"),
        ev.json(3, '{"pattern":'),
        ev.json(2, '{"path":"a.txt"}'),
        ev.json(3, '"x"}'),
        ev.toolStop(3),
        ev.toolStop(2),
        ev.toolStart(4, "call_c", "now"),
        ev.toolStop(4),
        ev.usage({ outputTokens: 42 }),
        ev.completed("tool_use"),
      ]),
    );
    const result = turn.result();
    expect(result.blocks).toEqual([
      {
        kind: "thinking",
        index: 0,
        text: "let me think",
        replay: { provider: "anthropic", signature: "sig" },
      },
      { kind: "text", index: 1, text: "Hello world" },
      {
        kind: "tool_call",
        index: 2,
        id: "call_a",
        name: "read",
        argumentsJson: '{"path":"a.txt"}',
        args: { path: "a.txt" },
      },
      {
        kind: "tool_call",
        index: 3,
        id: "call_b",
        name: "grep",
        argumentsJson: '{"pattern":"x"}',
        args: { pattern: "x" },
      },
      {
        kind: "tool_call",
        index: 4,
        id: "call_c",
        name: "now",
        argumentsJson: "{}",
        args: {},
        note: "the model sent no arguments; using {}",
      },
    ]);
    expect(result.text).toBe("Hello world");
    expect(result.toolCalls.map((c) => c.id)).toEqual(["call_a", "call_b", "call_c"]);
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 42 });
    expect(result.stopReason).toBe("tool_use");
    expect(result.status).toBe("completed");
    expect(result.aborted).toEqual([]);
    expect(result.errors).toEqual([]);
    expect(timeline.handlerErrors).toEqual([]);
  });

  it("leaves aborted tool calls out of blocks and keeps partial text marked", async () => {
    const timeline = new Timeline();
    const turn = createTurnCollector();
    turn.register(timeline);
    const events = [
      ev.started(),
      ev.textStart(0),
      ev.text(0, "I will"),
      ev.toolStart(1, "call_x", "write"),
      ev.json(1, '{"path":"a'),
    ];
    for (const e of events) timeline.dispatch(e);
    timeline.end("cancelled by user");
    const result = turn.result();
    expect(result.blocks).toEqual([{ kind: "text", index: 0, text: "I will", partial: true }]);
    expect(result.aborted).toEqual([
      { index: 0, block: "text", reason: "cancelled by user", partial: "I will" },
      {
        index: 1,
        block: "tool_use",
        reason: "cancelled by user",
        partial: '{"path":"a',
        id: "call_x",
        name: "write",
      },
    ]);
    expect(result.toolCalls).toEqual([]);
    expect(result.status).toBeUndefined();
  });

  it("records errors and the failed status; invalid arguments become {} with a note", () => {
    const timeline = new Timeline();
    const turn = createTurnCollector();
    turn.register(timeline);
    for (const e of [
      ev.started(),
      ev.toolStart(0, "c1", "run"),
      ev.json(0, "[1,2]"),
      ev.toolStop(0),
      ev.toolStart(1, "c2", "run"),
      ev.json(1, "{oops"),
      ev.toolStop(1),
      {
        type: "error",
        code: "server",
        message: "boom",
        retryable: true,
      } as const,
      { type: "status", status: "failed", stopReason: "error" } as const,
    ]) {
      timeline.dispatch(e);
    }
    const result = turn.result();
    const [a, b] = result.toolCalls;
    expect(a).toMatchObject({ args: {}, argumentsJson: "[1,2]" });
    expect(a?.note).toMatch(/an array, not a JSON object/);
    expect(b).toMatchObject({ args: {}, argumentsJson: "{oops" });
    expect(b?.note).toMatch(/not valid JSON/);
    expect(result.errors).toEqual([{ type: "error", code: "server", message: "boom", retryable: true }]);
    expect(result.status).toBe("failed");
    expect(result.stopReason).toBe("error");
  });

  it("starts over at the next call on a reused timeline", () => {
    const timeline = new Timeline();
    const turn = createTurnCollector();
    turn.register(timeline);
    for (const e of [ev.started(), ev.textStart(0), ev.text(0, "one"), ev.textStop(0), ev.completed()]) {
      timeline.dispatch(e);
    }
    expect(turn.result().text).toBe("one");
    // A repeated `started` inside one call does not reset.
    for (const e of [ev.started(), ev.textStart(0), ev.text(0, "two"), ev.textStop(0), ev.started()]) {
      timeline.dispatch(e);
    }
    expect(turn.result().text).toBe("two");
    expect(turn.result().status).toBeUndefined();
  });
});
