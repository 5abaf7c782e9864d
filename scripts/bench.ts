/**
 * `pnpm bench`: runs every `packages/<name>/bench/*.bench.ts` and
 * `apps/<name>/bench/*.bench.ts` as its own Node process (sources through the
 * `@yoi/source` condition, no build needed) and prints one table of
 * subject / baseline ratios measured in the same run.
 *
 *   pnpm bench                 all benchmarks
 *   pnpm bench llm-client      only files whose path contains the word
 *   pnpm bench --strict        exit 1 when a row misses its target
 *   pnpm bench --json          print rows as JSON lines instead of a table
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { BenchRow } from "./bench-kit.ts";

const root = join(import.meta.dirname, "..");
const args = process.argv.slice(2);
const strict = args.includes("--strict");
const json = args.includes("--json");
const filters = args.filter((a) => !a.startsWith("--"));

const files: string[] = [];
for (const area of ["packages", "apps"]) {
  const dir = join(root, area);
  if (!existsSync(dir)) continue;
  for (const pkg of readdirSync(dir).sort()) {
    const benchDir = join(dir, pkg, "bench");
    if (!existsSync(benchDir)) continue;
    for (const f of readdirSync(benchDir).sort()) {
      if (!f.endsWith(".bench.ts")) continue;
      const path = join(benchDir, f);
      if (filters.length === 0 || filters.some((w) => path.includes(w))) files.push(path);
    }
  }
}

const rows: BenchRow[] = [];
let failedScripts = 0;
for (const file of files) {
  const rel = relative(root, file);
  process.stderr.write(`bench: ${rel}\n`);
  const res = spawnSync(process.execPath, ["--conditions=@yoi/source", "--expose-gc", file], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
  });
  for (const line of (res.stdout ?? "").split("\n")) {
    if (line.startsWith("@@bench ")) rows.push(JSON.parse(line.slice(8)) as BenchRow);
  }
  if (res.status !== 0) {
    failedScripts++;
    process.stderr.write(`bench: ${rel} exited with ${res.status ?? res.signal}\n`);
  }
}

const fmt = (n: number | undefined): string =>
  n === undefined || Number.isNaN(n)
    ? "-"
    : n >= 100
      ? n.toFixed(0)
      : n >= 1
        ? n.toFixed(2)
        : n.toPrecision(3);

let misses = 0;
if (json) {
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
} else {
  const header = [
    "group",
    "benchmark",
    "subject",
    "baseline",
    "ratio",
    "target",
    "ok",
    "baseline is",
    "note",
  ];
  const table: string[][] = [header];
  for (const r of rows) {
    const ratio = r.baseline === undefined ? undefined : (r.ratio ?? r.subject / r.baseline);
    const ok = r.target === undefined || ratio === undefined ? "" : ratio <= r.target ? "yes" : "NO";
    if (ok === "NO") misses++;
    table.push([
      r.group,
      r.name,
      `${fmt(r.subject)} ${r.unit}`,
      r.baseline === undefined ? "-" : `${fmt(r.baseline)} ${r.unit}`,
      ratio === undefined ? "-" : `${ratio.toFixed(2)}x`,
      r.target === undefined ? "-" : `<= ${r.target}x`,
      ok,
      r.baselineName ?? "",
      r.note ?? "",
    ]);
  }
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const [i, row] of table.entries()) {
    process.stdout.write(
      `${row
        .map((c, j) => c.padEnd(widths[j]!))
        .join("  ")
        .trimEnd()}\n`,
    );
    if (i === 0) process.stdout.write(`${widths.map((w) => "-".repeat(w)).join("  ")}\n`);
  }
  process.stdout.write(`\n${rows.length} rows from ${files.length} files; ${misses} missed their target\n`);
}
if (failedScripts > 0 || (strict && misses > 0)) process.exit(1);
