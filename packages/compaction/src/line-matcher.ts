/**
 * Runs a model-supplied regular expression over lines in a worker thread
 * with a time limit. A JavaScript regex cannot be interrupted, and a
 * pattern with catastrophic backtracking (`(a+)+$`) would otherwise freeze
 * the whole agent: the tool's timeout cannot stop synchronous code.
 */
import { Worker } from "node:worker_threads";
import { CompactionError } from "./errors.ts";

/** Default limit of one search. */
export const GREP_TIMEOUT_MS = 10_000;

// Plain CommonJS evaluated in the thread: no module resolution, works from source and from dist alike.
const MATCHER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const re = new RegExp(workerData.pattern, workerData.flags);
const lines = workerData.lines;
const hits = [];
for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) hits.push(i);
parentPort.postMessage(hits);
`;

export interface MatchOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Indexes of the lines `new RegExp(pattern, flags)` matches. Rejects with `CompactionError("cache")` on timeout. */
export function matchLines(
  lines: readonly string[],
  pattern: string,
  flags: string,
  options: MatchOptions = {},
): Promise<number[]> {
  const timeoutMs = options.timeoutMs ?? GREP_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new CompactionError("cache", "The search was cancelled."));
      return;
    }
    const worker = new Worker(MATCHER_SOURCE, { eval: true, workerData: { lines, pattern, flags } });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new CompactionError(
              "cache",
              `The pattern ${JSON.stringify(pattern)} took more than ${timeoutMs / 1000} s and was stopped (likely catastrophic backtracking from nested quantifiers such as (a+)+ or (.*)*). Simplify the pattern.`,
            ),
          ),
        ),
      timeoutMs,
    );
    const onAbort = () => finish(() => reject(new CompactionError("cache", "The search was cancelled.")));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (hits: number[]) => finish(() => resolve(hits)));
    worker.once("error", (error) =>
      finish(() =>
        reject(new CompactionError("cache", `The search failed: ${error.message}`, { cause: error })),
      ),
    );
    worker.once("exit", (code) =>
      finish(() =>
        reject(new CompactionError("cache", `The search stopped unexpectedly (exit code ${code}).`)),
      ),
    );
  });
}
