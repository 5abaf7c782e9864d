import * as v8 from "node:v8";
import type { Event } from "@yoi/llm-client";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { BlockKind, HandlerError, TextBlockEvent, ToolUseBlockEvent } from "../src/index.ts";
import { DEFAULT_END_REASON, Timeline } from "../src/index.ts";
import { asStream, ev } from "./helpers.ts";

interface Scope {
  id: number;
  index: number;
  events: string[];
}

/** A handler that logs every scope it creates and every event with the scope it came with. */
function recorder(name: string, log: string[]) {
  let next = 0;
  const created: Scope[] = [];
  const dropped: Scope[] = [];
  const handler = {
    name,
    createScope(start: { index: number }): Scope {
      const scope = { id: next++, index: start.index, events: [] };
      created.push(scope);
      log.push(`${name}:create#${scope.id}@${start.index}`);
      return scope;
    },
    onEvent(scope: Scope, event: TextBlockEvent | ToolUseBlockEvent | { phase: string; index: number }) {
      const payload =
        event.phase === "delta"
          ? "text" in event
            ? event.text
            : "inputJson" in event
              ? event.inputJson
              : ""
          : "";
      scope.events.push(`${event.phase}${payload === "" ? "" : `(${payload})`}`);
      log.push(`${name}:${event.phase}#${scope.id}@${event.index}`);
      if (event.phase === "stop" || event.phase === "abort") dropped.push(scope);
    },
  };
  return { handler, created, dropped };
}

function run(timeline: Timeline, events: Event[]): void {
  for (const e of events) timeline.dispatch(e);
}

describe("scope lifecycle", () => {
  it("creates and drops one scope per block per handler, with interleaved blocks", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    const a = recorder("a", log);
    const b = recorder("b", log);
    timeline.on("tool_use", a.handler);
    timeline.on("tool_use", b.handler);
    run(timeline, [
      ev.toolStart(1, "c1", "read"),
      ev.toolStart(2, "c2", "read"),
      ev.json(1, "{"),
      ev.json(2, "{"),
      ev.json(1, "}"),
      ev.toolStop(2),
      ev.json(1, " "),
      ev.toolStop(1),
      // The index is reused after its block stopped: a fresh scope.
      ev.toolStart(1, "c3", "read"),
      ev.toolStop(1),
    ]);
    for (const r of [a, b]) {
      expect(r.created.map((s) => s.index)).toEqual([1, 2, 1]);
      expect(new Set(r.dropped)).toEqual(new Set(r.created));
      expect(r.dropped).toHaveLength(3);
      expect(r.created[0]!.events).toEqual(["start", "delta({)", "delta(})", "delta( )", "stop"]);
      expect(r.created[1]!.events).toEqual(["start", "delta({)", "stop"]);
      expect(r.created[2]!.events).toEqual(["start", "stop"]);
    }
    expect(timeline.openBlocks()).toEqual([]);
    // Registration order within each event.
    expect(log.slice(0, 4)).toEqual(["a:create#0@1", "a:start#0@1", "b:create#0@1", "b:start#0@1"]);
  });

  it("drops scopes on block_abort and ignores an abort for a block that is not open", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    const r = recorder("r", log);
    timeline.on("text", r.handler);
    run(timeline, [
      ev.textStart(0),
      ev.text(0, "hi"),
      ev.abort(0, "text", "refused"),
      ev.abort(7, "text", "x"),
    ]);
    expect(r.created).toHaveLength(1);
    expect(r.created[0]!.events).toEqual(["start", "delta(hi)", "abort"]);
    expect(r.dropped).toEqual(r.created);
  });

  it("end() aborts every block cut mid-stream, once, and the timeline is reusable", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    const text = recorder("text", log);
    const tools = recorder("tools", log);
    const reasons: string[] = [];
    timeline.on("text", text.handler);
    timeline.on("tool_use", tools.handler);
    timeline.on("tool_use", {
      name: "reasons",
      onEvent(_scope, e) {
        if (e.phase === "abort") reasons.push(`${e.index}:${e.reason}`);
      },
    });
    run(timeline, [ev.textStart(0), ev.text(0, "a"), ev.toolStart(1, "c", "n"), ev.json(1, "{")]);
    expect(timeline.openBlocks()).toEqual([
      { index: 0, block: "text" },
      { index: 1, block: "tool_use" },
    ]);
    timeline.end();
    timeline.end(); // nothing open any more: no second abort
    expect(text.created[0]!.events).toEqual(["start", "delta(a)", "abort"]);
    expect(tools.created[0]!.events).toEqual(["start", "delta({)", "abort"]);
    expect(reasons).toEqual([`1:${DEFAULT_END_REASON}`]);
    run(timeline, [ev.textStart(0), ev.textStop(0)]);
    expect(text.created).toHaveLength(2);
    expect(text.dropped).toHaveLength(2);
  });

  it("a second block_start for an open index aborts the old block first", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    const r = recorder("r", log);
    timeline.on("text", r.handler);
    run(timeline, [ev.textStart(0), ev.text(0, "x"), ev.textStart(0), ev.text(0, "y"), ev.textStop(0)]);
    expect(r.created.map((s) => s.events)).toEqual([
      ["start", "delta(x)", "abort"],
      ["start", "delta(y)", "stop"],
    ]);
  });

  it("a delta without a start opens the block with a synthesized start", () => {
    const timeline = new Timeline();
    const starts: Array<{ kind: BlockKind; index: number; synthesized: boolean }> = [];
    const texts: string[] = [];
    timeline.on("text", {
      name: "t",
      createScope: (start) => {
        expectTypeOf(start.block).toEqualTypeOf<"text">();
        return { buf: "" };
      },
      onEvent(scope, e) {
        if (e.phase === "start")
          starts.push({ kind: e.start.block, index: e.index, synthesized: e.synthesized });
        if (e.phase === "delta") scope.buf += e.text;
        if (e.phase === "stop") texts.push(scope.buf);
      },
    });
    const tools: string[] = [];
    timeline.on("tool_use", {
      name: "j",
      createScope: () => ({ json: "" }),
      onEvent(scope, e) {
        if (e.phase === "start")
          starts.push({ kind: e.start.block, index: e.index, synthesized: e.synthesized });
        if (e.phase === "delta") scope.json += e.inputJson;
        if (e.phase === "stop") tools.push(scope.json);
      },
    });
    run(timeline, [
      ev.text(0, "no "),
      ev.text(0, "start"),
      ev.textStop(0),
      ev.json(3, '{"a":1}'),
      ev.toolStop(3),
      // A stop alone is a whole (empty) block.
      ev.textStop(5),
      // Unknown delta kinds are passed over.
      { type: "block_delta", index: 9, delta: "audio" as "text", text: "?" },
    ]);
    expect(starts).toEqual([
      { kind: "text", index: 0, synthesized: true },
      { kind: "tool_use", index: 3, synthesized: true },
      { kind: "text", index: 5, synthesized: true },
    ]);
    expect(texts).toEqual(["no start", ""]);
    expect(tools).toEqual(['{"a":1}']);
  });

  it("blocks open before a handler registers are not delivered to it; unsubscribe drops its scopes", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    const early = recorder("early", log);
    const late = recorder("late", log);
    const offEarly = timeline.on("text", early.handler);
    timeline.dispatch(ev.textStart(0));
    timeline.on("text", late.handler);
    run(timeline, [ev.text(0, "a"), ev.textStart(1)]);
    offEarly();
    offEarly(); // idempotent
    run(timeline, [ev.text(0, "b"), ev.text(1, "c"), ev.textStop(0), ev.textStop(1)]);
    expect(early.created.map((s) => s.events)).toEqual([["start", "delta(a)"], ["start"]]);
    expect(late.created.map((s) => s.events)).toEqual([["start", "delta(c)", "stop"]]);
  });
});

describe("ordering", () => {
  it("meta events reach handlers between the deltas they arrived between", () => {
    const log: string[] = [];
    const timeline = new Timeline();
    timeline.on("text", {
      name: "text",
      onEvent(_s, e) {
        log.push(e.phase === "delta" ? `text:${e.text}` : `text:${e.phase}`);
      },
    });
    timeline.on("usage", { name: "usage", onEvent: (e) => log.push(`usage:${e.usage.outputTokens}`) });
    timeline.on("ping", { name: "ping", onEvent: () => log.push("ping") });
    timeline.on("status", { name: "status", onEvent: (e) => log.push(`status:${e.status}`) });
    timeline.on("text", {
      name: "text2",
      onEvent(_s, e) {
        if (e.phase === "delta") log.push(`text2:${e.text}`);
      },
    });
    run(timeline, [
      ev.started(),
      ev.textStart(0),
      ev.text(0, "a"),
      ev.usage({ outputTokens: 1 }),
      ev.text(0, "b"),
      ev.ping(),
      ev.text(0, "c"),
      ev.textStop(0),
      ev.completed(),
    ]);
    expect(log).toEqual([
      "status:started",
      "text:start",
      "text:a",
      "text2:a",
      "usage:1",
      "text:b",
      "text2:b",
      "ping",
      "text:c",
      "text2:c",
      "text:stop",
      "status:completed",
    ]);
  });

  it("a handler unsubscribed during a dispatch is skipped for the rest of it", () => {
    const seen: string[] = [];
    const timeline = new Timeline();
    let offB = (): void => {};
    timeline.on("ping", {
      name: "a",
      onEvent: () => {
        seen.push("a");
        offB();
      },
    });
    offB = timeline.on("ping", { name: "b", onEvent: () => seen.push("b") });
    timeline.on("ping", { name: "c", onEvent: () => seen.push("c") });
    timeline.dispatch(ev.ping());
    timeline.dispatch(ev.ping());
    expect(seen).toEqual(["a", "c", "a", "c"]);
  });
});

describe("handler failures", () => {
  it("a throwing handler does not stop the others, is reported once, and loses only that block", () => {
    const timeline = new Timeline();
    const good: string[] = [];
    let calls = 0;
    timeline.on("text", {
      name: "flaky",
      createScope: () => ({ n: 0 }),
      onEvent(scope, e) {
        calls++;
        if (e.phase === "delta" && e.index === 0) throw new Error(`bad delta ${++scope.n}`);
      },
    });
    timeline.on("text", {
      name: "good",
      createScope: () => ({ buf: "" }),
      onEvent(scope, e) {
        if (e.phase === "delta") scope.buf += e.text;
        if (e.phase === "stop") good.push(scope.buf);
      },
    });
    run(timeline, [
      ev.textStart(0),
      ev.textStart(1),
      ev.text(0, "x"),
      ev.text(0, "y"),
      ev.text(1, "z"),
      ev.textStop(0),
      ev.textStop(1),
    ]);
    expect(good).toEqual(["xy", "z"]);
    expect(timeline.handlerErrors).toHaveLength(1);
    const [failure] = timeline.handlerErrors;
    expect(failure).toMatchObject({ handler: "flaky", kind: "text", index: 0, phase: "delta" });
    expect(failure?.error).toEqual(new Error("bad delta 1"));
    // start(0), start(1), delta x (throws), delta z, stop(1): nothing more for block 0.
    expect(calls).toBe(5);
  });

  it("reports through onHandlerError, including createScope and meta failures", () => {
    const reports: HandlerError[] = [];
    const timeline = new Timeline({ onHandlerError: (e) => reports.push(e) });
    const got: string[] = [];
    timeline.on("tool_use", {
      name: "no-scope",
      createScope: () => {
        throw new Error("cannot");
      },
      onEvent: () => got.push("never"),
    });
    timeline.on("usage", {
      name: "usage-boom",
      onEvent: () => {
        throw new TypeError("usage");
      },
    });
    timeline.on("usage", { name: "usage-ok", onEvent: () => got.push("usage") });
    run(timeline, [
      ev.toolStart(0, "c", "n"),
      ev.json(0, "{}"),
      ev.usage({ inputTokens: 1 }),
      ev.toolStop(0),
    ]);
    expect(got).toEqual(["usage"]);
    expect(reports.map((r) => [r.handler, r.kind, r.phase])).toEqual([
      ["no-scope", "tool_use", "start"],
      ["usage-boom", "usage", undefined],
    ]);
    expect(timeline.handlerErrors).toEqual([]);
  });

  it("a throwing onHandlerError does not break dispatch", () => {
    const timeline = new Timeline({
      onHandlerError: () => {
        throw new Error("sink down");
      },
    });
    timeline.on("ping", {
      name: "p",
      onEvent: () => {
        throw new Error("p");
      },
    });
    expect(() => timeline.dispatch(ev.ping())).not.toThrow();
    expect(timeline.handlerErrors.map((e) => e.handler)).toEqual(["p", "onHandlerError"]);
  });

  it("rejects malformed registrations with a clear message", () => {
    const timeline = new Timeline();
    // @ts-expect-error unknown kind
    expect(() => timeline.on("audio", { name: "x", onEvent: () => {} })).toThrow(/unknown kind "audio"/);
    // @ts-expect-error no onEvent
    expect(() => timeline.on("text", { name: "x" })).toThrow(/onEvent function/);
  });
});

describe("types", () => {
  it("a kind fixes the event type and the scope type is inferred from createScope", () => {
    const timeline = new Timeline();
    timeline.on("thinking", {
      name: "t",
      createScope: () => ({ count: 0 }),
      onEvent(scope, e) {
        expectTypeOf(scope).toEqualTypeOf<{ count: number }>();
        if (e.phase === "stop")
          expectTypeOf(e.replay).toEqualTypeOf<
            import("../src/kinds.ts").DeepReadonly<import("@yoi/llm-client").ThinkingReplay> | undefined
          >();
      },
    });
    timeline.on("usage", {
      name: "u",
      onEvent(e) {
        expectTypeOf(e.usage.inputTokens).toEqualTypeOf<number | undefined>();
      },
    });
    const textOnly = { name: "x", onEvent: (_s: undefined, _e: TextBlockEvent) => {} };
    // @ts-expect-error a text handler cannot be registered for tool_use
    timeline.on("tool_use", textOnly);
  });
});

describe("consume", () => {
  it("dispatches a stream and ends it, aborting blocks left open", async () => {
    const timeline = new Timeline();
    const phases: string[] = [];
    timeline.on("text", { name: "p", onEvent: (_s, e) => phases.push(e.phase) });
    await timeline.consume(asStream([ev.textStart(0), ev.text(0, "a")]));
    expect(phases).toEqual(["start", "delta", "abort"]);
  });

  it("aborts open blocks with the error and rethrows when the stream throws", async () => {
    const timeline = new Timeline();
    const reasons: string[] = [];
    timeline.on("text", {
      name: "p",
      onEvent: (_s, e) => {
        if (e.phase === "abort") reasons.push(e.reason);
      },
    });
    async function* failing(): AsyncIterable<Event> {
      yield ev.textStart(0);
      throw new Error("socket closed");
    }
    await expect(timeline.consume(failing())).rejects.toThrow("socket closed");
    expect(reasons).toEqual(["the stream failed: socket closed"]);
  });

  it("stops reading when the signal aborts, even while waiting for the next event", async () => {
    const timeline = new Timeline();
    const reasons: string[] = [];
    timeline.on("text", {
      name: "p",
      onEvent: (_s, e) => {
        if (e.phase === "abort") reasons.push(e.reason);
      },
    });
    const controller = new AbortController();
    let returned = false;
    // A stream that never produces its second event on its own.
    const stream: AsyncIterable<Event> = {
      [Symbol.asyncIterator]() {
        let sent = false;
        return {
          next: () => {
            if (!sent) {
              sent = true;
              return Promise.resolve({ done: false, value: ev.textStart(0) });
            }
            queueMicrotask(() => controller.abort(new Error("user pressed esc")));
            return new Promise<IteratorResult<Event>>(() => {});
          },
          return: () => {
            returned = true;
            return Promise.resolve({ done: true, value: undefined });
          },
        };
      },
    };
    await timeline.consume(stream, controller.signal);
    expect(reasons).toEqual(["cancelled: user pressed esc"]);
    expect(returned).toBe(true);
  });

  it("holds nothing per event read while a signal waits: a long stream does not pile up", async () => {
    const timeline = new Timeline();
    const counts: number[] = [];
    const EVENTS = 5000;
    timeline.on("text", {
      name: "count",
      onEvent: (_s, e) => {
        // Live promises (v8 collects first) early in the stream and near its end.
        if (e.phase === "delta" && (e.text === "at 100" || e.text === `at ${EVENTS - 1}`))
          counts.push(v8.queryObjects(Promise, { format: "count" }) as number);
      },
    });
    async function* many(): AsyncIterable<Event> {
      yield ev.textStart(0);
      for (let i = 1; i < EVENTS; i++) yield ev.text(0, `at ${i}`);
    }
    await timeline.consume(many(), new AbortController().signal);
    expect(counts).toHaveLength(2);
    // Racing each read against one promise of the abort kept a reaction (and a promise) per read until
    // the stream ended: some 5,000 more here.
    expect((counts[1] ?? 0) - (counts[0] ?? 0)).toBeLessThan(100);
  });

  it("stops when asking for the next event is what aborts the signal", async () => {
    const timeline = new Timeline();
    const controller = new AbortController();
    let reads = 0;
    const stream: AsyncIterable<Event> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          reads++;
          if (reads === 1) return Promise.resolve({ done: false, value: ev.textStart(0) });
          // The second read aborts, synchronously, and never produces an event.
          controller.abort(new Error("stopped while reading"));
          return new Promise<IteratorResult<Event>>(() => {});
        },
        return: () => Promise.resolve({ done: true, value: undefined }),
      }),
    };
    await timeline.consume(stream, controller.signal);
    expect(reads).toBe(2);
  });

  it("does not read at all from an already aborted signal", async () => {
    const timeline = new Timeline();
    let reads = 0;
    async function* counting(): AsyncIterable<Event> {
      reads++;
      yield ev.ping();
    }
    await timeline.consume(counting(), AbortSignal.abort());
    expect(reads).toBe(0);
  });
});
