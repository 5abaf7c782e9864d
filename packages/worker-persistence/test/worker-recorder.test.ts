import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, Worker } from "@yoi/llm-worker";
import { createScriptedClient } from "@yoi/llm-worker/testing";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  createSession,
  FsBlobStore,
  loadSession,
  openSession,
  recordWorker,
  sessionBlobRefs,
} from "../src/index.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const bigFile = Array.from({ length: 400 }, (_, i) => `line ${i}: ${"content ".repeat(4)}`).join("\n");
const readTool = defineTool({
  name: "read",
  description: "Reads a file",
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }) => (path === "big.txt" ? bigFile : `contents of ${path}`),
});

describe("recordWorker with a real Worker", () => {
  it("logs a tool loop so that replay equals the worker's history exactly, and a resumed worker continues it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yoi-recorder-"));
    dirs.push(dir);
    const blobStore = await FsBlobStore.open({ dir });
    const client = createScriptedClient(
      [
        {
          thinking: "need both files",
          thinkingSignature: "sig-1",
          toolCalls: [
            { id: "call_a", name: "read", args: { path: "small.txt" } },
            { id: "call_b", name: "read", args: { path: "big.txt" } },
          ],
          usage: { inputTokens: 100, outputTokens: 20 },
        },
        { text: "Both read.", usage: { inputTokens: 150, outputTokens: 5 } },
      ],
      { provider: "anthropic", model: "claude-sonnet-4-5" },
    );
    const worker = new Worker({ client, tools: [readTool], blobStore, system: "be brief" });
    const log = await createSession({ dir, model: "claude-sonnet-4-5", cwd: "/repo" });
    const recorder = recordWorker(log, worker, { model: () => "claude-sonnet-4-5" });
    await log.userInput("read small.txt and big.txt", [{ type: "text", text: "read small.txt and big.txt" }]);
    const result = await worker.run("read small.txt and big.txt");
    expect(result.status).toBe("completed");
    await recorder.stop();
    expect(recorder.errors).toEqual([]);
    await log.close();

    const loaded = await loadSession({ dir, id: log.id });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.history).toEqual(worker.history);
    const types = loaded.records.map((r) => r.type);
    expect(types.filter((t) => t === "usage")).toHaveLength(2);
    expect(types.filter((t) => t === "turn_end").length).toBeGreaterThanOrEqual(1);
    const reasons = loaded.records.flatMap((r) => (r.type === "item" ? [r.reason] : []));
    expect(reasons[0]).toBe("user");
    expect(reasons).toContain("tool_result");
    expect(reasons).toContain("assistant");
    expect(loaded.meta.usage.inputTokens).toBe(250);
    // the big output was Stored: its blob is referenced by the log, so gc keeps it
    const refs = await sessionBlobRefs({ dir });
    expect(refs.size).toBe(1);
    const [ref] = [...refs];
    expect(await blobStore.load(ref as string)).toEqual({ kind: "text", text: bigFile });
    expect((await blobStore.gc({ liveRefs: refs, graceMs: 0, now: Date.now() + 1 })).deleted).toEqual([]);

    // Resume: a new worker from the log's history continues, and the log stays exact.
    const opened = await openSession({ dir, id: log.id });
    const client2 = createScriptedClient(
      [{ text: "Still here.", usage: { inputTokens: 300, outputTokens: 3 } }],
      {
        provider: "anthropic",
        model: "claude-sonnet-4-5",
      },
    );
    const worker2 = new Worker({ client: client2, tools: [readTool], blobStore, history: opened.history });
    const recorder2 = recordWorker(opened.log, worker2);
    await opened.log.userInput("anything else?");
    await worker2.run("anything else?");
    await recorder2.stop();
    await opened.log.close();
    expect(client2.requests[0]?.items.slice(0, worker.history.length)).toEqual(worker.history);
    expect((await loadSession({ dir, id: log.id })).history).toEqual(worker2.history);
  });

  it("logs a cancellation and rolled-back history", async () => {
    const dir = mkdtempSync(join(tmpdir(), "yoi-recorder-"));
    dirs.push(dir);
    const controller = new AbortController();
    const client = createScriptedClient([
      async (_request, signal) => {
        controller.abort("user pressed Esc");
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (signal?.aborted) return { events: [{ type: "status", status: "cancelled" }] };
        return { text: "late" };
      },
    ]);
    const worker = new Worker({ client });
    const log = await createSession({ dir });
    const recorder = recordWorker(log, worker);
    const result = await worker.run("hello", { signal: controller.signal });
    expect(result.status).toBe("cancelled");
    await recorder.stop();
    await log.close();
    const loaded = await loadSession({ dir, id: log.id });
    expect(loaded.records.some((r) => r.type === "cancel")).toBe(true);
    expect(loaded.history).toEqual(worker.history);
  });
});
