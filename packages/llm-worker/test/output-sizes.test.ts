import type { ToolResultItem } from "@yoi/llm-client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { ContextPolicy } from "../src/context-policy.ts";
import type { ToolCallEndEvent } from "../src/events.ts";
import { createMemoryBlobStore } from "../src/testing/memory-blob-store.ts";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool } from "../src/tool.ts";
import { Worker } from "../src/worker.ts";

const BIG = "x".repeat(20_000);
const big = defineTool({
  name: "big",
  description: "prints 20,000 bytes",
  inputSchema: z.object({}),
  execute: async () => BIG,
});

function script() {
  return createScriptedClient([{ toolCalls: [{ id: "c1", name: "big" }] }, { text: "done" }]);
}

function committed(worker: Worker): ToolResultItem {
  return worker.history.find((i): i is ToolResultItem => i.type === "tool_result")!;
}

function ends(worker: Worker): ToolCallEndEvent[] {
  const out: ToolCallEndEvent[] = [];
  worker.subscribe((e) => {
    if (e.type === "tool_call_end") out.push(e);
  });
  return out;
}

describe("tool output without a BlobStore", () => {
  it("enters history whole, and the event says so", async () => {
    const worker = new Worker({ client: script(), tools: [big] });
    const seen = ends(worker);
    expect((await worker.run("go")).status).toBe("completed");
    expect(committed(worker).output).toBe(BIG);
    expect(seen[0]).toMatchObject({ outputBytes: 20_000, fullBytes: 20_000 });
    expect(seen[0]!.blobId).toBeUndefined();
  });

  it("is capped only with toolOutput.maxBytesWithoutStore, which must be positive", async () => {
    const worker = new Worker({ client: script(), tools: [big], toolOutput: { maxBytesWithoutStore: 4096 } });
    const seen = ends(worker);
    await worker.run("go");
    expect(Buffer.byteLength(committed(worker).output)).toBeLessThanOrEqual(4096);
    expect(committed(worker).output).toContain("the rest was not kept");
    expect(seen[0]!.outputBytes).toBe(Buffer.byteLength(committed(worker).output));
    expect(seen[0]!.fullBytes).toBe(20_000);
    expect(() => new Worker({ client: script(), toolOutput: { maxBytesWithoutStore: 0 } })).toThrow(
      /toolOutput\.maxBytesWithoutStore must be a positive number, got 0/,
    );
  });
});

describe("tool_call_end reports what entered the context", () => {
  it("after the context policy's view, with the full size and the stored blob", async () => {
    const blobStore = createMemoryBlobStore();
    const policy: ContextPolicy = {
      // A policy that shows a longer view than the worker's summary, as the tool output cache's view does.
      prepareToolResult: async (result, full) => ({ ...result, output: full.slice(0, 5000) }),
    };
    const worker = new Worker({ client: script(), tools: [big], blobStore, contextPolicy: policy });
    const seen = ends(worker);
    await worker.run("go");
    const result = committed(worker);
    expect(result.output).toBe(BIG.slice(0, 5000));
    expect(seen[0]).toMatchObject({ outputBytes: 5000, fullBytes: 20_000, blobId: result.outputRef!.id });
    expect(blobStore.blobs.has(result.outputRef!.id)).toBe(true);
  });
});

describe("history_replaced", () => {
  it("carries the history as it was replaced, not the live array the worker keeps appending to", async () => {
    const client = createScriptedClient([{ text: "one" }, { text: "two" }]);
    const policy: ContextPolicy = {
      checkpoint: async (point, state) =>
        point === "before_return" && state.history.length === 2
          ? { history: [...state.history], reason: "trim" }
          : undefined,
    };
    const worker = new Worker({ client, contextPolicy: policy });
    const replaced: (readonly unknown[])[] = [];
    worker.subscribe((e) => {
      if (e.type === "history_replaced") replaced.push(e.items);
    });
    await worker.run("first");
    await worker.run("second");
    expect(worker.history).toHaveLength(4);
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toHaveLength(2);
  });
});
