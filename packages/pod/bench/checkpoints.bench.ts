/**
 * What checkpoints cost. (1) edit_file on a 20 KB file with the checkpoint
 * hook around it (read before, read after, prior content into an
 * FsBlobStore, a file_change record queued) against the same edit alone;
 * median per edit. (2) A rewind of a 100-turn session (each turn a
 * checkpoint, a prompt, an answer and one file change): load the log,
 * plan, restore one file and the conversation, log the rewind; and the
 * same to before turn 1 (100 files put back). (3) What the bash scan adds
 * to a command in a 2,000-file project (a walk before and after).
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { Tool, ToolCallInfo, ToolExecutionContext } from "@yoi/llm-worker";
import { createSession, FsBlobStore, loadSession, openSession, sessionPath } from "@yoi/worker-persistence";
import { compare, median, report } from "../../../scripts/bench-kit.ts";
import {
  CheckpointRecorder,
  createBuiltinTools,
  PodFsView,
  ReadTracker,
  rewind,
  ScopedFs,
} from "../src/index.ts";

const dir = await mkdtemp(path.join(tmpdir(), "yoi-checkpoint-bench-"));
try {
  // ---- (1) checkpoint cost per edit ----
  const root = path.join(dir, "project");
  await mkdir(root);
  const fs = await ScopedFs.create({ writeRoots: [root] });
  const reads = new ReadTracker();
  const tools = new Map<string, Tool>(
    createBuiltinTools({ view: new PodFsView(fs), reads, bash: false }).map((t) => [t.name, t]),
  );
  const edit = tools.get("edit_file")!;
  const read = tools.get("read_file")!;
  const body = Array.from({ length: 400 }, (_, i) => `line ${i} of a source file, some code here`).join("\n");
  await writeFile(path.join(root, "a.ts"), `${body}\nMARK-A\n`);
  const ctx: ToolExecutionContext = {
    callId: "c",
    batchId: "b",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
  };
  await read.execute(read.inputSchema.parse({ path: "a.ts" }), ctx);
  let flip = false;
  const nextArgs = () => {
    flip = !flip;
    return flip
      ? { path: "a.ts", old_string: "MARK-A", new_string: "MARK-B" }
      : { path: "a.ts", old_string: "MARK-B", new_string: "MARK-A" };
  };
  const blobStore = new FsBlobStore({ dir: path.join(dir, "data") });
  let records = 0;
  const pending: Promise<unknown>[] = [];
  const hook = new CheckpointRecorder({
    fs,
    blobStore,
    append: (record) => {
      records++;
      pending.push(Promise.resolve(record));
    },
    turn: () => 1,
  }).hook();
  const info = (args: unknown): ToolCallInfo =>
    ({
      callId: "c",
      name: "edit_file",
      arguments: JSON.stringify(args),
      args,
      batchId: "b",
      callIndex: 0,
      batchSize: 1,
      turnIndex: 0,
      signal: ctx.signal,
    }) as ToolCallInfo;
  const plain = async () => {
    for (let i = 0; i < 20; i++) await edit.execute(edit.inputSchema.parse(nextArgs()), ctx);
  };
  const checkpointed = async () => {
    for (let i = 0; i < 20; i++) {
      const args = nextArgs();
      const call = info(args);
      await hook.beforeToolCall?.(call);
      await edit.execute(edit.inputSchema.parse(args), ctx);
      await hook.afterToolCall?.(call, { output: "", isError: false, outcome: "ok", durationMs: 0 } as never);
    }
    // every record's prior content stored before the run counts as done
    await Promise.all(pending.splice(0));
  };
  const edits = await compare(checkpointed, plain, { runs: 9 });
  report({
    group: "pod",
    name: "edit_file with checkpoint (20 KB file)",
    subject: edits.subject / 20,
    baseline: edits.baseline / 20,
    baselineName: "the same edit without checkpoint",
    unit: "ms",
    target: 2,
    note: `per edit, median of 9 runs x 20 edits; ${records > 0 ? "prior content kept in FsBlobStore" : "NO RECORDS"}`,
  });

  // ---- (2) rewind of a 100-turn session ----
  const dataDir = path.join(dir, "data100");
  const root100 = path.join(dir, "project100");
  await mkdir(root100);
  const store100 = new FsBlobStore({ dir: dataDir });
  const log = await createSession({ dir: dataDir, fsync: "never", cwd: root100 });
  const files: string[] = [];
  for (let turn = 1; turn <= 100; turn++) {
    const file = path.join(root100, `f${turn}.txt`);
    files.push(file);
    await log.append({ type: "checkpoint", kind: "turn", turn, label: `turn ${turn}` });
    await log.userInput(`please change f${turn}`);
    await log.item(
      { type: "message", role: "user", content: [{ type: "text", text: `please change f${turn}` }] },
      "user",
    );
    const before = `old ${turn}\n`.repeat(200);
    await writeFile(file, `new ${turn}\n`.repeat(200));
    const blob = await store100.store({ kind: "text", text: before });
    await log.append({
      type: "file_change",
      path: file,
      tool: "write_file",
      turn,
      before: { kind: "file", sha256: "x", size: before.length, blob },
      after: {
        kind: "file",
        sha256: (await import("../src/checkpoints/file-state.ts")).sha256(
          Buffer.from(`new ${turn}\n`.repeat(200)),
        ),
        size: 0,
      },
    });
    await log.item(
      {
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: `changed f${turn}. `.repeat(20) }],
      },
      "assistant",
    );
    await log.turnEnd({ turn: turn - 1, stopReason: "end_turn" });
  }
  const id = log.id;
  await log.close();
  const logFile = sessionPath(dataDir, id);
  const pristine = `${logFile}.pristine`;
  await copyFile(logFile, pristine);
  const fs100 = await ScopedFs.create({ writeRoots: [root100] });

  const timeRewind = async (turn: number): Promise<number> => {
    const samples: number[] = [];
    for (let run = 0; run < 7; run++) {
      await copyFile(pristine, logFile);
      for (let t = 1; t <= 100; t++) await writeFile(files[t - 1]!, `new ${t}\n`.repeat(200));
      const start = performance.now();
      const opened = await openSession({ dir: dataDir, id, fsync: "never" });
      const { records: recs } = await loadSession({ dir: dataDir, id });
      await rewind(
        {
          fs: fs100,
          blobStore: store100,
          records: recs,
          append: (r) => opened.log.append(r),
          replaceHistory: async (history) => {
            await opened.log.historyReplaced({ history, reason: "external" });
          },
        },
        { target: { kind: "turn", turn } },
      );
      await opened.log.close();
      samples.push(performance.now() - start);
    }
    return median(samples);
  };
  const last = await timeRewind(100);
  report({
    group: "pod",
    name: "rewind before the last turn of a 100-turn session",
    subject: last,
    unit: "ms",
    note: "open + replay the log, restore 1 file and the conversation, log the rewind; median of 7",
  });
  const all = await timeRewind(1);
  report({
    group: "pod",
    name: "rewind before turn 1 of a 100-turn session",
    subject: all,
    unit: "ms",
    note: "the same, restoring 100 files (4 KB each)",
  });

  // ---- (3) the bash scan on a 2,000-file project ----
  const rootScan = path.join(dir, "project-scan");
  for (let d = 0; d < 40; d++) {
    await mkdir(path.join(rootScan, `dir${d}`), { recursive: true });
    for (let f = 0; f < 50; f++) {
      await writeFile(path.join(rootScan, `dir${d}`, `f${f}.ts`), `export const v${f} = ${f};\n`.repeat(40));
    }
  }
  const fsScan = await ScopedFs.create({ writeRoots: [rootScan] });
  const bash = createBuiltinTools({ view: new PodFsView(fsScan), bash: {} }).find((t) => t.name === "bash")!;
  const scanHook = new CheckpointRecorder({ fs: fsScan, blobStore, append: () => {}, turn: () => 1 }).hook();
  const bashArgs = { command: "echo hi > dir0/out.txt" };
  const bashInfo = { ...info(bashArgs), name: "bash" } as ToolCallInfo;
  // the first call reads the whole tree once; later calls re-read only what moved
  await scanHook.beforeToolCall?.(bashInfo);
  const scans = await compare(
    async () => {
      await scanHook.beforeToolCall?.(bashInfo);
      await bash.execute(bash.inputSchema.parse(bashArgs), ctx);
      await scanHook.afterToolCall?.(bashInfo, {
        output: "",
        isError: false,
        outcome: "ok",
        durationMs: 0,
      } as never);
    },
    () => bash.execute(bash.inputSchema.parse(bashArgs), ctx),
    { runs: 7 },
  );
  report({
    group: "pod",
    name: "bash with checkpoint scan (2,000-file project)",
    subject: scans.subject,
    baseline: scans.baseline,
    baselineName: "the same command without the scan",
    unit: "ms",
    note: "stat walk before and after; only changed files are read",
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
