/**
 * worker-persistence benchmarks, each subject against a plain baseline in the
 * same run:
 * - session log appends vs an `appendFile` loop with the same fsync policy;
 * - resuming a 100 MB log vs `readFile` + `split` + `JSON.parse` per line
 *   (time, and peak RSS measured in fresh child processes);
 * - FsBlobStore.store vs the write-file-atomic package (both fsync).
 *
 *   pnpm exec node --conditions=@yoi/source --expose-gc packages/worker-persistence/bench/persistence.bench.ts
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { appendFile, open, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Item } from "@yoi/llm-client";
import writeFileAtomic from "write-file-atomic";
import { compare, report } from "../../../scripts/bench-kit.ts";
import {
  createSession,
  FsBlobStore,
  type FsyncPolicy,
  openSession,
  type SessionRecordInput,
} from "../src/index.ts";

const GROUP = "worker-persistence";

// ---- child mode: one resume in a fresh process, prints peak RSS ----
if (process.argv[2] === "--rss") {
  const [, , , which, dir, id] = process.argv as [string, string, string, string, string, string];
  if (which === "subject") {
    const opened = await openSession({ dir, id, fsync: "never" });
    if (opened.history.length === 0) throw new Error("empty history");
    await opened.log.close();
  } else {
    const text = await readFile(join(dir, "sessions", `${id}.jsonl`), "utf8");
    const records: unknown[] = [];
    for (const line of text.split("\n")) if (line) records.push(JSON.parse(line));
    if (records.length === 0) throw new Error("no records");
  }
  process.stdout.write(`${process.resourceUsage().maxRSS}\n`);
  process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), "yoi-bench-persistence-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, "append"));
mkdirSync(join(root, "atomic"));

// ---- appends ----

/** A realistic small record (~400 bytes serialized). */
function smallRecord(i: number): SessionRecordInput {
  return {
    type: "item",
    index: i,
    reason: "tool_result",
    item: {
      type: "tool_result",
      callId: `call_${i}`,
      name: "grep",
      output: `src/file-${i}.ts:12: const value = compute(${i}); // ${"x".repeat(250)}`,
      isError: false,
    },
  };
}

let run = 0;
async function appendSubject(n: number, policy: FsyncPolicy): Promise<void> {
  const log = await createSession({ dir: join(root, "append"), id: `s${run++}`, fsync: policy });
  for (let i = 0; i < n; i++) {
    await log.append(smallRecord(i));
    if (i % 10 === 9) await log.turnEnd({ turn: i });
  }
  await log.close();
}

async function appendBaseline(n: number, policy: FsyncPolicy): Promise<void> {
  const path = join(root, "append", `b${run++}.jsonl`);
  let seq = 0;
  const line = (r: SessionRecordInput): string =>
    `${JSON.stringify({ v: 1, seq: seq++, ts: new Date().toISOString(), ...r })}\n`;
  const sync = async (): Promise<void> => {
    const h = await open(path, "r+");
    await h.datasync();
    await h.close();
  };
  await appendFile(path, line({ type: "session_start", sessionId: "b" }));
  if (policy !== "never") await sync();
  for (let i = 0; i < n; i++) {
    await appendFile(path, line(smallRecord(i)));
    if (policy === "always") await sync();
    if (i % 10 === 9) {
      await appendFile(path, line({ type: "turn_end", turn: i }));
      if (policy !== "never") await sync();
    }
  }
}

for (const [policy, n, runs] of [
  ["never", 2000, 5],
  ["turn", 500, 5],
  ["always", 100, 5],
] as const) {
  const r = await compare(
    () => appendSubject(n, policy),
    () => appendBaseline(n, policy),
    { runs, warmup: 1 },
  );
  const records = n + n / 10;
  report({
    group: GROUP,
    name: `append ${records} records, fsync ${policy}`,
    subject: r.subject,
    baseline: r.baseline,
    baselineName: `appendFile loop, fsync ${policy}`,
    unit: "ms",
    target: 1.0,
    note: `${Math.round((records / r.subject) * 1000)} records/s vs ${Math.round((records / r.baseline) * 1000)}`,
  });
}

// ---- resume of a 100 MB log ----

const TARGET_BYTES = 100 * 1024 * 1024;
const resumeDir = join(root, "resume");
const resumeId = "big";
{
  const log = await createSession({ dir: resumeDir, id: resumeId, fsync: "never", model: "m", cwd: "/repo" });
  for (let turn = 0; log.size < TARGET_BYTES; turn++) {
    await log.userInput(`turn ${turn}: please look at src/module-${turn}.ts`, [
      { type: "text", text: "..." },
    ]);
    await log.item(
      { type: "message", role: "user", content: [{ type: "text", text: `turn ${turn}` }] },
      "user",
    );
    await log.item(
      {
        type: "reasoning",
        text: "thinking ".repeat(40),
        signature: "sig".repeat(20),
        provider: "anthropic",
      } as Item,
      "assistant",
    );
    await log.item(
      { type: "tool_call", callId: `c${turn}`, name: "read", arguments: `{"path":"src/m${turn}.ts"}` },
      "assistant",
    );
    const output = `line ${turn} "quoted" \\ 日本語\n`.repeat(100 + (turn % 7) * 60);
    await log.item(
      { type: "tool_result", callId: `c${turn}`, name: "read", output, isError: false },
      "tool_result",
    );
    await log.item(
      { type: "message", role: "assistant", content: [{ type: "text", text: "Done. ".repeat(50) }] },
      "assistant",
    );
    await log.usage({ inputTokens: 1000 + turn, outputTokens: 200 }, { model: "m" });
    await log.turnEnd({ turn, stopReason: "end_turn" });
  }
  await log.close();
}
const logPath = join(resumeDir, "sessions", `${resumeId}.jsonl`);
const size = statSync(logPath).size;
{
  let items = 0;
  const r = await compare(
    async () => {
      const opened = await openSession({ dir: resumeDir, id: resumeId, fsync: "never" });
      items = opened.history.length;
      await opened.log.close();
    },
    async () => {
      const text = await readFile(logPath, "utf8");
      const records: unknown[] = [];
      for (const line of text.split("\n")) if (line) records.push(JSON.parse(line));
      return records.length;
    },
    { runs: 5, warmup: 1 },
  );
  report({
    group: GROUP,
    name: `resume ${(size / 1048576).toFixed(0)} MB log (lock, replay, history)`,
    subject: r.subject,
    baseline: r.baseline,
    baselineName: "readFile + split + JSON.parse",
    unit: "ms",
    target: 1.5,
    note: `${items} history items, streamed in 1 MiB chunks`,
  });
}
{
  const self = fileURLToPath(import.meta.url);
  const rss = (which: string): number => {
    const res = spawnSync(
      process.execPath,
      ["--conditions=@yoi/source", self, "--rss", which, resumeDir, resumeId],
      { encoding: "utf8" },
    );
    if (res.status !== 0) throw new Error(`rss child failed: ${res.stderr}`);
    return Number(res.stdout.trim()) / 1024; // maxRSS is in KiB
  };
  const subject = rss("subject");
  const baseline = rss("baseline");
  report({
    group: GROUP,
    name: `resume ${(size / 1048576).toFixed(0)} MB log, peak RSS`,
    subject,
    baseline,
    baselineName: "readFile + split + JSON.parse",
    unit: "MB",
    target: 1.0,
    note: "fresh process each; the resumed history itself is most of the subject's",
  });
}

// ---- blob writes ----

const store = await FsBlobStore.open({ dir: join(root, "blobs") });
const atomicDir = join(root, "atomic");
async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, "r");
  await h.sync();
  await h.close();
}
for (const [label, bytes, count] of [
  ["16 KiB", 16 * 1024, 50],
  ["1 MiB", 1024 * 1024, 10],
] as const) {
  const text = "0123456789abcdef".repeat(bytes / 16);
  let k = 0;
  const subject = async (): Promise<void> => {
    for (let i = 0; i < count; i++) await store.store({ kind: "text", text });
  };
  const plain = await compare(
    subject,
    async () => {
      for (let i = 0; i < count; i++) await writeFileAtomic(join(atomicDir, `${k++}.txt`), text);
    },
    { runs: 5, warmup: 1 },
  );
  report({
    group: GROUP,
    name: `blob store ${count} x ${label} (fsync file + dir)`,
    subject: plain.subject,
    baseline: plain.baseline,
    baselineName: "write-file-atomic (fsyncs the file only)",
    unit: "ms",
    note: "the subject also fsyncs the directory so the rename survives a power loss; write-file-atomic does not",
  });
  const same = await compare(
    subject,
    async () => {
      for (let i = 0; i < count; i++) {
        await writeFileAtomic(join(atomicDir, `${k++}.txt`), text);
        await syncDir(atomicDir);
      }
    },
    { runs: 5, warmup: 1 },
  );
  report({
    group: GROUP,
    name: `blob store ${count} x ${label}, same durability`,
    subject: same.subject,
    baseline: same.baseline,
    baselineName: "write-file-atomic + fsync(dir)",
    unit: "ms",
    target: 1.2,
  });
}
