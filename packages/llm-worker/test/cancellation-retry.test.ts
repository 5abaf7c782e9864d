import type { Event } from "@yoi/llm-client";
import { LlmError } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { ContextPolicy } from "../src/context-policy.ts";
import { createScriptedClient, delayedEvents, responseEvents } from "../src/testing/scripted-client.ts";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, deferred, echoTool, record, shape } from "./helpers.ts";

describe("cancellation", () => {
  it("a turn cancelled before any output is rolled back, user item included", async () => {
    const ac = new AbortController();
    const requested = deferred();
    const client = createScriptedClient([
      (_req, signal) => {
        requested.resolve();
        return delayedEvents(
          [{ type: "status", status: "started" }, ...responseEvents({ text: "late" }).slice(1)],
          50,
          signal,
        );
      },
    ]);
    const worker = new Worker({
      client,
      interceptors: [
        {
          onPromptSubmit: () => ({
            action: "continue_with",
            items: [{ type: "message", role: "system", content: [{ type: "text", text: "ctx" }] }],
          }),
        },
      ],
    });
    const events = record(worker);
    const run = worker.run("hello", { signal: ac.signal });
    await requested.promise;
    ac.abort();
    const result = await run;
    expect(result.status).toBe("cancelled");
    expect(worker.history).toEqual([]);
    const replaced = events.find((e) => e.type === "history_replaced");
    expect(replaced).toMatchObject({
      type: "history_replaced",
      reason: "rollback",
      items: [],
      detail: { removed: 2 },
    });
  });

  it("text already streamed survives a cancel; partial tool calls are never committed", async () => {
    const ac = new AbortController();
    const client = createScriptedClient([
      async function* () {
        yield { type: "status", status: "started" } as Event;
        yield { type: "block_start", index: 0, block: "text" } as Event;
        yield { type: "block_delta", index: 0, delta: "text", text: "I will now" } as Event;
        yield { type: "block_stop", index: 0, block: "text" } as Event;
        yield { type: "block_start", index: 1, block: "tool_use", id: "p", name: "echo" } as Event;
        yield { type: "block_delta", index: 1, delta: "input_json", text: '{"te' } as Event;
        ac.abort();
        await new Promise(() => {}); // hangs until the worker stops reading
      } as never,
    ]);
    const worker = new Worker({ client, tools: [echoTool] });
    const result = await worker.run("go", { signal: ac.signal });
    expect(result.status).toBe("cancelled");
    expect(shape(worker.history)).toEqual(["user:go", "assistant:I will now"]);
  });

  it("cancelling during tools answers every call with an interrupted result without waiting for deaf tools", async () => {
    const ac = new AbortController();
    const started = deferred();
    const deaf = defineTool({
      name: "deaf",
      description: "ignores its signal",
      inputSchema: z.object({}),
      execute: () => {
        started.resolve();
        return new Promise<string>(() => {});
      },
    });
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "e", name: "echo", args: { text: "fast" } },
          { id: "d", name: "deaf", args: {} },
        ],
      },
    ]);
    const worker = new Worker({ client, tools: [echoTool, deaf] });
    const events = record(worker);
    const run = worker.run("go", { signal: ac.signal });
    await started.promise;
    ac.abort(new Error("user pressed Esc"));
    const result = await run;
    expect(result).toMatchObject({ status: "cancelled", reason: "user pressed Esc" });
    assertValidHistory(worker.history);
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results.map((r) => [r.callId, r.isError])).toEqual([
      ["e", false],
      ["d", true],
    ]);
    expect(results[1]!.output).toMatch(/was interrupted before it finished/);
    const reasons = events.flatMap((e) =>
      e.type === "item_committed" && e.item.type === "tool_result" ? [e.reason] : [],
    );
    expect(reasons).toEqual(["tool_result", "synthetic"]);
    // the next run starts from valid history
    client.push({ text: "ok" });
    await worker.run("again");
    assertValidHistory(worker.history);
  });

  it("a tool sees its signal abort when the run is cancelled", async () => {
    const ac = new AbortController();
    const aborted = deferred<string>();
    const polite = defineTool({
      name: "polite",
      description: "listens",
      inputSchema: z.object({}),
      execute: (_i, ctx) =>
        new Promise<string>((_, reject) => {
          ctx.signal.addEventListener("abort", () => {
            aborted.resolve("aborted");
            reject(new Error("stopped"));
          });
          queueMicrotask(() => ac.abort());
        }),
    });
    const worker = new Worker({
      client: createScriptedClient([{ toolCalls: [{ name: "polite", args: {} }] }]),
      tools: [polite],
    });
    await worker.run("go", { signal: ac.signal });
    expect(await aborted.promise).toBe("aborted");
    assertValidHistory(worker.history);
  });

  it("an already-aborted signal commits nothing and sends nothing", async () => {
    const client = createScriptedClient([{ text: "x" }]);
    const worker = new Worker({ client });
    const result = await worker.run("hi", { signal: AbortSignal.abort() });
    expect(result.status).toBe("cancelled");
    expect(client.requests).toHaveLength(0);
    expect(worker.history).toEqual([]);
  });
});

describe("broken streams", () => {
  // Retrying broken streams is the client's job: test/e2e-adapters.test.ts drives it through the real
  // client and SDKs; the worker only forwards the client's retry events.
  it("does not retry a non-retryable error event", async () => {
    const client = createScriptedClient([
      {
        events: [
          { type: "status", status: "started" },
          { type: "error", code: "content_filter", message: "blocked", retryable: false },
          { type: "status", status: "failed", stopReason: "error" },
        ],
      },
    ]);
    const result = await new Worker({ client }).run("go");
    expect(result).toMatchObject({ status: "failed", error: { code: "content_filter", message: "blocked" } });
    expect(client.requests).toHaveLength(1);
  });
});

describe("ContextPolicy", () => {
  it("is called at every checkpoint of the loop and before each tool result is committed", async () => {
    const calls: string[] = [];
    const policy: ContextPolicy = {
      async prepareToolResult(result, full) {
        calls.push(`prepare:${result.callId}:${full.length}`);
        return { ...result, output: `${result.output} (seen)` };
      },
      async checkpoint(point, state) {
        calls.push(`${point}:${state.history.length}:${state.lastUsage?.inputTokens ?? "-"}`);
        return undefined;
      },
    };
    const client = createScriptedClient([
      { toolCalls: [{ id: "c", name: "echo", args: { text: "x" } }], usage: { inputTokens: 100 } },
      { text: "done", usage: { inputTokens: 150 } },
    ]);
    const worker = new Worker({ client, tools: [echoTool], contextPolicy: policy });
    await worker.run("go");
    expect(calls).toEqual([
      "after_model_call:2:100",
      "prepare:c:7",
      "after_tools:3:100",
      "after_model_call:4:150",
      "before_return:4:150",
    ]);
    expect(worker.history[2]).toMatchObject({ output: "echo: x (seen)" });
  });

  it("a checkpoint replacement swaps history and is announced", async () => {
    const client = createScriptedClient([{ text: "one" }]);
    const worker = new Worker({
      client,
      contextPolicy: {
        checkpoint: async (point, { history }) =>
          point === "before_return"
            ? { history: history.slice(-1), reason: "compaction", detail: { tokensBefore: 10 } }
            : undefined,
      },
    });
    const events = record(worker);
    await worker.run("hi");
    expect(shape(worker.history)).toEqual(["assistant:one"]);
    expect(events.find((e) => e.type === "history_replaced")).toMatchObject({
      reason: "compaction",
      detail: { tokensBefore: 10 },
    });
  });

  it("on context_overflow replaces history and retries once; a second overflow is a clear failure", async () => {
    const overflow = {
      error: new LlmError("context_overflow", "prompt is too long: 210000 tokens > 200000 maximum", {
        status: 400,
      }),
    };
    const policy: ContextPolicy = {
      onContextOverflow: async ({ history }) => ({ history: history.slice(-1), reason: "compaction" }),
    };
    const ok = new Worker({
      client: createScriptedClient([overflow, { text: "fits now" }]),
      contextPolicy: policy,
      history: [{ type: "message", role: "user", content: [{ type: "text", text: "old" }] }],
    });
    const events = record(ok);
    expect(await ok.run("new")).toMatchObject({ status: "completed" });
    expect(shape(ok.history)).toEqual(["user:new", "assistant:fits now"]);
    expect(events.find((e) => e.type === "retry")).toMatchObject({ source: "context_overflow", attempt: 2 });

    const twice = new Worker({ client: createScriptedClient([overflow, overflow]), contextPolicy: policy });
    const result = await twice.run("x");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("context_overflow");
    expect(result.error?.message).toMatch(/still too long .* after the context policy shrank it/);

    const none = await new Worker({ client: createScriptedClient([overflow]) }).run("x");
    expect(none.error?.message).toMatch(/no context policy is configured/);
  });

  it("a failing checkpoint is reported and does not lose the run", async () => {
    const worker = new Worker({
      client: createScriptedClient([{ text: "fine" }]),
      contextPolicy: {
        checkpoint: async () => {
          throw new Error("summary model unavailable");
        },
      },
    });
    const events = record(worker);
    expect((await worker.run("hi")).status).toBe("completed");
    expect(events.find((e) => e.type === "error")).toMatchObject({
      fatal: false,
      error: { code: "context_policy", message: expect.stringMatching(/summary model unavailable/) },
    });
  });
});
