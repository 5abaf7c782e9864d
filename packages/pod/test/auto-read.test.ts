import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { RETAIN_HEADER, SUMMARY_HEADER } from "@yoi/compaction";
import { createClient, type Item, messageText, systemMessage, userMessage } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { insertAfterSummary, reattachFiles, renderAutoRead } from "../src/context/auto-read.ts";
import type { PodEvent } from "../src/events/pod-events.ts";
import { ReadTracker } from "../src/fs/read-tracker.ts";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

function textOf(item: Item | undefined): string {
  return item?.type === "message" ? messageText(item) : "";
}

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("renderAutoRead", () => {
  it("attaches the most recently read files first, within the budget, skipping vanished ones", async () => {
    const root = await tempDir();
    for (const [name, size] of [
      ["a.txt", 100],
      ["b.txt", 3000],
      ["c.txt", 50],
      ["gone.txt", 10],
    ] as const) {
      await writeFile(path.join(root, name), "x".repeat(size));
    }
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const reads = new ReadTracker();
    for (const name of ["a.txt", "b.txt", "c.txt", "gone.txt"]) {
      reads.record(path.join(root, name), name, { size: 0, mtimeMs: 0 });
    }
    const { rm } = await import("node:fs/promises");
    await rm(path.join(root, "gone.txt"));
    const out = await renderAutoRead(fs, reads, { budgetBytes: 2000 });
    expect(out.paths).toEqual(["c.txt", "b.txt"]);
    expect(textOf(out.items[0])).toBe(`[File: c.txt]\n${"x".repeat(50)}`);
    // b.txt is cut to what is left of the budget, with the truncation note.
    expect(textOf(out.items[1])).toMatch(/^\[File: b\.txt\]\nx{1950}\n\[\.\.\.truncated, 3000 bytes total/);
    expect(reads.get(path.join(root, "gone.txt"))).toBeUndefined();
  });

  it("inserts after the summary messages, before the kept turns", () => {
    const summary = userMessage(`${SUMMARY_HEADER}\nwhat happened`);
    const retain = userMessage(`${RETAIN_HEADER}\nkeep this`);
    const kept = userMessage("latest question");
    const file = systemMessage("[File: a]\n1");
    expect(insertAfterSummary([retain, summary, kept], [file])).toEqual([retain, summary, file, kept]);
    expect(insertAfterSummary([kept], [file])).toEqual([file, kept]);
    // Leading system messages (a host's instructions) stay first; the files go after the summary.
    const rules = systemMessage("house rules");
    expect(insertAfterSummary([rules, retain, summary, kept], [file])).toEqual([
      rules,
      retain,
      summary,
      file,
      kept,
    ]);
  });

  it("reattachFiles puts the fresh copy after the summary and drops the stale one a kept turn held", async () => {
    const root = await tempDir();
    await writeFile(path.join(root, "a.txt"), "new");
    const fs = await ScopedFs.create({ readRoots: [root] });
    const reads = new ReadTracker();
    reads.record(path.join(root, "a.txt"), "a.txt", { size: 3, mtimeMs: 0 });
    const summary = userMessage(`${SUMMARY_HEADER}\nwhat happened`);
    const stale = systemMessage("[File: a.txt]\nold");
    const kept = userMessage("latest question");
    const { replacement, paths } = await reattachFiles(
      { history: [summary, stale, kept], reason: "compaction", detail: { trigger: "manual" } },
      fs,
      reads,
    );
    expect(paths).toEqual(["a.txt"]);
    expect(replacement.history.map(textOf)).toEqual([
      textOf(summary),
      "[File: a.txt]\nnew",
      "latest question",
    ]);
    expect(replacement.detail).toEqual({ trigger: "manual", autoRead: ["a.txt"] });
  });
});

describe("pod compaction re-attaches recently read files", () => {
  it("after /compact, the file the model read is attached again with its current content", async () => {
    const base = await tempDir();
    const root = path.join(base, "p");
    await mkdir(path.join(root, "src"), { recursive: true });
    const filler = Array.from(
      { length: 150 },
      (_, i) => `// line ${i}: some commentary about the module`,
    ).join("\n");
    await writeFile(path.join(root, "src", "a.ts"), `export const version = 1;\n${filler}\n`);
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", toolCalls: [{ id: "toolu_r", name: "read_file", arguments: { path: "src/a.ts" } }] },
        { type: "reply", text: "version is 1" },
        { type: "reply", text: "noted" },
        { type: "reply", text: "<summary>The user asked about src/a.ts; it exports version.</summary>" },
        { type: "reply", text: "after compaction" },
      ],
    });
    servers.push(s);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(base, "d"),
      fsync: "never",
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
        retry: { maxAttempts: 1 },
      }),
    });
    const events: PodEvent[] = [];
    pod.subscribe((e) => events.push(e));
    try {
      await pod.run("what version is in src/a.ts?");
      await pod.run("thanks");
      await writeFile(path.join(root, "src", "a.ts"), "export const version = 2;\n");
      const replacement = await pod.compact();
      expect(replacement?.reason).toBe("compaction");
      expect(replacement?.detail).toMatchObject({ autoRead: ["src/a.ts"] });
      const attached = pod.history.find((i) => textOf(i).startsWith("[File: src/a.ts]"));
      expect(textOf(attached)).toBe("[File: src/a.ts]\nexport const version = 2;\n");
      expect(events.some((e) => e.type === "auto_read")).toBe(true);
      await pod.run("and now?");
      expect(JSON.stringify(s.requests.at(-1))).toContain("export const version = 2;");
      expect(s.rejections).toEqual([]);
    } finally {
      await pod.close();
    }
  });
});
