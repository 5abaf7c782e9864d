/**
 * End to end through the real adapters (official SDKs) against the scripted
 * fake provider of @yoi/llm-client/testing, which validates every request
 * like the real API (each tool call answered, results after their calls).
 */
import { createClient, type ProviderKind } from "@yoi/llm-client";
import { frameLines, type ScriptedServer, startScriptedServer, WIRE_FORMATS } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import type { WorkerEvent } from "../src/events.ts";
import { createMemoryBlobStore } from "../src/testing/memory-blob-store.ts";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory, shape } from "./helpers.ts";

const MODELS: Record<ProviderKind, string> = {
  anthropic: "claude-sonnet-4-5",
  "openai-chat": "gpt-4.1-mini",
  "openai-responses": "gpt-4.1-mini",
  gemini: "gemini-2.5-flash",
};

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(provider: ProviderKind, script: Parameters<typeof startScriptedServer>[0]["script"]) {
  const server = await startScriptedServer({ provider, script, validate: true, splitPauseMs: 1 });
  servers.push(server);
  const events: WorkerEvent[] = [];
  const client = createClient({
    provider,
    model: MODELS[provider],
    apiKey: "test-key-not-secret",
    baseURL: server.baseURL,
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
  });
  return {
    server,
    client,
    events,
    attach: (w: Worker) => w.subscribe((e) => events.push(e)),
  };
}

const readFile = defineTool({
  name: "read_file",
  description: "Read a file.",
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }) =>
    path === "big.log"
      ? Array.from({ length: 200 }, (_, i) => `log line ${i + 1}`).join("\n")
      : `contents of ${path}`,
});

const PROVIDERS: ProviderKind[] = ["anthropic", "openai-chat", "openai-responses", "gemini"];

describe.each(PROVIDERS)("%s end to end", (provider) => {
  it("hears the client's warnings about its own requests, with nothing wired", async () => {
    const { server, events, attach, client } = await setup(provider, [{ type: "reply", text: "ok" }]);
    // None of these models takes a reasoning effort: the client drops it and says so.
    const worker = new Worker({ client, settings: { reasoning: { effort: "low" } } });
    attach(worker);
    expect((await worker.run("go")).status).toBe("completed");
    expect(server.rejections).toEqual([]);
    const warnings = events.flatMap((e) => (e.type === "warning" ? [e.warning.code] : []));
    expect(warnings).toEqual(["unsupported_setting"]);
  });

  it("runs a multi-turn loop with parallel tool calls and valid requests", async () => {
    const { server, client, events, attach } = await setup(provider, [
      {
        type: "reply",
        text: "Reading both.",
        toolCalls: [
          { id: "call_a", name: "read_file", arguments: { path: "a.ts" } },
          { id: "call_b", name: "read_file", arguments: { path: "b.ts" } },
        ],
        options: { usage: { inputTokens: 100, outputTokens: 20 } },
      },
      { type: "reply", toolCalls: [{ id: "call_c", name: "read_file", arguments: { path: "c.ts" } }] },
      {
        type: "reply",
        text: "All three files are small.",
        options: { usage: { inputTokens: 300, outputTokens: 9 } },
      },
    ]);
    const worker = new Worker({ client, tools: [readFile], system: "You are terse." });
    attach(worker);
    const result = await worker.run("read a.ts and b.ts");
    expect(server.rejections).toEqual([]);
    expect(result.status).toBe("completed");
    expect(result.turns).toBe(3);
    assertValidHistory(worker.history);
    const calls = worker.history.filter((i) => i.type === "tool_call");
    expect(calls.map((c) => c.type === "tool_call" && JSON.parse(c.arguments).path)).toEqual([
      "a.ts",
      "b.ts",
      "c.ts",
    ]);
    const results = worker.history.filter((i) => i.type === "tool_result");
    expect(results.map((r) => r.type === "tool_result" && r.output)).toEqual([
      "contents of a.ts",
      "contents of b.ts",
      "contents of c.ts",
    ]);
    expect(shape(worker.history).at(-1)).toBe("assistant:All three files are small.");
    expect(server.requests).toHaveLength(3);
    // the tool results went over the wire in the provider's shape
    expect(JSON.stringify(server.requests[1])).toContain("contents of b.ts");
    expect(JSON.stringify(server.requests[2])).toContain("contents of c.ts");
    const starts = events.flatMap((e) => (e.type === "tool_call_start" ? [e] : []));
    expect(starts[0]!.batchId).toBe(starts[1]!.batchId);
    expect(starts[2]!.batchId).not.toBe(starts[0]!.batchId);
    expect(starts.map((s) => s.callIndex)).toEqual([0, 1, 0]);
    expect(events.filter((e) => e.type === "usage").length).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(0);
  });

  it("stores a large output, sends only its summary, and reads it back with inspect", async () => {
    let blobId = "";
    const { server, client, attach } = await setup(provider, (index, body) => {
      if (index === 0)
        return {
          type: "reply",
          toolCalls: [{ id: "call_big", name: "read_file", arguments: { path: "big.log" } }],
        };
      if (index === 1) {
        blobId = /\[blob:([0-9a-f-]{36})\]/.exec(JSON.stringify(body))?.[1] ?? "missing";
        return {
          type: "reply",
          toolCalls: [
            { id: "call_i", name: "inspect", arguments: { blob_id: blobId, selector: "lines:100-102" } },
          ],
        };
      }
      return { type: "reply", text: "Line 100 says log line 100." };
    });
    const worker = new Worker({ client, tools: [readFile], blobStore: createMemoryBlobStore() });
    attach(worker);
    const result = await worker.run("what is on line 100 of big.log?");
    expect(server.rejections).toEqual([]);
    expect(result.status).toBe("completed");
    const second = JSON.stringify(server.requests[1]);
    expect(second).toContain(`[blob:${blobId}] text | 200 lines`);
    expect(second).not.toContain("log line 100");
    const inspectResult = worker.history.findLast((i) => i.type === "tool_result");
    expect(inspectResult).toMatchObject({
      output: `blob ${blobId}: lines 100-102 of 200\nlog line 100\nlog line 101\nlog line 102`,
    });
    expect(JSON.stringify(server.requests[2])).toContain("log line 101");
  });

  it("retries a stream that broke mid-way with a notice and commits only the complete answer", async () => {
    const wire = WIRE_FORMATS[provider];
    const longText = "This answer is long enough to be cut in the middle of its text deltas. ".repeat(4);
    const full = Buffer.from(
      frameLines(
        provider,
        wire.response(longText, [{ id: "call_x", name: "read_file", arguments: { path: "x.ts" } }]),
      ),
      "utf8",
    );
    const { server, client, events, attach } = await setup(provider, [
      {
        type: "reply",
        text: longText,
        toolCalls: [{ id: "call_x", name: "read_file", arguments: { path: "x.ts" } }],
        truncateBytes: Math.floor(full.length * 0.7),
        end: "close",
      },
      {
        type: "reply",
        text: longText,
        toolCalls: [{ id: "call_x2", name: "read_file", arguments: { path: "x.ts" } }],
      },
      { type: "reply", text: "done" },
    ]);
    const worker = new Worker({ client, tools: [readFile] });
    attach(worker);
    const result = await worker.run("go");
    expect(server.rejections).toEqual([]);
    expect(result.status).toBe("completed");
    assertValidHistory(worker.history);
    // one complete call (Gemini has no call ids on the wire, so count instead of naming it)
    expect(worker.history.filter((i) => i.type === "tool_call")).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
    const retries = events.filter((e) => e.type === "retry");
    expect(retries.length).toBeGreaterThanOrEqual(1);
    // The client retried from the start and said the broken attempt's output was void.
    expect(retries.some((r) => r.type === "retry" && r.source === "client" && r.discarded)).toBe(true);
    expect(shape(worker.history).filter((s) => s.startsWith("assistant:This answer"))).toHaveLength(1);
  });

  it("cancels mid-stream and leaves a history the next request accepts", async () => {
    const ac = new AbortController();
    const { server, client, attach } = await setup(provider, [
      { type: "reply", text: "partial answer that hangs", end: "hang" },
      { type: "reply", text: "fresh answer" },
    ]);
    const worker = new Worker({ client });
    attach(worker);
    worker.subscribe((e) => {
      if (e.type === "text_delta") ac.abort();
    });
    const cancelled = await worker.run("first", { signal: ac.signal });
    expect(cancelled.status).toBe("cancelled");
    const second = await worker.run("second");
    expect(second.status).toBe("completed");
    expect(server.rejections).toEqual([]);
    expect(shape(worker.history).at(-1)).toBe("assistant:fresh answer");
  });
});

describe("client retries reach the worker's events", () => {
  it("a 503 before the first event is retried by the client and shown as a retry event", async () => {
    const { server, client, events, attach } = await setup("anthropic", [
      { type: "error", status: 503, message: "upstream overloaded" },
      { type: "reply", text: "hello" },
    ]);
    const worker = new Worker({ client });
    attach(worker);
    expect((await worker.run("hi")).status).toBe("completed");
    expect(server.requests).toHaveLength(2);
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ source: "client", attempt: 2 });
    expect(retry).toMatchObject({ discarded: false, code: "overloaded" });
    expect(retry?.type === "retry" && retry.reason).toMatch(/upstream overloaded/);
    expect(JSON.stringify(events)).not.toContain("test-key-not-secret");
  });

  it("a failure that outlasted the client's retries is not sent again by the worker", async () => {
    const { server, client } = await setup("anthropic", () => ({
      type: "error",
      status: 503,
      message: "upstream overloaded",
    }));
    const worker = new Worker({ client });
    const result = await worker.run("hi");
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "overloaded" });
    // The client's policy (4 attempts by default) is the only one that ran:
    // no stream retries multiplied it.
    expect(server.requests).toHaveLength(4);
  });

  it("a cancel during the client's backoff stops the run at once", async () => {
    const { server, client } = await setup("anthropic", [
      { type: "error", status: 503, message: "busy", headers: { "retry-after": "50" } },
      { type: "reply", text: "never" },
    ]);
    const ac = new AbortController();
    const worker = new Worker({ client });
    worker.subscribe((e) => {
      if (e.type === "retry") ac.abort();
    });
    const result = await worker.run("hi", { signal: ac.signal });
    expect(result.status).toBe("cancelled");
    expect(worker.history).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });
});
