import { mkdir, symlink, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { MessagePort } from "node:worker_threads";
import { closeIdleMatchers } from "@yoi/compaction";
import { type Tool, ToolError, type ToolExecutionContext } from "@yoi/llm-worker";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PodFsView } from "../src/fs/fs-view.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { createBuiltinTools } from "../src/tools/builtin-tools.ts";
import { tempDir } from "./helpers.ts";

// `(a+)+$` against a run of `a`s that ends in `b` backtracks 2^n ways: it never finishes.
const EVIL = "(a+)+$";
const EVIL_LINE = `${"a".repeat(48)}b`;

let base: string;
let root: string;
let fs: ScopedFs;

function ctx(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { callId: "c1", batchId: "b1", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
}

function grepWith(timeoutMs?: number): Tool {
  const tools = createBuiltinTools({
    view: new PodFsView(fs),
    bash: false,
    ...(timeoutMs === undefined ? {} : { grep: { timeoutMs } }),
  });
  return tools.find((t) => t.name === "grep")!;
}

async function run(tool: Tool, args: unknown, signal?: AbortSignal): Promise<string> {
  const out = await tool.execute(tool.inputSchema.parse(args), ctx(signal));
  if (typeof out === "string") return out;
  if (out.kind === "inline") return out.text;
  throw new Error("stored output");
}

beforeEach(async () => {
  base = await tempDir();
  root = path.join(base, "root");
  await mkdir(path.join(root, "src"), { recursive: true });
  await mkdir(path.join(base, "outside"));
  await writeFile(path.join(base, "outside", "secret.txt"), `SECRET ${EVIL_LINE}\n`);
  await symlink(path.join(base, "outside", "secret.txt"), path.join(root, "secret-link.txt"));
  await symlink(path.join(base, "outside"), path.join(root, "escape"));
  await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
  await writeFile(path.join(root, "src", "evil.txt"), `ok\n${EVIL_LINE}\n`);
  fs = await ScopedFs.create({ readRoots: [root] });
});

afterEach(() => {
  vi.restoreAllMocks();
  closeIdleMatchers();
});

describe("grep in a worker thread", () => {
  it("stops a catastrophically backtracking pattern with an error the model can act on", async () => {
    const grep = grepWith(150);
    const error = await run(grep, { pattern: EVIL }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolError);
    expect((error as Error).message).toMatch(
      /the pattern \/\(a\+\)\+\$\/ took more than 150 ms on src\/evil\.txt/,
    );
    expect((error as Error).message).toMatch(/Simplify it: avoid nested .*\(a\+\)\+/);
    // The next call gets a fresh thread and works.
    expect(await run(grep, { pattern: "export" })).toBe(
      "src/a.ts:1:export const a = 1;\n[1 matching line in 1 file]\n",
    );
  });

  it("keeps the event loop responsive while the regex runs, and cancel ends it at once", async () => {
    const grep = grepWith(600_000);
    const abort = new AbortController();
    let settled = false;
    const pending = run(grep, { pattern: EVIL }, abort.signal).finally(() => {
      settled = true;
    });
    pending.catch(() => {});
    // Timers keep firing while the pattern backtracks (on the main thread they could not).
    let ticks = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        ticks += 1;
        if (ticks === 5) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    expect(ticks).toBe(5);
    expect(settled).toBe(false);
    // With a 10-minute limit, only the abort can end it within the test's timeout.
    const reason = new Error("run cancelled");
    abort.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("a signal aborted before the call rejects without matching", async () => {
    const abort = new AbortController();
    abort.abort(new Error("already cancelled"));
    await expect(run(grepWith(), { pattern: "export" }, abort.signal)).rejects.toThrow("already cancelled");
  });

  it("reuses an idle thread across calls and stays correct when a call stops early", async () => {
    const grep = grepWith();
    for (let i = 0; i < 40; i++) await writeFile(path.join(root, "src", `m${i}.ts`), "export x\n".repeat(50));
    for (let round = 0; round < 3; round++) {
      expect(await run(grep, { pattern: "export", max_matches: 3 })).toMatch(
        /\[stopped after 3 matching lines/,
      );
      expect(await run(grep, { pattern: "export", output_mode: "count", path: "src/a.ts" })).toBe(
        "src/a.ts:1\n[1 matching line in 1 file]\n",
      );
    }
  });

  it("gives the thread file contents read through ScopedFs, never a path", async () => {
    const grep = grepWith();
    // Warm the pool first so the messages below are grep's own, not the thread's start-up.
    await run(grep, { pattern: "export" });
    const opened: string[] = [];
    const openRead = fs.openRead.bind(fs);
    vi.spyOn(fs, "openRead").mockImplementation(async (p) => {
      opened.push(p);
      return openRead(p);
    });
    const sent: unknown[] = [];
    const post = MessagePort.prototype.postMessage;
    vi.spyOn(MessagePort.prototype, "postMessage").mockImplementation(function (
      this: MessagePort,
      ...args: Parameters<MessagePort["postMessage"]>
    ) {
      sent.push(args[0]);
      return post.apply(this, args);
    });
    const out = await run(grep, { pattern: "SECRET|export|ok", include_ignored: true });
    expect(out).toBe("src/a.ts:1:export const a = 1;\nsrc/evil.txt:1:ok\n[2 matching lines in 2 files]\n");
    // Every file searched was opened through the scope, and nothing outside it.
    expect(opened.sort()).toEqual([path.join(root, "src", "a.ts"), path.join(root, "src", "evil.txt")]);
    // What went to the thread: the pattern, options and bytes; no string naming a file or directory.
    const strings: string[] = [];
    const collect = (v: unknown): void => {
      if (typeof v === "string") strings.push(v);
      else if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === "object" && !(v instanceof ArrayBuffer)) Object.values(v).forEach(collect);
    };
    sent.forEach(collect);
    expect(sent.length).toBeGreaterThan(0);
    for (const s of strings) {
      expect(s).not.toMatch(/\/|\.ts|\.txt|secret|escape/);
    }
    // (That the thread's module cannot open anything is tested with it, in @yoi/compaction.)
  });

  it("renders context, gaps and long lines as before", async () => {
    const lines = Array.from({ length: 12 }, (_, i) =>
      i === 1 || i === 9 ? `hit ${"x".repeat(400)}` : `l${i + 1}`,
    );
    await writeFile(path.join(root, "src", "ctx.txt"), `${lines.join("\r\n")}\r\n`);
    const cut = `hit ${"x".repeat(296)}…`;
    expect(await run(grepWith(), { pattern: "^hit", path: "src/ctx.txt", context: 2 })).toBe(
      [
        "src/ctx.txt-1-l1",
        `src/ctx.txt:2:${cut}`,
        "src/ctx.txt-3-l3",
        "src/ctx.txt-4-l4",
        "--",
        "src/ctx.txt-8-l8",
        "src/ctx.txt-9-l9",
        `src/ctx.txt:10:${cut}`,
        "src/ctx.txt-11-l11",
        "src/ctx.txt-12-l12",
        "[2 matching lines in 1 file]",
        "",
      ].join("\n"),
    );
  });

  it("rejects a bad time limit clearly", () => {
    expect(() => grepWith(0)).toThrow(/grep timeoutMs must be a positive number of milliseconds, got 0/);
  });
});
