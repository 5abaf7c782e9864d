import { ToolError, type ToolExecutionContext } from "@yoi/llm-worker";
import { describe, expect, it } from "vitest";
import { collectRefs, createCacheTools, ToolOutputCache, trimPlaceholder } from "../src/index.ts";
import { assistant, call, result, user } from "./support/items.ts";
import { DeletableTestBlobStore, storeText, TestBlobStore } from "./support/memory-store.ts";

function ctx(callId: string): ToolExecutionContext {
  return {
    callId,
    batchId: "b",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
  };
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `row ${i + 1}`).join("\n");

describe("ToolOutputCache.prepare", () => {
  it("stores the full output and attaches outputRef with byte size and line count", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store, config: { maxMessageBytes: 2048 } });
    const full = numbered(1000);
    const out = await cache.prepare(result("c1", "ignored view"), full);
    const id = out.outputRef!.id;
    expect(out.outputRef).toEqual({ id, byteSize: Buffer.byteLength(full), lineCount: 1000 });
    expect(await store.load(id)).toEqual({ kind: "text", text: full });
    expect(Buffer.byteLength(out.output)).toBeLessThanOrEqual(2048);
    expect(out.output).toContain(`ref=${id}`);
    expect(out.callId).toBe("c1");
  });

  it("keeps small outputs verbatim but still records their ref", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const out = await cache.prepare(result("c1", "ok"), "ok");
    expect(out.output).toBe("ok");
    expect(out.outputRef?.lineCount).toBe(1);
    expect(store.stores).toBe(1);
  });

  it("keeps the worker's summary of a stored output by default, reusing its blob as the ref", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const full = numbered(50);
    const id = storeText(store, full);
    const summary = `[blob:${id}] text | 50 lines\n── head ──\nrow 1`;
    const fromSummary = await cache.prepare(result("c1", summary), full);
    expect(fromSummary.outputRef).toEqual({ id, byteSize: Buffer.byteLength(full), lineCount: 50 });
    expect(fromSummary.output).toBe(summary); // what the model sees stays the 400-byte summary
    const fromRef = await cache.prepare(result("c2", "summary", id), full);
    expect(fromRef.outputRef?.id).toBe(id);
    expect(fromRef.output).toBe("summary");
    expect(store.stores).toBe(0);
  });

  it('storedView "view": the in-context view of the full output replaces the summary', async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store, config: { storedView: "view" } });
    const full = numbered(50);
    const id = storeText(store, full);
    const fromSummary = await cache.prepare(
      result("c1", `[blob:${id}] text | 50 lines\n── head ──\nrow 1`),
      full,
    );
    expect(fromSummary.outputRef).toEqual({ id, byteSize: Buffer.byteLength(full), lineCount: 50 });
    expect(fromSummary.output).toBe(full);
    expect(store.stores).toBe(0);
  });

  it("numbers structured blobs as pretty JSON, like the read tool shows them", async () => {
    const store = new TestBlobStore();
    const id = await store.store({ kind: "structured", value: { a: 1, b: [1, 2] } });
    const cache = new ToolOutputCache({ store, config: { storedView: "view" } });
    const out = await cache.prepare(result("c1", `[blob:${id}] json_object | 2 keys`), '{"a":1,"b":[1,2]}');
    expect(out.output).toBe(JSON.stringify({ a: 1, b: [1, 2] }, null, 2));
    expect(out.outputRef?.lineCount).toBe(7);
  });

  it("stores its own copy when the [blob:] id is not in its store", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const out = await cache.prepare(
      result("c1", "[blob:0193a5b0-1c2d-7e3f-8a4b-5c6d7e8f9a0b] text"),
      "full text",
    );
    expect(out.outputRef?.id).not.toBe("0193a5b0-1c2d-7e3f-8a4b-5c6d7e8f9a0b");
    expect(store.stores).toBe(1);
  });

  it("passes results through when disabled", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store, config: { enabled: false } });
    const input = result("c1", "x".repeat(100_000));
    expect(await cache.prepare(input, input.output)).toBe(input);
    expect(store.stores).toBe(0);
  });
});

describe("tool_output_cache", () => {
  async function setup(text: string, config = {}) {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store, config });
    const id = storeText(store, text);
    const [read, grep] = createCacheTools(cache);
    return { store, cache, id, read: read!, grep: grep! };
  }

  it("reads numbered lines with offset/limit and a footer that says how to continue", async () => {
    const { id, read } = await setup(numbered(10));
    const out = await read.execute(read.inputSchema.parse({ ref_id: id, offset: 3, limit: 4 }), ctx("r1"));
    expect(out).toBe(
      [
        "     3\trow 3",
        "     4\trow 4",
        "     5\trow 5",
        "     6\trow 6",
        `(lines 3-6 of 10; continue with tool_output_cache({"ref_id":"${id}","offset":7}))`,
      ].join("\n"),
    );
    const end = await read.execute(read.inputSchema.parse({ ref_id: id, offset: 9 }), ctx("r2"));
    expect(end).toBe(["     9\trow 9", "    10\trow 10", "(end of output: lines 9-10 of 10)"].join("\n"));
  });

  it("caps one read at maxMessageBytes and continues where it stopped", async () => {
    const { id, read } = await setup(numbered(5000), { maxMessageBytes: 1024 });
    const out = (await read.execute(read.inputSchema.parse({ ref_id: id }), ctx("r1"))) as string;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(1024);
    const last = out.split("\n").at(-2)!;
    const n = Number(last.trim().split("\t")[0]);
    expect(out).toContain(`"offset":${n + 1}`);
  });

  it("says what is wrong with an unknown ref or a bad range", async () => {
    const { id, read } = await setup(numbered(10));
    await expect(read.execute({ ref_id: "nope" }, ctx("r1"))).rejects.toThrow(ToolError);
    await expect(read.execute({ ref_id: "nope" }, ctx("r1"))).rejects.toThrow(/Unknown ref_id "nope".*UUID/);
    await expect(read.execute({ ref_id: "0193a5b0-1c2d-7e3f-8a4b-5c6d7e8f9a0b" }, ctx("r1"))).rejects.toThrow(
      /no cached tool output has this id/,
    );
    await expect(read.execute({ ref_id: id, offset: 11 }, ctx("r1"))).rejects.toThrow(
      "offset 11 is past the end: ref",
    );
    await expect(read.execute({ ref_id: id, offset: 11 }, ctx("r1"))).rejects.toThrow("between 1 and 10");
    expect(read.inputSchema.safeParse({ ref_id: id, offset: 0 }).success).toBe(false);
    expect(read.inputSchema.safeParse({ ref_id: id, limit: 0 }).success).toBe(false);
  });

  it("accepts a ref copied with its ref= or [blob:] wrapper", async () => {
    const { id, read } = await setup(numbered(3));
    expect(await read.execute({ ref_id: `ref=${id}` }, ctx("r1"))).toContain(
      "(end of output: lines 1-3 of 3)",
    );
    expect(await read.execute({ ref_id: `[blob:${id}]` }, ctx("r2"))).toContain("     1\trow 1");
  });

  it("reports an empty output plainly", async () => {
    const { id, read } = await setup("");
    expect(await read.execute({ ref_id: id }, ctx("r1"))).toContain("the output is empty");
  });
});

describe("tool_output_cache_grep", () => {
  const log = [
    "start",
    "INFO ok",
    "ERROR disk full",
    "INFO retry",
    "info again",
    "ERROR net down",
    "end",
  ].join("\n");

  async function setup(text = log) {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const id = storeText(store, text);
    return { id, grep: createCacheTools(cache)[1]! };
  }

  it("prints matching lines numbered like grep -n", async () => {
    const { id, grep } = await setup();
    const out = await grep.execute(grep.inputSchema.parse({ ref_id: id, pattern: "ERROR" }), ctx("g1"));
    expect(out).toBe(
      ["     3:ERROR disk full", "     6:ERROR net down", `(2 matching lines in 7 lines of ref ${id})`].join(
        "\n",
      ),
    );
  });

  it("honours ignore_case, context and max_matches", async () => {
    const { id, grep } = await setup();
    const ci = (await grep.execute({ ref_id: id, pattern: "^info", ignore_case: true }, ctx("g1"))) as string;
    expect(ci).toContain("     2:INFO ok");
    expect(ci).toContain("     5:info again");
    const withContext = await grep.execute({ ref_id: id, pattern: "disk", context: 1 }, ctx("g2"));
    expect(withContext).toContain(
      ["     2-INFO ok", "     3:ERROR disk full", "     4-INFO retry"].join("\n"),
    );
    const limited = await grep.execute({ ref_id: id, pattern: "ERROR", max_matches: 1 }, ctx("g3"));
    expect(limited).toContain("     3:ERROR disk full");
    expect(limited).not.toContain("net down");
    expect(limited).toContain("showing the first 1 (max_matches=1)");
  });

  it("separates non-adjacent context groups with --", async () => {
    const { id, grep } = await setup();
    const out = (await grep.execute({ ref_id: id, pattern: "start|end", context: 1 }, ctx("g1"))) as string;
    expect(out.split("\n").slice(0, 5)).toEqual([
      "     1:start",
      "     2-INFO ok",
      "--",
      "     6-ERROR net down",
      "     7:end",
    ]);
  });

  it("shows a window around the match in a very long line", async () => {
    const { id, grep } = await setup(`${"a".repeat(100_000)}NEEDLE${"b".repeat(100_000)}`);
    const out = (await grep.execute({ ref_id: id, pattern: "NEEDLE" }, ctx("g1"))) as string;
    expect(out).toContain("NEEDLE");
    expect(out.length).toBeLessThan(3000);
  });

  it("rejects a bad pattern with the reason and how to escape", async () => {
    const { id, grep } = await setup();
    await expect(grep.execute({ ref_id: id, pattern: "foo(" }, ctx("g1"))).rejects.toThrow(
      /Invalid pattern "foo\(".*backslash/,
    );
  });

  it("stops a catastrophic pattern without freezing the process", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const id = storeText(store, `${"a".repeat(40)}b`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const search = cache.grep({ refId: id, pattern: "^(a+)+$" }, { timeoutMs: 300 });
    await expect(search).rejects.toThrow(
      /the pattern \/\^\(a\+\)\+\$\/ took more than 300 ms on ref [0-9a-f-]+ \(likely catastrophic backtracking\)/,
    );
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0); // the event loop kept running during the search
  });

  it("is cancelled by the tool's abort signal", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const id = storeText(store, `${"a".repeat(40)}b`);
    const controller = new AbortController();
    const search = cache.grep({ refId: id, pattern: "^(a+)+$" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(search).rejects.toThrow("The search was cancelled.");
  });

  it("says so when nothing matches", async () => {
    const { id, grep } = await setup();
    expect(await grep.execute({ ref_id: id, pattern: "zzz" }, ctx("g1"))).toBe(
      `No lines match "zzz" in ref ${id} (7 lines).`,
    );
  });
});

describe("read-back results", () => {
  it("are not stored again: their ref points at the output they read", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const id = storeText(store, numbered(100));
    const [read] = createCacheTools(cache);
    const text = (await read!.execute({ ref_id: id, limit: 5 }, ctx("call-r"))) as string;
    const prepared = await cache.prepare(result("call-r", text, undefined, "tool_output_cache"), text);
    expect(prepared.outputRef).toEqual({ id });
    expect(prepared.output).toBe(text);
    expect(store.stores).toBe(0);
  });
});

describe("GC after compaction", () => {
  const a = "0193a5b0-1c2d-7e3f-8a4b-00000000000a";
  const b = "0193a5b0-1c2d-7e3f-8a4b-00000000000b";
  const c = "0193a5b0-1c2d-7e3f-8a4b-00000000000c";
  const before = [
    user("go"),
    call("1"),
    result("1", "x", a),
    call("2"),
    result("2", trimPlaceholder(b), b),
    call("3"),
    result("3", "y", c),
  ];

  it("reports refs no longer referenced; text mentions (a retained ref=) keep a ref alive", async () => {
    const store = new TestBlobStore();
    const cache = new ToolOutputCache({ store });
    const after = [
      user(`<retain>\nref=${b} holds the build log\n</retain>`),
      assistant("done"),
      call("3"),
      result("3", "y", c),
    ];
    expect(collectRefs(after)).toEqual(new Set([b, c]));
    const report = await cache.collectGarbage(before, after, { deleteUnreferenced: true });
    expect(report).toEqual({ unreferenced: [a], deleted: [] }); // this store cannot delete
  });

  it("deletes them when asked and the store can delete", async () => {
    const store = new DeletableTestBlobStore();
    for (const id of [a, b, c]) store.blobs.set(id, { kind: "text", text: id });
    const cache = new ToolOutputCache({ store });
    const report = await cache.collectGarbage(before, [call("3"), result("3", "y", c)], {
      deleteUnreferenced: true,
    });
    expect(report.unreferenced.sort()).toEqual([a, b]);
    expect(report.deleted.sort()).toEqual([a, b]);
    expect([...store.blobs.keys()]).toEqual([c]);
  });
});
