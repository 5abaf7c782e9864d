import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { Hook } from "../src/hook.ts";
import type { Interceptor } from "../src/interceptor.ts";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool, ToolError, type ToolExecutionContext } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, deferred, record } from "./helpers.ts";

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function probe() {
  const seen: ToolExecutionContext[] = [];
  const tool = defineTool({
    name: "probe",
    description: "records its context",
    inputSchema: z.object({ n: z.number() }),
    execute: (input, ctx) => {
      seen.push(ctx);
      return `n=${input.n}`;
    },
  });
  return { tool, seen };
}

describe("ToolExecutionContext", () => {
  it("calls of one response share a batchId with increasing callIndex; batches differ", async () => {
    const { tool, seen } = probe();
    const client = createScriptedClient([
      { toolCalls: [0, 1, 2].map((n) => ({ id: `a${n}`, name: "probe", args: { n } })) },
      { toolCalls: [0, 1].map((n) => ({ id: `b${n}`, name: "probe", args: { n } })) },
      { text: "done" },
    ]);
    const worker = new Worker({ client, tools: [tool] });
    await worker.run("go");
    const byId = new Map(seen.map((c) => [c.callId, c]));
    const first = ["a0", "a1", "a2"].map((id) => byId.get(id)!);
    const second = ["b0", "b1"].map((id) => byId.get(id)!);
    expect(first.map((c) => c.callIndex)).toEqual([0, 1, 2]);
    expect(second.map((c) => c.callIndex)).toEqual([0, 1]);
    expect(new Set(first.map((c) => c.batchId)).size).toBe(1);
    expect(new Set(second.map((c) => c.batchId)).size).toBe(1);
    expect(first[0]!.batchId).not.toBe(second[0]!.batchId);
    expect(first[0]!.batchId).toMatch(UUID7);
    expect(first.map((c) => [c.batchSize, c.turnIndex])).toEqual([
      [3, 0],
      [3, 0],
      [3, 0],
    ]);
    expect(second.map((c) => [c.batchSize, c.turnIndex])).toEqual([
      [2, 1],
      [2, 1],
    ]);
    // results are committed in call order
    expect(worker.history.filter((i) => i.type === "tool_result").map((i) => i.callId)).toEqual([
      "a0",
      "a1",
      "a2",
      "b0",
      "b1",
    ]);
  });

  it("runs approved calls in parallel and still commits in call order", async () => {
    // Each call waits until every call has started: only parallel execution can finish.
    const started: number[] = [];
    const allStarted = deferred();
    const finished: number[] = [];
    // Call n ends once call n + 1 has: they finish in reverse order, whatever the machine's load,
    // to show that commit order does not follow completion order.
    const ended = [0, 1, 2, 3].map(() => deferred());
    const tool = defineTool({
      name: "wait",
      description: "waits for its siblings",
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }, ctx) => {
        started.push(n);
        if (started.length === ctx.batchSize) allStarted.resolve();
        await allStarted.promise;
        if (n + 1 < ctx.batchSize) await ended[n + 1]!.promise;
        finished.push(n);
        ended[n]!.resolve();
        return `done ${n}`;
      },
    });
    const client = createScriptedClient([
      { toolCalls: [0, 1, 2, 3].map((n) => ({ id: `c${n}`, name: "wait", args: { n } })) },
      { text: "ok" },
    ]);
    const worker = new Worker({ client, tools: [tool] });
    const events = record(worker);
    await worker.run("go");
    expect(started.sort()).toEqual([0, 1, 2, 3]);
    expect(finished).toEqual([3, 2, 1, 0]);
    expect(worker.history.filter((i) => i.type === "tool_result").map((i) => i.callId)).toEqual([
      "c0",
      "c1",
      "c2",
      "c3",
    ]);
    // every start precedes every end: the calls overlapped
    const kinds = events
      .filter((e) => e.type === "tool_call_start" || e.type === "tool_call_end")
      .map((e) => e.type);
    expect(kinds).toEqual([...Array(4).fill("tool_call_start"), ...Array(4).fill("tool_call_end")]);
  });

  it("skipped, synthetic and aborted calls get sane contexts and results", async () => {
    const { tool, seen } = probe();
    const infos: Array<{ callId: string; callIndex: number; batchId: string }> = [];
    const interceptor: Interceptor = {
      beforeToolCall(call) {
        infos.push({ callId: call.callId, callIndex: call.callIndex, batchId: call.batchId });
        if (call.callId === "s") return { action: "skip", result: "Skipped: not allowed in plan mode." };
        if (call.callId === "y") return { action: "synthetic_result", result: "cached: n=7" };
        return { action: "continue" };
      },
    };
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "r", name: "probe", args: { n: 1 } },
          { id: "s", name: "probe", args: { n: 2 } },
          { id: "y", name: "probe", args: { n: 7 } },
        ],
      },
      { text: "ok" },
    ]);
    const worker = new Worker({ client, tools: [tool], interceptors: [interceptor] });
    const events = record(worker);
    await worker.run("go");
    expect(seen.map((c) => [c.callId, c.callIndex])).toEqual([["r", 0]]);
    expect(infos.map((i) => [i.callId, i.callIndex])).toEqual([
      ["r", 0],
      ["s", 1],
      ["y", 2],
    ]);
    expect(new Set(infos.map((i) => i.batchId)).size).toBe(1);
    expect(seen[0]!.batchId).toBe(infos[0]!.batchId);
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results.map((r) => [r.callId, r.output, r.isError])).toEqual([
      ["r", "n=1", false],
      ["s", "Skipped: not allowed in plan mode.", true],
      ["y", "cached: n=7", false],
    ]);
    const ends = events.flatMap((e) =>
      e.type === "tool_call_end" ? [[e.callId, e.outcome, e.callIndex, e.batchId === infos[0]!.batchId]] : [],
    );
    expect(ends).toEqual([
      ["s", "skipped", 1, true],
      ["y", "synthetic", 2, true],
      ["r", "ok", 0, true],
    ]);
  });

  it("an abort runs nothing, answers every call, and ends the run cancelled", async () => {
    const { tool, seen } = probe();
    const client = createScriptedClient([
      { toolCalls: [0, 1, 2].map((n) => ({ id: `c${n}`, name: "probe", args: { n } })) },
    ]);
    const worker = new Worker({
      client,
      tools: [tool],
      interceptors: [
        {
          beforeToolCall: (call) =>
            call.callIndex === 1 ? { action: "abort", reason: "user denied rm -rf" } : undefined,
        },
      ],
    });
    const result = await worker.run("go");
    expect(result).toMatchObject({ status: "cancelled", reason: "user denied rm -rf", turns: 1 });
    expect(seen).toEqual([]);
    assertValidHistory(worker.history);
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(results[1]!.output).toBe("Tool call probe was not run: the run was aborted (user denied rm -rf).");
    expect(client.requests).toHaveLength(1);
  });

  it("a tool that waits on an earlier call of its batch can do so (no scheduling policy in the worker)", async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const order: string[] = [];
    const gate = (batchId: string, index: number) => {
      const key = `${batchId}:${index}`;
      const existing = gates.get(key);
      if (existing) return existing;
      const d = deferred<void>();
      gates.set(key, d);
      return d;
    };
    const write = defineTool({
      name: "write",
      description: "serialized per batch",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }, ctx) => {
        if (ctx.callIndex > 0) await gate(ctx.batchId, ctx.callIndex - 1).promise;
        await new Promise((r) => setTimeout(r, ctx.callIndex === 0 ? 10 : 0));
        order.push(path);
        gate(ctx.batchId, ctx.callIndex).resolve();
        return "ok";
      },
    });
    const client = createScriptedClient([
      { toolCalls: ["a", "b", "c"].map((path) => ({ name: "write", args: { path } })) },
      { text: "done" },
    ]);
    await new Worker({ client, tools: [write] }).run("go");
    expect(order).toEqual(["a", "b", "c"]);
  });
});

describe("Tool.check through ToolCallInfo.precheck", () => {
  it("gives a hook the tool's refusal before the call runs; none for a call it accepts, bad arguments or no check", async () => {
    const ran: number[] = [];
    const checked = defineTool({
      name: "checked",
      description: "refuses odd numbers",
      inputSchema: z.object({ n: z.number() }),
      check: ({ n }) => {
        if (n % 2 === 1) throw new ToolError(`${n} is odd; send an even number`);
      },
      execute: ({ n }) => {
        ran.push(n);
        return `n=${n}`;
      },
    });
    const plain = defineTool({
      name: "plain",
      description: "no check",
      inputSchema: z.object({}),
      execute: () => "plain",
    });
    const seen = new Map<string, string | undefined>();
    // A permission-like hook: the tool's refusal is the call's result, nobody is asked.
    const hook: Hook = {
      name: "asker",
      beforeToolCall: async (call) => {
        const refusal = await call.precheck?.();
        seen.set(call.callId, refusal);
        return refusal === undefined ? undefined : { action: "deny", message: refusal };
      },
    };
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "odd", name: "checked", args: { n: 3 } },
          { id: "even", name: "checked", args: { n: 4 } },
          { id: "bad", name: "checked", args: { n: "x" } },
          { id: "none", name: "plain", args: {} },
        ],
      },
      { text: "done" },
    ]);
    const worker = new Worker({ client, tools: [checked, plain], hooks: [hook] });
    await worker.run("go");
    expect(Object.fromEntries(seen)).toEqual({
      odd: "3 is odd; send an even number",
      even: undefined,
      bad: undefined,
      none: undefined,
    });
    const results = new Map(
      worker.history.flatMap((i) => (i.type === "tool_result" ? [[i.callId, i] as const] : [])),
    );
    expect(results.get("odd")).toMatchObject({ isError: true, output: "3 is odd; send an even number" });
    expect(results.get("even")).toMatchObject({ isError: false, output: "n=4" });
    expect(results.get("bad")?.isError).toBe(true);
    expect(ran).toEqual([4]);
  });
});

describe("ToolExecutionContext.progress", () => {
  it("becomes tool_output_delta events between the call's start and end, and nothing after it", async () => {
    let late: ((text: string) => void) | undefined;
    const tool = defineTool({
      name: "talk",
      description: "reports progress",
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        ctx.progress?.("first ");
        ctx.progress?.(""); // nothing to say: no event
        await new Promise((r) => setTimeout(r, 5));
        ctx.progress?.("second");
        late = ctx.progress;
        return "done";
      },
    });
    const client = createScriptedClient([
      { toolCalls: [{ id: "t1", name: "talk", args: {} }] },
      { text: "ok" },
    ]);
    const worker = new Worker({ client, tools: [tool] });
    const events = record(worker);
    await worker.run("go");
    late?.("after the end");
    const around = events.filter((e) => e.type.startsWith("tool_"));
    expect(around.map((e) => e.type)).toEqual([
      "tool_call_start",
      "tool_output_delta",
      "tool_output_delta",
      "tool_call_end",
    ]);
    const deltas = around.filter((e) => e.type === "tool_output_delta");
    expect(deltas.map((e) => [e.callId, e.name, e.turnIndex, e.text])).toEqual([
      ["t1", "talk", 0, "first "],
      ["t1", "talk", 0, "second"],
    ]);
    // The model sees only the result.
    const result = worker.history.find((i) => i.type === "tool_result");
    expect(result).toMatchObject({ output: "done" });
  });
});
