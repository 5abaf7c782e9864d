import { systemMessage, userMessage } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { Hook } from "../src/hook.ts";
import type { Interceptor } from "../src/interceptor.ts";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, echoTool, record, shape } from "./helpers.ts";

describe("Interceptor", () => {
  it("ContinueWith items land right after the user item and reach the first request", async () => {
    const client = createScriptedClient([{ text: "seen the file" }]);
    const fileRef: Interceptor = {
      onPromptSubmit: () => ({
        action: "continue_with",
        items: [systemMessage("[File: a.ts]\nconst a = 1;"), systemMessage("[File: b.ts]\nb")],
      }),
    };
    const worker = new Worker({
      client,
      interceptors: [fileRef],
      history: [
        userMessage("earlier"),
        { type: "message", role: "assistant", content: [{ type: "text", text: "ok" }] },
      ],
    });
    const events = record(worker);
    await worker.run("look at @a.ts and @b.ts");
    expect(shape(worker.history)).toEqual([
      "user:earlier",
      "assistant:ok",
      "user:look at @a.ts and @b.ts",
      "system:[File: a.ts]\nconst a = 1;",
      "system:[File: b.ts]\nb",
      "assistant:seen the file",
    ]);
    expect(shape(client.requests[0]!.items)).toEqual(shape(worker.history.slice(0, 5)));
    const reasons = events.flatMap((e) => (e.type === "item_committed" ? [`${e.index}:${e.reason}`] : []));
    expect(reasons).toEqual(["2:user", "3:interceptor", "4:interceptor", "5:assistant"]);
  });

  it("Cancel stops before any request and commits nothing", async () => {
    const client = createScriptedClient([{ text: "never" }]);
    const worker = new Worker({
      client,
      interceptors: [{ onPromptSubmit: () => ({ action: "cancel", reason: "empty after resolving refs" }) }],
    });
    const events = record(worker);
    const result = await worker.run("hi");
    expect(result).toEqual({
      status: "cancelled",
      reason: "empty after resolving refs",
      turns: 0,
      usage: {},
    });
    expect(client.requests).toHaveLength(0);
    expect(worker.history).toEqual([]);
    expect(events.some((e) => e.type === "item_committed" || e.type === "request_start")).toBe(false);
  });

  it("beforeRequest may replace the request or cancel", async () => {
    const client = createScriptedClient([{ text: "a" }]);
    const worker = new Worker({
      client,
      interceptors: [
        {
          beforeRequest: ({ request }) => ({
            action: "continue",
            request: { ...request, system: "injected" },
          }),
        },
      ],
    });
    await worker.run("x");
    expect(client.requests[0]!.system).toBe("injected");
    const cancelling = new Worker({
      client,
      interceptors: [{ beforeRequest: () => ({ action: "cancel", reason: "budget" }) }],
    });
    expect(await cancelling.run("x")).toMatchObject({ status: "cancelled", reason: "budget", turns: 0 });
    expect(cancelling.history).toEqual([]);
  });

  it("afterToolCall may replace a result; onTurnEnd ContinueWithMessages asks the model again", async () => {
    const client = createScriptedClient([
      { toolCalls: [{ id: "c", name: "echo", args: { text: "secret" } }] },
      { text: "first end" },
      { text: "second end" },
    ]);
    let turnEnds = 0;
    const worker = new Worker({
      client,
      tools: [echoTool],
      interceptors: [
        {
          afterToolCall: (_call, result) => ({
            action: "replace",
            output: result.output.replace("secret", "[redacted]"),
          }),
          onTurnEnd: () =>
            ++turnEnds === 1
              ? { action: "continue_with_messages", items: [userMessage("also check the tests")] }
              : { action: "finish" },
        },
      ],
    });
    const result = await worker.run("go");
    expect(result).toMatchObject({ status: "completed", turns: 3 });
    expect(worker.history.find((i) => i.type === "tool_result")).toMatchObject({
      output: "echo: [redacted]",
    });
    expect(shape(worker.history).slice(-3)).toEqual([
      "assistant:first end",
      "user:also check the tests",
      "assistant:second end",
    ]);
  });

  it("a call whose arguments could not be used is answered with that error and put to no interceptor", async () => {
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "cut", name: "echo", args: '{"text": "a stream cut sh' },
          { id: "ok", name: "echo", args: { text: "fine" } },
        ],
      },
      { text: "done" },
    ]);
    const asked: string[] = [];
    const ask: Interceptor = {
      beforeToolCall: (call) => {
        asked.push(call.callId);
        return undefined;
      },
    };
    const worker = new Worker({ client, tools: [echoTool], interceptors: [ask] });
    expect(await worker.run("go")).toMatchObject({ status: "completed" });
    // A permission question about the broken call could only be answered with a refusal: it is never asked.
    expect(asked).toEqual(["ok"]);
    const results = worker.history.flatMap((i) => (i.type === "tool_result" ? [i] : []));
    expect(results.find((r) => r.callId === "cut")).toMatchObject({ isError: true });
    expect(results.find((r) => r.callId === "cut")?.output).toMatch(
      /^The arguments of this echo call could not be used/,
    );
    expect(results.find((r) => r.callId === "ok")).toMatchObject({ isError: false, output: "echo: fine" });
    assertValidHistory(worker.history);
  });

  it("a hook's continue with args runs the call with them; later hooks see them, history keeps the model's", async () => {
    const client = createScriptedClient([
      { toolCalls: [{ id: "c", name: "echo", args: { text: "from the model" } }] },
      { text: "done" },
    ]);
    const seenLater: unknown[] = [];
    const edit: Hook = {
      beforeToolCall: (call) =>
        call.name === "echo" ? { action: "continue", args: { text: "edited" } } : undefined,
    };
    const observe: Hook = {
      beforeToolCall: (call) => {
        seenLater.push(call.args);
        return undefined;
      },
    };
    const worker = new Worker({ client, tools: [echoTool], hooks: [edit, observe] });
    expect(await worker.run("go")).toMatchObject({ status: "completed" });
    expect(seenLater).toEqual([{ text: "edited" }]);
    expect(worker.history.find((i) => i.type === "tool_result")).toMatchObject({ output: "echo: edited" });
    expect(worker.history.find((i) => i.type === "tool_call")).toMatchObject({
      arguments: JSON.stringify({ text: "from the model" }),
    });
    // Edited arguments are checked against the schema like the model's.
    const bad = new Worker({
      client: createScriptedClient([
        { toolCalls: [{ id: "d", name: "echo", args: { text: "ok" } }] },
        { text: "done" },
      ]),
      tools: [echoTool],
      hooks: [{ beforeToolCall: () => ({ action: "continue", args: { text: 42 } }) }],
    });
    await bad.run("go");
    expect(bad.history.find((i) => i.type === "tool_result")).toMatchObject({ isError: true });
  });

  it("Pause before a tool call leaves the batch pending; resume runs it first without a new user message", async () => {
    const ran: string[] = [];
    const tool = defineTool({
      name: "rm",
      description: "remove",
      inputSchema: z.object({ path: z.string() }),
      execute: ({ path }, ctx) => {
        ran.push(`${path}@${ctx.callIndex}:${ctx.batchId}`);
        return `removed ${path}`;
      },
    });
    let approved = false;
    const batchIds: string[] = [];
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "a", name: "rm", args: { path: "x" } },
          { id: "b", name: "rm", args: { path: "y" } },
        ],
      },
      { text: "removed both" },
    ]);
    const worker = new Worker({
      client,
      tools: [tool],
      interceptors: [
        {
          beforeToolCall: (call) => {
            batchIds.push(call.batchId);
            return approved ? { action: "continue" } : { action: "pause", reason: "awaiting approval" };
          },
        },
      ],
    });
    const first = await worker.run("clean up");
    expect(first).toMatchObject({ status: "paused", reason: "awaiting approval", turns: 1 });
    expect(worker.pausedReason).toBe("awaiting approval");
    expect(ran).toEqual([]);
    expect(shape(worker.history)).toEqual(["user:clean up", "call:rm#a", "call:rm#b"]);
    approved = true;
    const events = record(worker);
    const second = await worker.resume();
    expect(second).toMatchObject({ status: "completed", turns: 1 });
    expect(ran.map((r) => r.split(":")[0])).toEqual(["x@0", "y@1"]);
    // the resumed batch keeps its identity
    expect(new Set([...batchIds, ...ran.map((r) => r.split(":")[1])]).size).toBe(1);
    expect(shape(worker.history)).toEqual([
      "user:clean up",
      "call:rm#a",
      "call:rm#b",
      "result:a",
      "result:b",
      "assistant:removed both",
    ]);
    expect(
      events.filter((e) => e.type === "item_committed").map((e) => e.type === "item_committed" && e.reason),
    ).not.toContain("user");
    expect(worker.pausedReason).toBeUndefined();
  });

  it("a new prompt while paused answers the pending calls first, so history stays valid", async () => {
    const client = createScriptedClient([
      { toolCalls: [{ id: "a", name: "echo", args: { text: "1" } }] },
      { text: "fine" },
    ]);
    let pause = true;
    const worker = new Worker({
      client,
      tools: [echoTool],
      interceptors: [{ beforeToolCall: () => (pause ? { action: "pause" } : undefined) }],
    });
    expect((await worker.run("one")).status).toBe("paused");
    pause = false;
    await worker.run("never mind");
    assertValidHistory(worker.history);
    expect(worker.history[2]).toMatchObject({
      type: "tool_result",
      callId: "a",
      isError: true,
      output: "Tool call echo was not run: it was superseded by a new message before it ran.",
    });
    expect(shape(worker.history).slice(3)).toEqual(["user:never mind", "assistant:fine"]);
  });

  it("Pause at turn end; resume with nothing owed completes without a model call", async () => {
    const client = createScriptedClient([{ text: "here you go" }]);
    const worker = new Worker({
      client,
      interceptors: [{ onTurnEnd: () => ({ action: "pause", reason: "review" }) }],
    });
    expect(await worker.run("hi")).toMatchObject({ status: "paused", reason: "review" });
    expect(await worker.resume()).toMatchObject({ status: "completed", turns: 0 });
    expect(client.requests).toHaveLength(1);
  });
});

describe("Hook (read-only)", () => {
  it("prompt Cancel, tool Deny and Abort, and observe-only callbacks", async () => {
    const observed: string[] = [];
    const hook: Hook = {
      name: "policy",
      onPromptSubmit: ({ input }) =>
        JSON.stringify(input).includes("forbidden")
          ? { action: "cancel", reason: "blocked word" }
          : { action: "continue" },
      beforeToolCall: (call) =>
        call.name === "echo" && (call.args as { text: string }).text === "deny"
          ? { action: "deny", message: "Denied by policy: echo deny." }
          : { action: "continue" },
      afterToolCall: (call, result) => {
        observed.push(`${call.callId}:${result.outcome}`);
      },
      onTurnEnd: ({ turnIndex }) => {
        observed.push(`end:${turnIndex}`);
      },
    };
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "d", name: "echo", args: { text: "deny" } },
          { id: "k", name: "echo", args: { text: "ok" } },
        ],
      },
      { text: "done" },
    ]);
    const worker = new Worker({ client, tools: [echoTool], hooks: [hook] });
    expect(await worker.run("forbidden")).toMatchObject({ status: "cancelled", reason: "blocked word" });
    expect(client.requests).toHaveLength(0);
    await worker.run("go");
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results.map((r) => [r.callId, r.output, r.isError])).toEqual([
      ["d", "Denied by policy: echo deny.", true],
      ["k", "echo: ok", false],
    ]);
    expect(observed.sort()).toEqual(["d:skipped", "end:1", "k:ok"]);

    const aborting = new Worker({
      client: createScriptedClient([{ toolCalls: [{ id: "z", name: "echo", args: { text: "x" } }] }]),
      tools: [echoTool],
      hooks: [{ beforeToolCall: () => ({ action: "abort", reason: "kill switch" }) }],
    });
    expect(await aborting.run("go")).toMatchObject({ status: "cancelled", reason: "kill switch" });
    assertValidHistory(aborting.history);
  });

  it("interceptors run before hooks; a hook cannot add items", async () => {
    const order: string[] = [];
    const worker = new Worker({
      client: createScriptedClient([{ text: "x" }]),
      interceptors: [
        {
          onPromptSubmit: () => {
            order.push("interceptor");
            return undefined;
          },
        },
      ],
      // A hook that tries to return an interceptor action is ignored (types forbid it; runtime drops it).
      hooks: [
        {
          onPromptSubmit: () => {
            order.push("hook");
            return { action: "continue_with", items: [userMessage("sneaky")] } as never;
          },
        },
      ],
    });
    await worker.run("hi");
    expect(order).toEqual(["interceptor", "hook"]);
    expect(shape(worker.history)).toEqual(["user:hi", "assistant:x"]);
  });
});
