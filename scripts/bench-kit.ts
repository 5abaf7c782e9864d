/**
 * The tiny kit every benchmark uses. A benchmark is a script
 * (`<package>/bench/*.bench.ts`) that measures a subject and a baseline in
 * the same run and reports rows; `pnpm bench` runs them all and prints one
 * table. Benchmarks are not tests: they print ratios, they do not fail CI
 * unless run with `--strict`.
 */
import { performance } from "node:perf_hooks";

export interface BenchRow {
  /** Package or area, e.g. `llm-client`. */
  group: string;
  /** What is measured, e.g. `anthropic replay 10k text deltas`. */
  name: string;
  /** Measured value of the subject (median), in `unit`. */
  subject: number;
  /** Measured value of the baseline (median), in `unit`. Omit for absolute rows. */
  baseline?: number;
  /** What the baseline is, e.g. `raw SDK iteration`. */
  baselineName?: string;
  unit: "ms" | "us" | "ns" | "MB" | "ops/s" | "x" | "tokens";
  /**
   * The subject/baseline ratio, when it is not `subject / baseline`: the
   * median of ratios taken pair by pair (each subject run next to its own
   * baseline run), which holds when the machine's speed drifts during the
   * run. See {@link pairedRatio}.
   */
  ratio?: number;
  /** Target ratio subject/baseline (e.g. 1.1), when there is one. */
  target?: number;
  /** Free text: sizes, counts, notes. */
  note?: string;
}

/** Emits one result row (read by scripts/bench.ts). */
export function report(row: BenchRow): void {
  process.stdout.write(`@@bench ${JSON.stringify(row)}\n`);
}

export interface MeasureOptions {
  /** Timed runs; the median is returned. Default 7. */
  runs?: number;
  /** Untimed warm-up runs. Default 2. */
  warmup?: number;
  /** Measure CPU time of this process instead of wall time. Default false. */
  cpu?: boolean;
}

/** Runs `fn` several times and returns the median duration in milliseconds. */
export async function measure(
  fn: () => unknown | Promise<unknown>,
  options: MeasureOptions = {},
): Promise<number> {
  const runs = options.runs ?? 7;
  const warmup = options.warmup ?? 2;
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (options.cpu) {
      const start = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(start);
      samples.push((used.user + used.system) / 1000);
    } else {
      const start = performance.now();
      await fn();
      samples.push(performance.now() - start);
    }
  }
  return median(samples);
}

/**
 * Measures a subject and its baseline interleaved (A B A B ...) so drift of a
 * shared machine hits both alike. Returns medians in milliseconds.
 */
export async function compare(
  subject: () => unknown | Promise<unknown>,
  baseline: () => unknown | Promise<unknown>,
  options: MeasureOptions = {},
): Promise<{ subject: number; baseline: number; ratio: number }> {
  const runs = options.runs ?? 7;
  const warmup = options.warmup ?? 2;
  for (let i = 0; i < warmup; i++) {
    await baseline();
    await subject();
  }
  const a: number[] = [];
  const b: number[] = [];
  const time = async (fn: () => unknown | Promise<unknown>): Promise<number> => {
    if (options.cpu) {
      const start = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    }
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  for (let i = 0; i < runs; i++) {
    b.push(await time(baseline));
    a.push(await time(subject));
  }
  const s = median(a);
  const base = median(b);
  return { subject: s, baseline: base, ratio: base === 0 ? Number.NaN : s / base };
}

/** The median of `subject[i] / baseline[i]`: runs measured in pairs, one next to the other. */
export function pairedRatio(subject: readonly number[], baseline: readonly number[]): number {
  return median(subject.map((s, i) => s / (baseline[i] ?? Number.NaN)));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
