/**
 * The grep matcher on its own: what each mode reports, the time limit, the
 * abort signal, the idle threads it keeps, and the thread's module file.
 * (The pod's grep tool and `tool_output_cache_grep` test it through their
 * own output.)
 */
import { readFileSync } from "node:fs";
import { ToolError } from "@yoi/llm-worker";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  closeIdleMatchers,
  type FileMatch,
  GREP_TIMEOUT_MS,
  GrepMatcher,
  type GrepMatcherOptions,
  type MatchJob,
} from "../src/grep-matcher.ts";

// `(a+)+$` against a run of `a`s that ends in `b` backtracks 2^n ways: it never finishes.
const EVIL = "(a+)+$";
const EVIL_TEXT = `ok\n${"a".repeat(48)}b\n`;

const bytes = (text: string) => new TextEncoder().encode(text);

async function search(
  job: Partial<MatchJob> & Pick<MatchJob, "source">,
  texts: string[],
  options?: GrepMatcherOptions,
): Promise<FileMatch[]> {
  const matcher = new GrepMatcher({ flags: "", mode: "content", maxHits: 100, ...job }, options);
  try {
    return await matcher.matchBatch(texts.map((t, i) => ({ bytes: bytes(t), label: `text ${i}` })));
  } finally {
    matcher.close();
  }
}

afterEach(() => {
  vi.useRealTimers();
  closeIdleMatchers();
});

describe("GrepMatcher", () => {
  it("content mode: the hit with its context, gaps, and long lines cut", async () => {
    const text = ["l1", `hit ${"x".repeat(20)}`, "l3", "l4", "l5", "l6", "hit", "l8"].join("\r\n");
    const [found] = await search({ source: "^hit", context: 1, maxLineLength: 10 }, [text]);
    expect(found).toEqual({
      count: 2,
      hits: [],
      chunks: [
        { gap: false, from: 0, hit: 1, lines: ["l1", "hit xxxxxx…", "l3"] },
        { gap: true, from: 5, hit: 6, lines: ["l6", "hit", "l8"] },
      ],
    });
  });

  it("lines mode: the exact count and the first maxHits line indexes", async () => {
    const text = "a\nb\na\na\nb\na\n";
    const [found] = await search({ source: "a", mode: "lines", maxHits: 2 }, [text]);
    expect(found).toEqual({ count: 4, hits: [0, 2], chunks: [] });
  });

  it("count and files_with_matches modes, and several texts in one batch", async () => {
    const texts = ["x\nx\ny\n", "y\n", "x"];
    expect((await search({ source: "x", mode: "count" }, texts)).map((m) => m.count)).toEqual([2, 0, 1]);
    expect((await search({ source: "x", mode: "files_with_matches" }, texts)).map((m) => m.count)).toEqual([
      1, 0, 1,
    ]);
  });

  it("a final newline ends the last line rather than starting an empty one", async () => {
    const [found] = await search({ source: "^$", mode: "lines" }, ["a\n\nb\n"]);
    expect(found).toMatchObject({ count: 1, hits: [1] });
  });

  it("the whole-text pre-check gives the same answer as matching every line", async () => {
    const text = "first\nsecond line\nthird\n";
    for (const source of ["^second", "line$", "nothing"]) {
      const plain = await search({ source, mode: "lines" }, [text]);
      expect(await search({ source, mode: "lines", prefilter: true }, [text])).toEqual(plain);
    }
  });

  it("stops a catastrophically backtracking pattern with an error naming the text, and starts afresh", async () => {
    const failed = await search({ source: EVIL }, ["fine\n", EVIL_TEXT], { timeoutMs: 150 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(ToolError);
    expect((failed as Error).message).toMatch(
      /the pattern \/\(a\+\)\+\$\/ took more than 150 ms on text 1 \(likely catastrophic backtracking\)\. Simplify it/,
    );
    // The stuck thread was terminated, not kept: nothing idle, and the next search works.
    expect(closeIdleMatchers()).toBe(0);
    expect((await search({ source: "ok", mode: "count" }, [EVIL_TEXT]))[0]!.count).toBe(1);
    expect(GREP_TIMEOUT_MS).toBe(10_000);
  });

  it("keeps the event loop free while the regex runs, and an abort ends it with the signal's reason", async () => {
    const abort = new AbortController();
    const pending = search({ source: EVIL }, [EVIL_TEXT], { timeoutMs: 600_000, signal: abort.signal });
    pending.catch(() => {});
    let ticks = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (++ticks === 5) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    const reason = new Error("run cancelled");
    abort.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(closeIdleMatchers()).toBe(0);
  });

  it("an invalid pattern fails the batch with the reason", async () => {
    await expect(search({ source: "(" }, ["x"])).rejects.toThrow(/grep failed: .*Invalid regular expression/);
  });

  it("keeps at most two idle threads for the next searches", async () => {
    await search({ source: "x" }, ["x"]);
    expect(closeIdleMatchers()).toBe(1);
    await Promise.all([1, 2, 3].map(() => search({ source: "x" }, ["x"])));
    expect(closeIdleMatchers()).toBe(2);
  });

  it("closes an idle thread after 30 s", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    await search({ source: "x" }, ["x"]);
    vi.advanceTimersByTime(29_000);
    await search({ source: "x" }, ["x"]); // the same thread, its idle time starting again
    vi.advanceTimersByTime(29_000);
    expect(closeIdleMatchers()).toBe(1);
    await search({ source: "x" }, ["x"]);
    vi.advanceTimersByTime(30_000);
    expect(closeIdleMatchers()).toBe(0);
  });

  it("runs a module file of its own that can open nothing: it imports only worker_threads", () => {
    const matcher = readFileSync(new URL("../src/grep-matcher.ts", import.meta.url), "utf8");
    expect(matcher).not.toMatch(/eval:\s*true/);
    const worker = readFileSync(new URL("../src/grep-matcher-worker.ts", import.meta.url), "utf8");
    const imports = [...worker.matchAll(/^import\s+(type\s+)?.*?from\s+"([^"]+)";$/gms)].map(
      ([, type, from]) => `${type ? "type " : ""}${from}`,
    );
    expect(imports).toEqual(["node:worker_threads", "type ./grep-matcher.ts"]);
    expect(worker).not.toMatch(/\brequire\(|\bimport\(|process\.binding|\bfs\b/);
  });
});
