/**
 * What the scope checks cost. (1) ScopedFs.readFile (realpath, containment,
 * O_NOFOLLOW open, handle check via /proc) against a bare fs.readFile of the
 * same 500 small files; target <= 3x. (2) The grep tool over a 2,000-file
 * tree against a bare recursive readdir + readFile + regex loop; target
 * <= 2x. (3) read_file's bounded line read of the last lines of a 40 MB log
 * against readFile + split; target <= 1.2x.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { compare, report } from "../../../scripts/bench-kit.ts";
import { createBuiltinTools, PodFsView, ScopedFs } from "../src/index.ts";

const dir = await mkdtemp(path.join(tmpdir(), "yoi-pod-bench-"));
try {
  // ---- 500 small files ----
  const small: string[] = [];
  await mkdir(path.join(dir, "small"));
  for (let i = 0; i < 500; i++) {
    const p = path.join("small", `f${i}.txt`);
    await writeFile(path.join(dir, p), `line ${i}\n`.repeat(400));
    small.push(p);
  }
  const fs = await ScopedFs.create({ writeRoots: [dir] });
  const reads = await compare(
    async () => {
      for (const p of small) await fs.readFile(p);
    },
    async () => {
      for (const p of small) await readFile(path.join(dir, p));
    },
  );
  report({
    group: "pod",
    name: "ScopedFs.readFile x500 (4 KB files)",
    subject: reads.subject,
    baseline: reads.baseline,
    baselineName: "fs.promises.readFile",
    unit: "ms",
    target: 3,
  });

  // ---- grep over a tree ----
  const tree = path.join(dir, "tree");
  for (let d = 0; d < 40; d++) {
    await mkdir(path.join(tree, `d${d}`), { recursive: true });
    for (let f = 0; f < 50; f++) {
      const lines = Array.from(
        { length: 200 },
        (_, i) => `const v${i} = compute(${i}); // ${i % 97 === 0 ? "TODO" : "ok"}`,
      );
      await writeFile(path.join(tree, `d${d}`, `m${f}.ts`), lines.join("\n"));
    }
  }
  const view = new PodFsView(await ScopedFs.create({ readRoots: [tree] }));
  const grep = createBuiltinTools({ view, bash: false }).find((t) => t.name === "grep")!;
  const ctx = {
    callId: "c",
    batchId: "b",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal: new AbortController().signal,
  };
  // A pattern that never matches: both sides scan every line of every file.
  const re = /FIXME\(urgent\)/u;
  const g = await compare(
    () => grep.execute({ pattern: "FIXME\\(urgent\\)" }, ctx),
    async () => {
      let hits = 0;
      const walk = async (d: string): Promise<void> => {
        for (const e of await readdir(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) await walk(p);
          else for (const line of (await readFile(p, "utf8")).split("\n")) if (re.test(line)) hits++;
        }
      };
      await walk(tree);
      return hits;
    },
    { runs: 5 },
  );
  report({
    group: "pod",
    name: "grep tool (no match), 2,000 files x 200 lines",
    subject: g.subject,
    baseline: g.baseline,
    baselineName: "bare readdir+readFile+regex",
    unit: "ms",
    target: 2,
  });

  // ---- bounded read of a big log ----
  const log = path.join(dir, "big.log");
  const chunk = Array.from(
    { length: 10_000 },
    (_, i) => `2026-11-22T00:00:00Z INFO request ${i} served in ${i % 50} ms`,
  ).join("\n");
  await writeFile(log, `${chunk}\n`.repeat(60));
  const bigView = new PodFsView(fs);
  const total = 600_000;
  const r = await compare(
    () => bigView.readText("big.log", { offset: total - 10, limit: 10 }),
    async () => (await readFile(log, "utf8")).split("\n").slice(total - 11, total - 1),
    { runs: 5 },
  );
  report({
    group: "pod",
    name: "readText last 10 lines of a 40 MB log",
    subject: r.subject,
    baseline: r.baseline,
    baselineName: "readFile + split",
    unit: "ms",
    target: 1.2,
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
