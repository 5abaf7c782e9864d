import type { Event, Usage } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import {
  type AbortedToolCall,
  createStatusCollector,
  createTextCollector,
  createThinkingCollector,
  createToolCallCollector,
  createTurnCollector,
  createUsageCollector,
  mergeUsage,
  onToolCallAbort,
  onToolCallComplete,
  onToolCallDelta,
  onToolCallStart,
  parseToolArguments,
  Timeline,
  type ToolCall,
  textBlockHandler,
} from "../src/index.ts";
import { ev } from "./helpers.ts";

function run(timeline: Timeline, events: Event[]): void {
  for (const e of events) timeline.dispatch(e);
}

describe("parseToolArguments", () => {
  it("parses an object and keeps the raw JSON", () => {
    expect(parseToolArguments('{"a":[1,{"b":null}]}')).toEqual({
      argumentsJson: '{"a":[1,{"b":null}]}',
      args: { a: [1, { b: null }] },
    });
  });

  it.each([
    ["", "{}", /sent no arguments/],
    ["  \n", "{}", /sent no arguments/],
    ["null", "null", /are null, not a JSON object/],
    ["[1]", "[1]", /are an array, not a JSON object/],
    ['"x"', '"x"', /are a string, not a JSON object/],
    ["42", "42", /are a number, not a JSON object/],
    ['{"a":', '{"a":', /not valid JSON \(.+\)/],
  ])("%j becomes {} with a note", (raw, json, note) => {
    const parsed = parseToolArguments(raw);
    expect(parsed.args).toEqual({});
    expect(parsed.argumentsJson).toBe(json);
    expect(parsed.note).toMatch(note);
  });
});

describe("createTextCollector", () => {
  it("collects text per block in start order, joined, with partial blocks marked", () => {
    const timeline = new Timeline();
    const text = createTextCollector();
    text.register(timeline);
    run(timeline, [
      ev.textStart(0),
      ev.textStart(2),
      ev.text(2, "B"),
      ev.text(0, "A"),
      ev.textStop(0),
      ev.text(2, "b"),
      { type: "block_stop", index: 2, block: "text", providerData: { thoughtSignature: "sig" } },
      ev.text(3, "cut"),
    ]);
    timeline.end("stream lost");
    expect(text.result()).toEqual({
      text: "ABbcut",
      blocks: [
        { index: 0, text: "A" },
        { index: 2, text: "Bb", providerData: { thoughtSignature: "sig" } },
        { index: 3, text: "cut", partial: true },
      ],
    });
    const snapshot = text.result();
    text.reset();
    expect(text.result()).toEqual({ text: "", blocks: [] });
    expect(snapshot.blocks).toHaveLength(3);
  });
});

describe("textBlockHandler", () => {
  it("reports each text or thinking block's start, deltas with the text so far, and its stop or abort", () => {
    const timeline = new Timeline();
    const seen: string[] = [];
    for (const kind of ["text", "thinking"] as const) {
      timeline.on(
        kind,
        textBlockHandler<typeof kind>(
          {
            onStart: (b) => seen.push(`${kind} ${b.index} start`),
            onDelta: (t, b) => seen.push(`${kind} ${b.index} +${t} = ${b.text}`),
            onStop: (b, stop) => seen.push(`${kind} ${b.index} stop ${b.text} ${stop.stop.block}`),
            onAbort: (b, reason) => seen.push(`${kind} ${b.index} abort ${b.text} (${reason})`),
          },
          `test:${kind}`,
        ),
      );
    }
    run(timeline, [
      ev.thinkingStart(0),
      ev.thinking(0, "h"),
      ev.thinking(0, "m"),
      { type: "block_stop", index: 0, block: "thinking", replay: { provider: "anthropic", signature: "s" } },
      ev.textStart(1),
      ev.text(1, "a"),
      ev.abort(1, "text", "cut"),
    ]);
    expect(seen).toEqual([
      "thinking 0 start",
      "thinking 0 +h = h",
      "thinking 0 +m = hm",
      "thinking 0 stop hm thinking",
      "text 1 start",
      "text 1 +a = a",
      "text 1 abort a (cut)",
    ]);
  });

  it("gives the text collector's and the turn collector's results the text of a block still streaming", () => {
    const timeline = new Timeline();
    const text = createTextCollector();
    const turn = createTurnCollector();
    text.register(timeline);
    turn.register(timeline);
    run(timeline, [ev.started(), ev.textStart(0), ev.text(0, "so "), ev.text(0, "far")]);
    expect(text.result()).toEqual({ text: "so far", blocks: [{ index: 0, text: "so far" }] });
    expect(turn.result().blocks).toEqual([{ kind: "text", index: 0, text: "so far" }]);
  });
});

describe("createThinkingCollector", () => {
  it("keeps the replay data and sets aborted reasoning apart", () => {
    const timeline = new Timeline();
    const thinking = createThinkingCollector();
    thinking.register(timeline);
    run(timeline, [
      ev.thinkingStart(0),
      ev.thinking(0, "step 1"),
      {
        type: "block_stop",
        index: 0,
        block: "thinking",
        replay: { provider: "openai-responses", encryptedContent: "enc", summary: ["s"] },
      },
      // Redacted thinking: no text at all, only replay data.
      ev.thinkingStart(1),
      {
        type: "block_stop",
        index: 1,
        block: "thinking",
        replay: { provider: "anthropic", redacted: true, encryptedContent: "opaque" },
      },
      ev.thinkingStart(2),
      ev.thinking(2, "half"),
      ev.abort(2, "thinking", "max tokens"),
    ]);
    expect(thinking.result()).toEqual({
      blocks: [
        {
          index: 0,
          text: "step 1",
          replay: { provider: "openai-responses", encryptedContent: "enc", summary: ["s"] },
        },
        { index: 1, text: "", replay: { provider: "anthropic", redacted: true, encryptedContent: "opaque" } },
      ],
      aborted: [{ index: 2, partialText: "half", reason: "max tokens" }],
    });
  });
});

describe("createToolCallCollector", () => {
  it("orders parallel calls by start even when they finish out of order; aborted calls are apart", () => {
    const timeline = new Timeline();
    const tools = createToolCallCollector();
    tools.register(timeline);
    run(timeline, [
      ev.toolStart(0, "a", "read"),
      ev.toolStart(1, "b", "write"),
      ev.toolStart(2, "c", "grep"),
      ev.json(2, '{"q":"x"}'),
      ev.json(1, '{"path":'),
      ev.json(0, '{"path":"f"}'),
      ev.toolStop(2),
      ev.abort(1, "tool_use", "max_tokens"),
      ev.toolStop(0),
    ]);
    const result = tools.result();
    expect(result.calls.map((c) => c.id)).toEqual(["a", "c"]);
    expect(result.calls[0]).toEqual({
      index: 0,
      id: "a",
      name: "read",
      argumentsJson: '{"path":"f"}',
      args: { path: "f" },
    });
    expect(result.aborted).toEqual([
      { index: 1, id: "b", name: "write", partialJson: '{"path":', reason: "max_tokens" },
    ]);
  });

  it("keeps custom tool input raw, generates a missing id and passes provider data through", () => {
    const timeline = new Timeline();
    const tools = createToolCallCollector();
    tools.register(timeline);
    run(timeline, [
      { type: "block_start", index: 0, block: "tool_use", id: "c1", name: "sql", toolKind: "custom" },
      ev.json(0, "SELECT 1"),
      ev.toolStop(0),
      // A call that streams arguments with no block_start: no id or name is known.
      ev.json(1, '{"a":1}'),
      { type: "block_stop", index: 1, block: "tool_use", providerData: { thoughtSignature: "t" } },
    ]);
    const [custom, anonymous] = tools.result().calls;
    expect(custom).toMatchObject({ id: "c1", toolKind: "custom", argumentsJson: "SELECT 1", args: {} });
    expect(custom?.note).toMatch(/custom tool/);
    expect(anonymous?.id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(anonymous?.args).toEqual({ a: 1 });
    expect(anonymous?.note).toMatch(/no call id; generated one.*no tool name/);
    expect(anonymous?.providerData).toEqual({ thoughtSignature: "t" });
  });
});

describe("tool call callbacks", () => {
  it("report start, fragments, completion and aborts", () => {
    const timeline = new Timeline();
    const log: string[] = [];
    const completed: ToolCall[] = [];
    const aborted: AbortedToolCall[] = [];
    timeline.on(
      "tool_use",
      onToolCallStart((c) => log.push(`start ${c.id} ${c.name}`)),
    );
    timeline.on(
      "tool_use",
      onToolCallDelta((fragment, c, soFar) => log.push(`delta ${c.id} ${fragment} ${soFar}`)),
    );
    timeline.on(
      "tool_use",
      onToolCallComplete((c) => completed.push(c)),
    );
    timeline.on(
      "tool_use",
      onToolCallAbort((c) => aborted.push(c)),
    );
    run(timeline, [ev.toolStart(0, "x", "ls"), ev.json(0, '{"a"'), ev.json(0, ":2}"), ev.toolStop(0)]);
    run(timeline, [ev.toolStart(1, "y", "ls"), ev.json(1, "{")]);
    timeline.end("cancelled");
    expect(log).toEqual([
      "start x ls",
      'delta x {"a" {"a"',
      'delta x :2} {"a":2}',
      "start y ls",
      "delta y { {",
    ]);
    expect(completed).toEqual([{ index: 0, id: "x", name: "ls", argumentsJson: '{"a":2}', args: { a: 2 } }]);
    expect(aborted).toEqual([{ index: 1, id: "y", name: "ls", partialJson: "{", reason: "cancelled" }]);
  });
});

describe("usage", () => {
  it("mergeUsage keeps the latest reported value per field", () => {
    const into: Usage = { inputTokens: 10, outputTokens: 1 };
    expect(mergeUsage(into, { outputTokens: 5, cacheReadTokens: 0 })).toBe(true);
    expect(mergeUsage(into, {})).toBe(false);
    expect(mergeUsage(into, { inputTokens: Number.NaN })).toBe(false);
    expect(into).toEqual({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0 });
  });

  it("delivers the merged usage once per model call and starts over at the next call", () => {
    const timeline = new Timeline();
    const delivered: Usage[] = [];
    const usage = createUsageCollector({ onUsage: (u) => delivered.push(u) });
    usage.register(timeline);
    run(timeline, [
      ev.started(),
      ev.usage({ inputTokens: 100, outputTokens: 1 }),
      ev.textStart(0),
      ev.usage({ outputTokens: 7 }),
      ev.textStop(0),
      ev.usage({ outputTokens: 9, reasoningTokens: 3 }),
      ev.completed(),
    ]);
    expect(delivered).toEqual([{ inputTokens: 100, outputTokens: 9, reasoningTokens: 3 }]);
    expect(usage.result()).toEqual({ inputTokens: 100, outputTokens: 9, reasoningTokens: 3 });
    // Second call: fields do not leak from the first.
    run(timeline, [ev.started(), ev.usage({ outputTokens: 2 }), ev.completed()]);
    expect(delivered).toEqual([
      { inputTokens: 100, outputTokens: 9, reasoningTokens: 3 },
      { outputTokens: 2 },
    ]);
    // A call that reports no usage delivers nothing.
    run(timeline, [ev.started(), ev.completed()]);
    expect(delivered).toHaveLength(2);
    expect(usage.result()).toBeUndefined();
  });
});

describe("createStatusCollector", () => {
  it("keeps model, response id, the terminal status, stop reason and errors", () => {
    const timeline = new Timeline();
    const status = createStatusCollector();
    status.register(timeline);
    run(timeline, [{ type: "status", status: "started", model: "m", responseId: "r" }]);
    expect(status.result()).toMatchObject({ status: "started", stopReason: undefined });
    run(timeline, [
      { type: "error", code: "overloaded", message: "busy", retryable: true, status: 529 },
      { type: "status", status: "failed", stopReason: "error" },
    ]);
    expect(status.result()).toEqual({
      status: "failed",
      stopReason: "error",
      model: "m",
      responseId: "r",
      errors: [{ type: "error", code: "overloaded", message: "busy", retryable: true, status: 529 }],
    });
    run(timeline, [ev.started()]);
    expect(status.result()).toEqual({ status: "started", stopReason: undefined, errors: [] });
  });
});

describe("registration", () => {
  it("a collector's unsubscribe removes all its handlers", () => {
    const timeline = new Timeline();
    const text = createTextCollector();
    const off = text.register(timeline);
    run(timeline, [ev.textStart(0), ev.text(0, "a"), ev.textStop(0)]);
    off();
    run(timeline, [ev.textStart(1), ev.text(1, "b"), ev.textStop(1)]);
    expect(text.result().text).toBe("a");
  });
});
