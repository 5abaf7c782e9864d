import { describe, expect, it } from "vitest";
import * as z from "zod";
import { capInline, processToolReturn } from "../src/output-processing.ts";
import { summarize } from "../src/summary.ts";
import { createMemoryBlobStore } from "../src/testing/memory-blob-store.ts";
import { createScriptedClient } from "../src/testing/scripted-client.ts";
import { defineTool } from "../src/tool.ts";
import { inlineOutput, storedJson, storedText } from "../src/tool-output.ts";
import { Worker } from "../src/worker.ts";
import { assertValidHistory } from "./helpers.ts";

const limits = {
  inlineThresholdBytes: 800,
  summaryMaxBytes: 400,
  summaryHeadLines: 5,
  summaryTailLines: 3,
  maxBytes: 16 * 1024,
};
const sl = { maxBytes: 400, headLines: 5, tailLines: 3 };
const ID = "0190a5b2-0000-7000-8000-000000000000";
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

describe("auto-promotion", () => {
  it("keeps a string of exactly 800 bytes inline and promotes 801 bytes", async () => {
    const store = createMemoryBlobStore();
    const at = await processToolReturn("a".repeat(800), { limits, blobStore: store, storeLargeOutput: true });
    expect(at.output).toBe("a".repeat(800));
    expect(at.outputRef).toBeUndefined();
    expect(store.blobs.size).toBe(0);

    const over = await processToolReturn("a".repeat(801), {
      limits,
      blobStore: store,
      storeLargeOutput: true,
    });
    expect(store.blobs.size).toBe(1);
    const [id, content] = [...store.blobs][0]!;
    expect(content).toEqual({ kind: "text", text: "a".repeat(801) });
    expect(over.output.startsWith(`[blob:${id}] text | 1 lines`)).toBe(true);
    expect(over.outputRef).toEqual({ id, byteSize: 801, lineCount: 1 });
    expect(over.full).toBe("a".repeat(801));
  });

  it("counts bytes, not characters: 300 three-byte characters (900 bytes) are promoted", async () => {
    const store = createMemoryBlobStore();
    const out = await processToolReturn("あ".repeat(300), {
      limits,
      blobStore: store,
      storeLargeOutput: true,
    });
    expect(out.outputRef).toBeDefined();
  });

  it("keeps the whole output inline without a BlobStore, whatever its kind", async () => {
    const text = "x".repeat(20_000);
    const out = await processToolReturn(text, { limits, blobStore: undefined, storeLargeOutput: true });
    expect(out.output).toBe(text);
    expect(out.full).toBe(text);
    const inline = await processToolReturn(inlineOutput(text), {
      limits,
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(inline.output).toBe(text);
    const stored = await processToolReturn(storedText(text, "a summary"), {
      limits,
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(stored.output).toBe(text);
  });

  it("caps without a BlobStore only when maxBytesWithoutStore is set, saying the rest was not kept", async () => {
    const text = "x".repeat(20_000);
    const out = await processToolReturn(text, {
      limits: { ...limits, maxBytesWithoutStore: 4096 },
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(bytes(out.output)).toBeLessThanOrEqual(4096);
    expect(out.output).toMatch(/\[\.\.\.truncated, 20000 bytes total; the rest was not kept/);
    expect(out.full).toBe(text);
    const small = await processToolReturn("a".repeat(900), {
      limits: { ...limits, maxBytesWithoutStore: 4096 },
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(small.output).toBe("a".repeat(900));
  });

  it("does not promote when the tool opts out (inspect)", async () => {
    const store = createMemoryBlobStore();
    const out = await processToolReturn("a".repeat(5000), {
      limits,
      blobStore: store,
      storeLargeOutput: false,
    });
    expect(out.output).toBe("a".repeat(5000));
    expect(store.blobs.size).toBe(0);
  });

  it("promotes a JSON string as structured content", async () => {
    const store = createMemoryBlobStore();
    const value = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `item ${i}` }));
    const out = await processToolReturn(JSON.stringify(value), {
      limits,
      blobStore: store,
      storeLargeOutput: true,
    });
    const [, content] = [...store.blobs][0]!;
    expect(content).toEqual({ kind: "structured", value });
    expect(out.output).toMatch(
      /^\[blob:[0-9a-f-]{36}\] json_array \| 50 entries\n── schema ──\nid: number\nname: string\n── head ──\n/,
    );
  });

  it("stores explicit Stored output even when small, prefixing a given summary with the blob id", async () => {
    const store = createMemoryBlobStore();
    const out = await processToolReturn(storedText("tiny", "a tiny text"), {
      limits,
      blobStore: store,
      storeLargeOutput: true,
    });
    const [id] = [...store.blobs.keys()];
    expect(out.output).toBe(`[blob:${id}] a tiny text`);
    const auto = await processToolReturn(storedJson({ a: 1 }), {
      limits,
      blobStore: store,
      storeLargeOutput: true,
    });
    expect(auto.output).toMatch(/^\[blob:[0-9a-f-]{36}\] json_object \| 1 keys\n── keys ──\na: number$/);
  });

  it("sends Stored content inline without a BlobStore, and keeps isError", async () => {
    const out = await processToolReturn(storedJson({ a: [1, 2] }), {
      limits,
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(JSON.parse(out.output)).toEqual({ a: [1, 2] });
    const err = await processToolReturn(inlineOutput("bad", { isError: true }), {
      limits,
      blobStore: undefined,
      storeLargeOutput: true,
    });
    expect(err).toMatchObject({ output: "bad", isError: true });
  });

  it("caps an explicit Inline output at the per-tool cap", async () => {
    const out = await processToolReturn(inlineOutput("é".repeat(1000)), {
      limits: { ...limits, maxBytes: 301 },
      blobStore: createMemoryBlobStore(),
      storeLargeOutput: true,
    });
    expect(bytes(out.output)).toBeLessThanOrEqual(301);
    expect(out.output).toContain("[...truncated, 2000 bytes total]");
    expect(out.output).not.toContain("\uFFFD");
  });

  it("fails (never silently shortens the output) when the store cannot write", async () => {
    const failing = {
      store: async () => {
        throw new Error("disk full");
      },
      load: async () => ({ kind: "text" as const, text: "" }),
      exists: async () => false,
    };
    await expect(
      processToolReturn("z".repeat(2000), { limits, blobStore: failing, storeLargeOutput: true }),
    ).rejects.toThrow(/the tool output could not be stored: disk full/);
  });

  it("a run whose tool output cannot be stored fails with `storage`, every call answered", async () => {
    const failing = {
      store: async () => {
        throw new Error("ENOSPC: no space left on device");
      },
      load: async () => ({ kind: "text" as const, text: "" }),
      exists: async () => false,
    };
    const big = defineTool({
      name: "big",
      description: "big output",
      inputSchema: z.object({}),
      execute: () => "z".repeat(5000),
    });
    const client = createScriptedClient([
      { toolCalls: [{ name: "big" }, { name: "big" }] },
      { text: "never" },
    ]);
    const worker = new Worker({ client, tools: [big], blobStore: failing });
    const result = await worker.run("go");
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("storage");
    expect(result.error?.message).toMatch(/no space left on device.*Free disk space/);
    expect(client.requests).toHaveLength(1);
    assertValidHistory(worker.history);
  });
});

describe("summary formats", () => {
  it("text: header, 5 head lines, 3 tail lines", () => {
    const text = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    expect(summarize(ID, { kind: "text", text }, sl)).toBe(
      `[blob:${ID}] text | 20 lines\n── head ──\nline 1\nline 2\nline 3\nline 4\nline 5\n── tail ──\nline 18\nline 19\nline 20`,
    );
  });

  it("text of no more lines than the head shows no empty tail section", () => {
    const long = "x".repeat(300);
    const summary = summarize(ID, { kind: "text", text: `${long}\n${long}\n${long}` }, sl);
    expect(summary.startsWith(`[blob:${ID}] text | 3 lines\n── head ──\n`)).toBe(true);
    expect(summary).not.toContain("── tail ──");
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(400);
    for (const n of [1, 5]) {
      const text = Array.from({ length: n }, (_, i) => `l${i}`).join("\n");
      expect(summarize(ID, { kind: "text", text }, sl)).toBe(
        `[blob:${ID}] text | ${n} lines\n── head ──\n${text}`,
      );
    }
  });

  it("never renders a section with nothing under it (empty text, array, object)", () => {
    expect(summarize(ID, { kind: "text", text: "" }, sl)).toBe(`[blob:${ID}] text | 0 lines`);
    expect(summarize(ID, { kind: "structured", value: [] }, sl)).toBe(
      `[blob:${ID}] json_array | 0 entries\n── schema ──\n(empty)`,
    );
    expect(summarize(ID, { kind: "structured", value: {} }, sl)).toBe(`[blob:${ID}] json_object | 0 keys`);
  });

  it("text with fewer lines than head+tail does not repeat lines", () => {
    const text = "a\nb\nc\nd\ne\nf\n";
    expect(summarize(ID, { kind: "text", text }, sl)).toBe(
      `[blob:${ID}] text | 6 lines\n── head ──\na\nb\nc\nd\ne\n── tail ──\nf`,
    );
  });

  it("json_array: schema of the first element and the first 2 entries", () => {
    const value = [
      { path: "a.ts", size: 10, tags: ["x"], meta: { k: 1 }, ok: true, gone: null },
      { path: "b.ts", size: 20, tags: [], meta: {}, ok: false, gone: null },
      { path: "c.ts", size: 30, tags: [], meta: {}, ok: false, gone: null },
    ];
    expect(summarize(ID, { kind: "structured", value }, sl)).toBe(
      `[blob:${ID}] json_array | 3 entries\n── schema ──\npath: string\nsize: number\ntags: array\nmeta: object\nok: boolean\ngone: null\n── head ──\n${JSON.stringify(value[0])}\n${JSON.stringify(value[1])}`,
    );
  });

  it("json_object: keys with type and size", () => {
    const value = { results: [1, 2, 3], name: "héllo", nested: { a: 1, b: 2 }, count: 3 };
    expect(summarize(ID, { kind: "structured", value }, sl)).toBe(
      `[blob:${ID}] json_object | 4 keys\n── keys ──\nresults: array(3 entries)\nname: string(6 bytes)\nnested: object(2 keys)\ncount: number`,
    );
  });

  it("caps at 400 bytes without splitting a multi-byte character, keeping every section", () => {
    for (const ch of ["あ", "é", "😀"]) {
      const line = ch.repeat(200);
      const text = Array.from({ length: 30 }, () => line).join("\n");
      const summary = summarize(ID, { kind: "text", text }, sl);
      expect(bytes(summary)).toBeLessThanOrEqual(400);
      expect(summary).not.toContain("\uFFFD");
      expect(Buffer.from(summary, "utf8").toString("utf8")).toBe(summary);
      expect(summary.startsWith(`[blob:${ID}] text | 30 lines\n── head ──\n`)).toBe(true);
      expect(summary).toContain("── tail ──");
      // lone surrogate halves would mean a split emoji
      expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(summary)).toBe(false);
    }
  });

  it("caps a json_array with huge entries at 400 bytes, keeping the header", () => {
    const value = [{ blob: "ü".repeat(5000) }, { blob: "ü".repeat(5000) }];
    const summary = summarize(ID, { kind: "structured", value }, sl);
    expect(bytes(summary)).toBeLessThanOrEqual(400);
    expect(summary).toContain("── schema ──\nblob: string\n── head ──\n");
    expect(summary).not.toContain("\uFFFD");
  });

  it("caps at exactly the configured size with many short lines (hard cut at a character boundary)", () => {
    const value = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`ключ_${i}`, i]));
    const summary = summarize(ID, { kind: "structured", value }, sl);
    expect(bytes(summary)).toBeLessThanOrEqual(400);
    expect(summary.startsWith(`[blob:${ID}] json_object | 200 keys\n── keys ──\nключ_0: number`)).toBe(true);
    expect(summary).not.toContain("\uFFFD");
  });
});

describe("capInline", () => {
  it("never exceeds the cap and never splits a character", () => {
    for (let cap = 60; cap < 90; cap++) {
      const out = capInline("😀".repeat(100), cap, true);
      expect(bytes(out)).toBeLessThanOrEqual(cap);
      expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(out)).toBe(false);
    }
  });
});
