import { LlmError, userMessage } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool, ToolError } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, echoTool, record, shape, types } from "./helpers.ts";

describe("Worker loop", () => {
  it("runs a multi-turn tool loop and commits items in model order", async () => {
    const client = createScriptedClient([
      {
        thinking: "let me echo",
        thinkingSignature: "sig",
        text: "Calling.",
        toolCalls: [{ id: "c1", name: "echo", args: { text: "hi" } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
      { text: "Done: echo: hi", usage: { inputTokens: 30, outputTokens: 7 } },
    ]);
    const worker = new Worker({ client, tools: [echoTool], system: "be brief" });
    const events = record(worker);
    const result = await worker.run("say hi");
    expect(result).toEqual({ status: "completed", turns: 2, usage: { inputTokens: 40, outputTokens: 12 } });
    expect(shape(worker.history)).toEqual([
      "user:say hi",
      "reasoning:let me echo",
      "assistant:Calling.",
      "call:echo#c1",
      "result:c1",
      "assistant:Done: echo: hi",
    ]);
    expect(worker.history[1]).toMatchObject({ type: "reasoning", signature: "sig", provider: "anthropic" });
    expect(worker.history[4]).toMatchObject({ output: "echo: hi", isError: false, name: "echo" });
    // The second request carries the whole history, the system prompt and the tool's JSON Schema.
    expect(client.requests).toHaveLength(2);
    expect(client.requests[1]!.items).toHaveLength(5);
    expect(client.requests[0]!.system).toBe("be brief");
    expect(client.requests[0]!.tools).toEqual([
      {
        name: "echo",
        description: "Echo the text back.",
        parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    ]);
    expect(client.requests[0]!.settings?.maxTokens).toBe(8192);
    const committed = events.flatMap((e) => (e.type === "item_committed" ? [`${e.index}:${e.reason}`] : []));
    expect(committed).toEqual([
      "0:user",
      "1:assistant",
      "2:assistant",
      "3:assistant",
      "4:tool_result",
      "5:assistant",
    ]);
    expect(
      types(events).filter((t) => !["item_committed", "text_delta", "thinking_delta"].includes(t)),
    ).toEqual([
      "run_start",
      "request_start",
      "usage",
      "turn_end",
      "tool_call_start",
      "tool_call_end",
      "request_start",
      "usage",
      "turn_end",
      "run_end",
    ]);
    expect(
      events.filter((e) => e.type === "text_delta").map((e) => e.type === "text_delta" && e.text),
    ).toEqual(["Calling.", "Done: echo: hi"]);
    const end = events.find((e) => e.type === "tool_call_end");
    expect(end).toMatchObject({
      callId: "c1",
      name: "echo",
      isError: false,
      outcome: "ok",
      preview: "echo: hi",
      outputBytes: 8,
    });
    expect(end?.type === "tool_call_end" && end.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("gives the model readable errors for invalid args, unknown tools, throwing tools and timeouts", async () => {
    const throwing = defineTool({
      name: "boom",
      description: "fails",
      inputSchema: z.object({}),
      execute: () => {
        throw new Error("disk on fire");
      },
    });
    const clean = defineTool({
      name: "clean",
      description: "fails cleanly",
      inputSchema: z.object({}),
      execute: () => {
        throw new ToolError("No such file: a.txt. List the directory first.");
      },
    });
    const slow = defineTool({
      name: "slow",
      description: "never ends",
      inputSchema: z.object({}),
      timeoutMs: 20,
      execute: (_input, ctx) =>
        new Promise<string>((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))),
        ),
    });
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "a", name: "echo", args: { text: 42 } },
          { id: "b", name: "nope", args: {} },
          { id: "c", name: "boom", args: {} },
          { id: "d", name: "slow", args: {} },
          { id: "e", name: "echo", args: "{not json" },
          { id: "f", name: "clean", args: {} },
        ],
      },
      { text: "ok" },
    ]);
    const worker = new Worker({ client, tools: [echoTool, throwing, slow, clean] });
    const events = record(worker);
    const result = await worker.run("go");
    expect(result.status).toBe("completed");
    assertValidHistory(worker.history);
    const results = Object.fromEntries(
      worker.history.flatMap((i) => (i.type === "tool_result" ? [[i.callId, i]] : [])),
    );
    expect(results.a).toMatchObject({ isError: true });
    expect(results.a!.output).toBe(
      "Invalid arguments for echo:\n- text: Invalid input: expected string, received number\nFix the arguments and call echo again.",
    );
    expect(results.b!.output).toBe(
      'Unknown tool "nope". Available tools: echo, boom, slow, clean. Call one of these by its exact name.',
    );
    expect(results.c!.output).toBe("Tool boom failed: disk on fire");
    expect(results.d!.output).toMatch(/^Tool slow timed out after 20 ms/);
    expect(results.e!.output).toMatch(
      /The arguments of this echo call could not be used: the arguments are not valid JSON .* You sent: "\{not json"/,
    );
    expect(results.f!.output).toBe("No such file: a.txt. List the directory first.");
    // the call with broken JSON is committed with "{}" so the history replays
    expect(worker.history.find((i) => i.type === "tool_call" && i.callId === "e")).toMatchObject({
      arguments: "{}",
    });
    const outcomes = events.flatMap((e) => (e.type === "tool_call_end" ? [`${e.callId}:${e.outcome}`] : []));
    expect(outcomes.sort()).toEqual([
      "a:invalid_args",
      "b:unknown_tool",
      "c:error",
      "d:timeout",
      "e:invalid_args",
      "f:error",
    ]);
  });

  it("stops at maxTurns with valid history and resumes from there", async () => {
    const loop = { toolCalls: [{ name: "echo", args: { text: "again" } }] };
    const client = createScriptedClient([loop, loop, loop, { text: "finally" }]);
    const worker = new Worker({ client, tools: [echoTool], maxTurns: 2 });
    const result = await worker.run("loop");
    expect(result).toMatchObject({ status: "max_turns", turns: 2 });
    assertValidHistory(worker.history);
    expect(worker.history.at(-1)?.type).toBe("tool_result");
    const resumed = await worker.resume();
    expect(resumed).toMatchObject({ status: "completed", turns: 2 });
    expect(shape(worker.history).at(-1)).toBe("assistant:finally");
  });

  it("accepts Items as input and a history to resume from", async () => {
    const client = createScriptedClient([{ text: "second answer" }]);
    const worker = new Worker({
      client,
      history: [
        userMessage("first"),
        { type: "message", role: "assistant", content: [{ type: "text", text: "first answer" }] },
      ],
    });
    await worker.run([userMessage("second")]);
    expect(shape(worker.history)).toEqual([
      "user:first",
      "assistant:first answer",
      "user:second",
      "assistant:second answer",
    ]);
  });

  it("fails clearly when the client throws before the first event, keeping the prompt for a resume", async () => {
    const client = createScriptedClient([
      { error: new LlmError("auth", "invalid x-api-key", { status: 401 }) },
      { text: "hello" },
    ]);
    const worker = new Worker({ client });
    const events = record(worker);
    const result = await worker.run("hi");
    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      code: "auth",
      message: "invalid x-api-key",
      retryable: false,
      status: 401,
    });
    expect(events.find((e) => e.type === "error")).toMatchObject({ fatal: true });
    expect(shape(worker.history)).toEqual(["user:hi"]);
    const again = await worker.resume();
    expect(again.status).toBe("completed");
    expect(shape(worker.history)).toEqual(["user:hi", "assistant:hello"]);
  });

  it("rejects a second concurrent run and bad options", async () => {
    const client = createScriptedClient([{ text: "a" }]);
    const worker = new Worker({ client });
    const first = worker.run("one");
    await expect(worker.run("two")).rejects.toThrow(/already in progress/);
    await first;
    await expect(worker.run("")).rejects.toThrow(/input is empty/);
    expect(() => new Worker({ client, maxTurns: 0 })).toThrow(/maxTurns must be a positive number/);
    expect(() => new Worker({ client, tools: [echoTool, echoTool] })).toThrow(/two tools are named "echo"/);
    expect(
      () =>
        new Worker({
          client,
          tools: [
            defineTool({ name: "bad name", description: "", inputSchema: z.object({}), execute: () => "" }),
          ],
        }),
    ).toThrow(/Tool name "bad name" is invalid/);
    expect(
      () =>
        new Worker({
          client,
          tools: [defineTool({ name: "s", description: "", inputSchema: z.string(), execute: () => "" })],
        }),
    ).toThrow(/inputSchema must be a zod object/);
  });

  it("registers inspect only with a BlobStore, and offers the events() iterator", async () => {
    const client = createScriptedClient([{ text: "x" }]);
    expect(new Worker({ client }).tools.map((t) => t.name)).toEqual([]);
    const { createMemoryBlobStore } = await import("../src/testing/memory-blob-store.ts");
    const worker = new Worker({ client, blobStore: createMemoryBlobStore() });
    expect(worker.tools.map((t) => t.name)).toEqual(["inspect"]);
    const ac = new AbortController();
    const seen: string[] = [];
    const consume = (async () => {
      for await (const event of worker.events({ signal: ac.signal })) {
        seen.push(event.type);
        if (event.type === "run_end") ac.abort();
      }
    })();
    await worker.run("hi");
    await consume;
    expect(seen[0]).toBe("run_start");
    expect(seen.at(-1)).toBe("run_end");
  });
});

describe("event log", () => {
  it("replaying item_committed and history_replaced reproduces the history", async () => {
    const { createScriptedClient: scripted } = await import("../src/testing/scripted-client.ts");
    const client = scripted([
      {
        toolCalls: [
          { name: "echo", args: { text: "a" } },
          { name: "echo", args: { text: "b" } },
        ],
      },
      { text: "one" },
      { text: "two" },
    ]);
    let compactions = 0;
    const worker = new Worker({
      client,
      tools: [echoTool],
      contextPolicy: {
        checkpoint: async (point, { history }) =>
          point === "after_tools" && compactions++ === 0
            ? { history: [userMessage("summary"), ...history.slice(1)], reason: "compaction" }
            : undefined,
      },
    });
    const replay: unknown[] = [];
    worker.subscribe((e) => {
      if (e.type === "item_committed") {
        expect(e.index).toBe(replay.length);
        replay.push(e.item);
      } else if (e.type === "history_replaced") {
        replay.splice(0, replay.length, ...e.items);
      }
    });
    await worker.run("first");
    const ac = new AbortController();
    ac.abort();
    await worker.run("cancelled", { signal: ac.signal });
    await worker.run("second");
    expect(replay).toEqual(worker.history);
    expect(shape(worker.history)[0]).toBe("user:summary");
  });
});

describe("tool return values", () => {
  it("tolerates JS tools returning objects or nothing, and stores large JSON as structured content", async () => {
    const { createMemoryBlobStore } = await import("../src/testing/memory-blob-store.ts");
    const store = createMemoryBlobStore();
    const loose = defineTool({
      name: "loose",
      description: "returns whatever",
      inputSchema: z.object({ kind: z.enum(["object", "nothing", "big"]) }),
      // biome-ignore lint/suspicious/noExplicitAny: simulates an untyped JavaScript tool.
      execute: ({ kind }): any =>
        kind === "object"
          ? { ok: true }
          : kind === "nothing"
            ? undefined
            : Array.from({ length: 100 }, (_, i) => ({ i, name: `entry ${i}` })),
    });
    const client = createScriptedClient([
      {
        toolCalls: [
          { id: "o", name: "loose", args: { kind: "object" } },
          { id: "n", name: "loose", args: { kind: "nothing" } },
          { id: "b", name: "loose", args: { kind: "big" } },
        ],
      },
      { text: "ok" },
    ]);
    const worker = new Worker({ client, tools: [loose], blobStore: store });
    await worker.run("go");
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results[0]).toMatchObject({ output: '{"ok":true}', isError: false });
    expect(results[1]).toMatchObject({ output: "(no output)", isError: false });
    expect(results[2]!.type === "tool_result" && results[2]!.output).toMatch(
      /^\[blob:[0-9a-f-]{36}\] json_array \| 100 entries\n── schema ──\ni: number\nname: string/,
    );
    expect(results[2]).toMatchObject({ outputRef: { byteSize: expect.any(Number) } });
    expect([...store.blobs.values()][0]).toMatchObject({ kind: "structured" });
  });
});
