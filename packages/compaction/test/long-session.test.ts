/**
 * End to end: a long session through the real Worker, the real Anthropic
 * adapter (official SDK) and the scripted fake provider with request
 * validation. The model's context is small (declared in config `models`),
 * so the session crosses the compaction threshold several times, tool
 * outputs get trimmed, a trimmed output is read back by ref, and every
 * request stays valid.
 */
import { createClient, type Item, type ToolResultItem } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { defineTool, Worker, type WorkerEvent } from "@yoi/llm-worker";
import { buildModelCatalog, ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { createContextPolicy, isCompactionMessage, SUMMARY_HEADER } from "../src/index.ts";
import { TestBlobStore } from "./support/memory-store.ts";

const WINDOW = 24_000;
const config = ConfigSchema.parse({
  models: { "tiny-context-model": { provider: "anthropic", contextWindow: WINDOW, maxOutputTokens: 2_000 } },
  // The in-context view of stored outputs: the most context pressure, so trimming and compaction both happen.
  toolOutputCache: { contextBudgetTokens: 8_000, storedView: "view" },
});

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface AnthropicBody {
  tools?: unknown[];
  system?: unknown;
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
}

/** Rough prompt size the fake provider reports, so usage tracks what is really sent. */
function promptTokens(body: AnthropicBody): number {
  return Math.ceil(JSON.stringify(body).length / 4);
}

function isSummaryRequest(body: AnthropicBody): boolean {
  return body.tools === undefined && JSON.stringify(body.messages.at(-1)).includes("<summary></summary>");
}

/** The fake model: reads files in rounds, reads a trimmed output back once, answers, and summarizes when asked. */
function model(stats: { summaries: number; contextPeak: number; readBack?: string }) {
  let call = 0;
  return (_index: number, raw: unknown): ScriptStep => {
    const body = raw as AnthropicBody;
    const input = promptTokens(body);
    stats.contextPeak = Math.max(stats.contextPeak, input);
    if (input > WINDOW) {
      return {
        type: "error",
        status: 400,
        message: `prompt is too long: ${input} tokens > ${WINDOW} maximum`,
      };
    }
    const usage = { inputTokens: input, outputTokens: 60 };
    if (isSummaryRequest(body)) {
      stats.summaries++;
      return {
        type: "reply",
        text: `<retain>\nfiles read so far are in refs\n</retain>\n<summary>\nSummary #${stats.summaries}: the user asks for file reviews; files were read; continue with the next request.\n</summary>`,
        options: { usage },
      };
    }
    const last = body.messages.at(-1)!;
    const lastText = JSON.stringify(last.content);
    const text = JSON.stringify(body.messages);
    const trimmed = /\[tool output trimmed; ref=([0-9a-f-]{36})\]/.exec(text);
    if (stats.readBack === undefined && trimmed && lastText.includes("tool_result")) {
      stats.readBack = trimmed[1]!;
      return {
        type: "reply",
        text: "Let me look at that earlier output again.",
        toolCalls: [
          {
            id: `toolu_rb_${++call}`,
            name: "tool_output_cache",
            arguments: { ref_id: trimmed[1]!, limit: 3 },
          },
        ],
        options: { usage },
      };
    }
    // Three reads per user request, then an answer.
    const reads = (lastText.match(/tool_result/g) ?? []).length > 0 ? countRecentReads(body) : 0;
    if (reads < 3) {
      const id = `toolu_${++call}`;
      return {
        type: "reply",
        text: "",
        toolCalls: [{ id, name: "read_file", arguments: { path: `src/file-${call}.ts` } }],
        options: { usage },
      };
    }
    return {
      type: "reply",
      text: `Reviewed these files; all fine. ${"Details of the review. ".repeat(90)}`,
      options: { usage },
    };
  };
}

/** read_file results since the last plain user text message. */
function countRecentReads(body: AnthropicBody): number {
  let reads = 0;
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i]!;
    if (message.role !== "user") continue;
    const blocks =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (blocks.some((b) => b.type === "text" && !String(b.text).startsWith("["))) break;
    reads += blocks.filter((b) => b.type === "tool_result").length;
  }
  return reads;
}

const readFile = defineTool({
  name: "read_file",
  description: "Read a file.",
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }) =>
    Array.from(
      { length: 120 },
      (_, i) => `${path}:${i + 1} export const value${i} = ${i}; // some code here`,
    ).join("\n"),
});

describe("a long session on the fake provider", () => {
  it("crosses the threshold several times and keeps working, with valid requests throughout", async () => {
    const stats = { summaries: 0, contextPeak: 0 } as {
      summaries: number;
      contextPeak: number;
      readBack?: string;
    };
    const server = await startScriptedServer({ provider: "anthropic", validate: true, script: model(stats) });
    servers.push(server);
    const client = createClient({
      provider: "anthropic",
      model: "tiny-context-model",
      apiKey: "test-key-not-secret",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    const store = new TestBlobStore();
    const policy = createContextPolicy({
      blobStore: store,
      client,
      catalog: buildModelCatalog(config),
      toolOutputCache: config.toolOutputCache,
      compaction: config.compaction,
    });
    const worker = new Worker({
      client,
      system: "You review files.",
      tools: [readFile, ...policy.tools],
      blobStore: store,
      contextPolicy: policy,
      settings: { maxTokens: 1_000 },
    });
    const events: WorkerEvent[] = [];
    worker.subscribe((e) => events.push(e));

    const pasted = "const pasted = 1; // a snippet the user pasted\n".repeat(80);
    for (let i = 1; i <= 24; i++) {
      const run = await worker.run(`Review batch ${i} of files. Context:\n${pasted}`);
      expect(run.status, JSON.stringify(run.error)).toBe("completed");
    }

    const replaced = events.filter((e) => e.type === "history_replaced");
    const compactions = replaced.filter((e) => e.type === "history_replaced" && e.reason === "compaction");
    const trims = replaced.filter((e) => e.type === "history_replaced" && e.reason === "trim");
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    expect(trims.length).toBeGreaterThanOrEqual(1);
    expect(stats.summaries).toBe(compactions.length);
    // Every request was valid and none overflowed; no checkpoint failed.
    expect(server.rejections).toEqual([]);
    expect(stats.contextPeak).toBeLessThanOrEqual(WINDOW);
    expect(events.filter((e) => e.type === "error")).toEqual([]);

    // The history is compacted, valid, and the summary request never entered it.
    const history = worker.history;
    expect(isCompactionMessage(history[1]!)).toBe(true);
    expect(JSON.stringify(history)).toContain(SUMMARY_HEADER);
    expect(JSON.stringify(history)).not.toContain("<summary></summary>");
    assertPaired(history);

    // A trimmed output was read back by ref through tool_output_cache.
    expect(stats.readBack).toBeDefined();
    const readBackResults = server.requests
      .map((b) => JSON.stringify(b))
      .filter((b) => b.includes(`lines 1-3 of 120; continue with tool_output_cache`));
    expect(readBackResults.length).toBeGreaterThan(0);
    // The worker's Stored blobs were reused as refs: no output was stored twice.
    const blobs = [...store.blobs.values()].map((c) => JSON.stringify(c));
    expect(new Set(blobs).size).toBe(blobs.length);
    // Every tool result in history has a ref that resolves in the store.
    for (const item of history) {
      if (item.type !== "tool_result") continue;
      expect(item.outputRef, (item as ToolResultItem).output).toBeDefined();
      expect(await store.exists(item.outputRef!.id)).toBe(true);
    }
  }, 60_000);
});

function assertPaired(history: readonly Item[]): void {
  const calls = new Set<string>();
  for (const item of history) {
    if (item.type === "tool_call") calls.add(item.callId);
    if (item.type === "tool_result") expect(calls.has(item.callId), item.callId).toBe(true);
  }
}

describe("a context overflow from the provider", () => {
  async function session(compaction: { auto?: boolean; enabled?: boolean }) {
    let overflowSent = false;
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (_index, raw) => {
        const body = raw as AnthropicBody;
        const usage = { inputTokens: promptTokens(body), outputTokens: 20 };
        if (isSummaryRequest(body))
          return { type: "reply", text: "<summary>Earlier: batches reviewed.</summary>", options: { usage } };
        // The third user request overflows once (the provider counts differently from our estimate).
        if (!overflowSent && JSON.stringify(body.messages.at(-1)).includes("batch 3")) {
          overflowSent = true;
          return { type: "error", status: 400, message: "prompt is too long: 30000 tokens > 24000 maximum" };
        }
        return { type: "reply", text: "Done.", options: { usage } };
      },
    });
    servers.push(server);
    const client = createClient({
      provider: "anthropic",
      model: "tiny-context-model",
      apiKey: "test-key-not-secret",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    const policy = createContextPolicy({
      blobStore: new TestBlobStore(),
      client,
      catalog: buildModelCatalog(config),
      compaction,
    });
    const worker = new Worker({ client, contextPolicy: policy, tools: policy.tools });
    const events: WorkerEvent[] = [];
    worker.subscribe((e) => events.push(e));
    const runs = [];
    const pasted = "a line of a pasted log\n".repeat(800); // ~4.6k tokens per request
    for (let i = 1; i <= 3; i++) runs.push(await worker.run(`Review batch ${i}.\n${pasted}`));
    return { server, worker, events, runs };
  }

  it("is compacted and the call retried once", async () => {
    const { server, worker, events, runs } = await session({});
    expect(runs.map((r) => r.status)).toEqual(["completed", "completed", "completed"]);
    const compaction = events.find((e) => e.type === "history_replaced" && e.reason === "compaction");
    expect(compaction?.type === "history_replaced" && compaction.detail?.trigger).toBe("overflow");
    expect(events.some((e) => e.type === "retry" && e.source === "context_overflow")).toBe(true);
    expect(server.rejections).toEqual([]);
    expect(isCompactionMessage(worker.history[0]!)).toBe(true);
    expect(JSON.stringify(worker.history.at(-2))).toContain("Review batch 3.");
    expect(JSON.stringify(worker.history)).not.toContain("Review batch 1.");
  });

  it.each([{ auto: false }, { enabled: false }])(
    "is not compacted with %j: the run fails with the overflow",
    async (compaction) => {
      const { events, runs } = await session(compaction);
      expect(runs.map((r) => r.status)).toEqual(["completed", "completed", "failed"]);
      expect(runs[2]!.error?.code).toBe("context_overflow");
      expect(events.some((e) => e.type === "history_replaced")).toBe(false);
    },
  );
});

describe("compaction right after a model call that asked for tools", () => {
  it("keeps the pending calls, so the tools still run and every request stays valid", async () => {
    let step = 0;
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (_index, raw) => {
        const body = raw as AnthropicBody;
        if (isSummaryRequest(body))
          return { type: "reply", text: "<summary>Earlier work summarized.</summary>" };
        step++;
        // Run 1 answers plainly; run 2 asks for a tool with usage over the threshold (19.2k of 24k).
        if (step === 1) return { type: "reply", text: "Noted.", options: { usage: { inputTokens: 9_000 } } };
        if (step === 2) {
          return {
            type: "reply",
            text: "Reading it.",
            toolCalls: [{ id: "toolu_pending", name: "read_file", arguments: { path: "a.ts" } }],
            options: { usage: { inputTokens: 20_000, outputTokens: 30 } },
          };
        }
        return { type: "reply", text: "Done reading.", options: { usage: { inputTokens: 3_000 } } };
      },
    });
    servers.push(server);
    const client = createClient({
      provider: "anthropic",
      model: "tiny-context-model",
      apiKey: "test-key-not-secret",
      baseURL: server.baseURL,
      retry: { maxAttempts: 1 },
    });
    const store = new TestBlobStore();
    const policy = createContextPolicy({ blobStore: store, client, catalog: buildModelCatalog(config) });
    const worker = new Worker({
      client,
      blobStore: store,
      contextPolicy: policy,
      tools: [readFile, ...policy.tools],
    });
    const events: WorkerEvent[] = [];
    worker.subscribe((e) => events.push(e));
    const pasted = "a line of a pasted document\n".repeat(2_000);
    expect((await worker.run(`Remember this:\n${pasted}`)).status).toBe("completed");
    expect((await worker.run("Now read a.ts.")).status).toBe("completed");

    const compaction = events.find((e) => e.type === "history_replaced" && e.reason === "compaction");
    expect(compaction).toBeDefined();
    expect(server.rejections).toEqual([]);
    const history = worker.history;
    // Summary, the kept turn with its call and (after compaction) its result, then the answer.
    expect(isCompactionMessage(history[0]!)).toBe(true);
    const callAt = history.findIndex((i) => i.type === "tool_call" && i.callId === "toolu_pending");
    expect(callAt).toBeGreaterThan(0);
    expect(history[callAt + 1]).toMatchObject({
      type: "tool_result",
      callId: "toolu_pending",
      isError: false,
    });
    expect(JSON.stringify(history)).not.toContain("Remember this");
    assertPaired(history);
  });
});
