/**
 * The grep matcher's thread (started by grep-matcher.ts). It receives a
 * job (pattern and how to report), then batches of file contents as bytes,
 * and answers each batch with what every file gave. It imports nothing but
 * `node:worker_threads`: it can neither open a file nor name one, only
 * match the bytes it is handed.
 *
 * Before each file it notes in the shared `progress` array which file it is
 * on and since when, so the main thread's watchdog can tell a slow pattern
 * from a slow event loop.
 */
import { type MessagePort, workerData } from "node:worker_threads";
import type { FileMatch, HitChunk, MatcherReply, MatcherRequest, MatchJob } from "./grep-matcher.ts";

const { port, progress: shared } = workerData as { port: MessagePort; progress: SharedArrayBuffer };
const progress = new Int32Array(shared);
const decoder = new TextDecoder("utf-8");

/** The current job, its line pattern and (when asked for) its whole-text pre-check. */
let job: MatchJob & { epoch: number };
let line: RegExp;
let whole: RegExp | undefined;

function cut(text: string): string {
  const max = job.maxLineLength ?? Number.POSITIVE_INFINITY;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function matchText(text: string): FileMatch {
  const found: FileMatch = { count: 0, hits: [], chunks: [] };
  if (whole !== undefined && !whole.test(text)) return found;
  const lines = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start another.
  if (lines[lines.length - 1] === "") lines.pop();
  const context = job.context ?? 0;
  const budget = job.budget ?? Number.POSITIVE_INFINITY;
  let lastShown = -1;
  let size = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!line.test(lines[i]!)) continue;
    found.count += 1;
    if (job.mode === "files_with_matches") break;
    if (job.mode === "count") continue;
    if (job.mode === "lines") {
      if (found.hits.length < job.maxHits) found.hits.push(i);
      continue;
    }
    const from = Math.max(i - context, lastShown + 1);
    const chunk: HitChunk = {
      gap: context > 0 && lastShown >= 0 && from > lastShown + 1,
      from,
      hit: i,
      lines: [],
    };
    for (let j = from; j <= Math.min(i + context, lines.length - 1); j++) {
      const shown = cut(lines[j]!);
      chunk.lines.push(shown);
      size += shown.length + 1;
      lastShown = j;
    }
    found.chunks.push(chunk);
    if (found.chunks.length >= job.maxHits || size > budget) break;
  }
  return found;
}

port.on("message", (request: MatcherRequest) => {
  if (request.t === "job") {
    job = request.job;
    line = new RegExp(job.source, job.flags);
    // With the `m` flag, a line that matches implies the whole text matches (see MatchJob.prefilter).
    whole = job.prefilter ? new RegExp(job.source, `${job.flags}m`) : undefined;
    return;
  }
  const results: FileMatch[] = [];
  for (let k = 0; k < request.files.length; k++) {
    const file = request.files[k]!;
    Atomics.store(progress, 1, Date.now() - job.epoch);
    Atomics.store(progress, 0, request.seq + k);
    try {
      results.push(matchText(decoder.decode(new Uint8Array(file.bytes, 0, file.length))));
    } catch (error) {
      // What a regex or the decoder throws is an Error (a RangeError when the stack or memory runs out).
      const reply: MatcherReply = { id: request.id, error: (error as Error).message, index: k };
      port.postMessage(reply);
      return;
    }
  }
  const reply: MatcherReply = { id: request.id, results };
  port.postMessage(reply);
});
