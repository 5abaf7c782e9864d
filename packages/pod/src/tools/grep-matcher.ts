/**
 * Runs grep's regular expression in a worker thread. A JavaScript regex
 * cannot be interrupted: a catastrophically backtracking pattern (`(a+)+$`
 * on a long line) would freeze the whole agent (UI, cancel, other tools) if
 * it ran on the main thread. The worker gets file contents only (bytes read
 * through ScopedFs on the main thread, transferred, never a path), so it
 * cannot open anything, in scope or out. A watchdog terminates it when one
 * file takes longer than the time limit, and the tool's abort signal
 * terminates it at once.
 *
 * Workers are leased per grep call and kept (at most two, unref'd, for a
 * while) for the next call: spawning one costs tens of milliseconds.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { ToolError } from "@yoi/llm-worker";

/** Default longest time the matcher may spend on one file. */
export const GREP_TIMEOUT_MS = 10_000;
/** Idle workers kept for the next call. */
const POOL_SIZE = 2;
/** An idle worker is closed after this long. */
const IDLE_MS = 30_000;

/** What the worker needs to match and render one call's files. */
export interface MatchJob {
  source: string;
  flags: string;
  /** Run a whole-text pre-check with the `m` flag first (see grep.ts). */
  prefilter: boolean;
  mode: "content" | "files_with_matches" | "count";
  context: number;
  /** At most this many hits are returned per file (content mode). */
  maxHits: number;
  /** Stop collecting a file's hits once their text passes this many characters. */
  budget: number;
  maxLineLength: number;
}

/** One hit in content mode: the lines to print before and including it, after it. */
export interface HitChunk {
  /** Print `--` first (a gap since the last shown line). */
  gap: boolean;
  /** Index (0-based) of the first line in `lines`. */
  from: number;
  /** Index of the matching line. */
  hit: number;
  /** Lines `from..` to print (already cut to the maximum length). */
  lines: string[];
}

/** What a file gave. `count` is exact in count mode, at least 1 if any hit otherwise. */
export interface FileMatch {
  count: number;
  chunks: HitChunk[];
}

/**
 * The worker's code: plain CommonJS evaluated in the thread (no module
 * resolution, works from source and from dist alike). It requires nothing
 * but worker_threads: no fs, no paths.
 */
export const MATCHER_SOURCE = `
"use strict";
const { workerData } = require("node:worker_threads");
const port = workerData.port;
const progress = new Int32Array(workerData.progress);
const decoder = new TextDecoder("utf-8");
let job, re, pre;
const cut = (line) => (line.length > job.maxLineLength ? line.slice(0, job.maxLineLength) + "\\u2026" : line);
function matchFile(text) {
  if (pre !== undefined && !pre.test(text)) return { count: 0, chunks: [] };
  const lines = text.split(/\\r?\\n/);
  const n = lines.length;
  const chunks = [];
  let count = 0, lastShown = -1, size = 0;
  for (let i = 0; i < n; i++) {
    if (!re.test(lines[i])) continue;
    count++;
    if (job.mode === "files_with_matches") break;
    if (job.mode !== "content") continue;
    const from = Math.max(i - job.context, lastShown + 1);
    const gap = job.context > 0 && lastShown >= 0 && from > lastShown + 1;
    const shown = [];
    for (let j = from; j <= Math.min(i + job.context, n - 1); j++) {
      if (j === n - 1 && lines[j] === "") break;
      const line = cut(lines[j]);
      shown.push(line);
      size += line.length + 1;
      lastShown = j;
    }
    chunks.push({ gap, from, hit: i, lines: shown });
    if (chunks.length >= job.maxHits || size > job.budget) break;
  }
  return { count, chunks };
}
port.on("message", (msg) => {
  if (msg.t === "job") {
    job = msg.job;
    re = new RegExp(job.source, job.flags);
    pre = job.prefilter ? new RegExp(job.source, job.flags + "m") : undefined;
    return;
  }
  const results = [];
  for (let k = 0; k < msg.files.length; k++) {
    const file = msg.files[k];
    // Which file runs since when (ms since job.epoch): the watchdog reads it.
    Atomics.store(progress, 1, Date.now() - job.epoch);
    Atomics.store(progress, 0, msg.seq + k);
    try {
      results.push(matchFile(decoder.decode(new Uint8Array(file.bytes, 0, file.length))));
    } catch (error) {
      port.postMessage({ id: msg.id, error: String(error && error.message ? error.message : error), index: k });
      return;
    }
  }
  port.postMessage({ id: msg.id, results });
});
`;

type Reply = { id: number; results: FileMatch[] } | { id: number; error: string; index: number };

interface Pending {
  id: number;
  /** Sequence number of the batch's first file. */
  seq: number;
  labels: string[];
  resolve: (m: FileMatch[]) => void;
  reject: (e: unknown) => void;
}

/** A worker thread and the port the matcher talks on. */
class MatcherThread {
  readonly worker: Worker;
  readonly port: MessagePort;
  /** [sequence number of the file being matched, when it started in ms since the job's epoch]. */
  readonly progress = new Int32Array(new SharedArrayBuffer(8));
  #onReply: ((reply: Reply) => void) | undefined;
  #onDeath: ((error: Error) => void) | undefined;
  dead = false;
  idleTimer: NodeJS.Timeout | undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(MATCHER_SOURCE, {
      eval: true,
      workerData: { port: port2, progress: this.progress.buffer },
      transferList: [port2],
      // The matcher needs no environment and writes nothing.
      env: {},
    });
    this.worker.unref();
    this.port.on("message", (reply: Reply) => this.#onReply?.(reply));
    this.port.unref();
    const die = (error: Error) => {
      if (this.dead) return;
      this.dead = true;
      this.#onDeath?.(error);
    };
    this.worker.on("error", (error) => die(error));
    this.worker.on("exit", (code) => die(new Error(`the matcher thread exited (code ${code})`)));
  }

  /** Attach a lease's handlers (or detach with `undefined`). */
  bind(onReply?: (reply: Reply) => void, onDeath?: (error: Error) => void): void {
    this.#onReply = onReply;
    this.#onDeath = onDeath;
  }

  /** Delivers replies already queued on the port (used before declaring a timeout). */
  drain(): void {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      this.#onReply?.(m.message as Reply);
    }
  }

  kill(): void {
    this.dead = true;
    this.bind();
    this.port.close();
    void this.worker.terminate();
  }
}

const idle: MatcherThread[] = [];

function acquire(): MatcherThread {
  for (let t = idle.pop(); t !== undefined; t = idle.pop()) {
    clearTimeout(t.idleTimer);
    if (!t.dead) return t;
  }
  return new MatcherThread();
}

function release(thread: MatcherThread): void {
  thread.bind();
  if (thread.dead) return;
  if (idle.length >= POOL_SIZE) {
    thread.kill();
    return;
  }
  thread.idleTimer = setTimeout(() => {
    const i = idle.indexOf(thread);
    if (i >= 0) idle.splice(i, 1);
    thread.kill();
  }, IDLE_MS);
  thread.idleTimer.unref();
  idle.push(thread);
}

/** Closes the idle matcher threads now (tests, shutdown). Threads in use are not affected. */
export function closeIdleMatchers(): void {
  for (let t = idle.pop(); t !== undefined; t = idle.pop()) {
    clearTimeout(t.idleTimer);
    t.kill();
  }
}

export interface GrepMatcherOptions {
  /** Longest time spent on one file before the search is stopped. Default `GREP_TIMEOUT_MS` (10 s). */
  timeoutMs?: number;
  /** The tool's signal: aborting it terminates the thread and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * One grep call's matcher. `matchBatch` may be called many times without
 * waiting (batches queue in the thread, results come back in order);
 * `close` must be called when the call ends.
 */
export class GrepMatcher {
  readonly #thread: MatcherThread;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #pending: Pending[] = [];
  readonly #onAbort = () => this.#fail(this.#signal?.reason ?? new Error("grep was cancelled"));
  #nextId = 0;
  #nextSeq = 0;
  readonly #epoch = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #failure: unknown;
  #closed = false;
  #source: string;

  constructor(job: MatchJob, options: GrepMatcherOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? GREP_TIMEOUT_MS;
    this.#signal = options.signal;
    this.#source = job.source;
    this.#thread = acquire();
    this.#thread.bind(
      (reply) => this.#onReply(reply),
      (error) => this.#fail(new ToolError(`grep failed: ${error.message}`)),
    );
    this.#thread.port.postMessage({ t: "job", job: { ...job, epoch: this.#epoch } });
    Atomics.store(this.#thread.progress, 0, -1);
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) this.#onAbort();
  }

  /**
   * Matches a batch of files in one message (each message costs a thread
   * round trip). The buffers are transferred: do not use them afterwards;
   * they must not be slices of Node's shared pool. `label` names a file in
   * a timeout error.
   */
  matchBatch(files: ReadonlyArray<{ bytes: Uint8Array; label: string }>): Promise<FileMatch[]> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new Error("GrepMatcher is closed"));
    const id = this.#nextId++;
    const seq = this.#nextSeq;
    this.#nextSeq += files.length;
    const transfer: ArrayBuffer[] = [];
    const payload = files.map(({ bytes }) => {
      const whole = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;
      const buffer = (whole ? bytes.buffer : bytes.slice().buffer) as ArrayBuffer;
      transfer.push(buffer);
      return { bytes: buffer, length: bytes.byteLength };
    });
    const result = new Promise<FileMatch[]>((resolve, reject) => {
      this.#pending.push({ id, seq, labels: files.map((f) => f.label), resolve, reject });
      if (this.#pending.length === 1) this.#arm(this.#timeoutMs);
      this.#thread.port.postMessage({ t: "batch", id, seq, files: payload }, transfer);
    });
    // The caller may stop before awaiting every queued batch: a failure then is not an unhandled rejection.
    result.catch(() => {});
    return result;
  }

  /** Ends the call: an idle thread goes back to the pool, a busy one is terminated. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    clearTimeout(this.#timer);
    if (this.#failure === undefined && this.#pending.length === 0) {
      release(this.#thread);
    } else {
      // Files still queued in the thread (the caller stopped early) or a failure: no waiting for it.
      // Their promises are dropped unsettled; nobody awaits them any more.
      this.#pending.length = 0;
      this.#thread.kill();
    }
  }

  /**
   * The watchdog: when it fires, it looks at which file the thread is on
   * and since when, and either stops the search or waits out the rest of
   * that file's limit.
   */
  #arm(delay: number): void {
    clearTimeout(this.#timer);
    this.#thread.port.ref();
    this.#timer = setTimeout(() => {
      // Replies that arrived while this thread was busy count: the main thread may simply have been late.
      this.#thread.drain();
      if (this.#pending.length === 0 || this.#failure !== undefined) return;
      const seq = Atomics.load(this.#thread.progress, 0);
      const startedAt = this.#epoch + Atomics.load(this.#thread.progress, 1);
      const head = this.#pending[0]!;
      const running = seq >= head.seq && seq < head.seq + head.labels.length;
      const elapsed = running ? Date.now() - startedAt : 0;
      if (elapsed < this.#timeoutMs) {
        this.#arm(this.#timeoutMs - elapsed);
        return;
      }
      const label = head.labels[seq - head.seq]!;
      this.#fail(
        new ToolError(
          `grep stopped: the pattern /${this.#source}/ took more than ${formatSeconds(this.#timeoutMs)} on ${label} ` +
            "(likely catastrophic backtracking). Simplify it: avoid nested or adjacent quantifiers over the same text " +
            "such as (a+)+, (.*)*, (\\w+\\s?)+ or .*.*=, anchor it, or use a literal string.",
        ),
      );
    }, delay);
  }

  #onReply(reply: Reply): void {
    const p = this.#pending[0];
    if (p === undefined || p.id !== reply.id) return;
    this.#pending.shift();
    if (this.#pending.length > 0) this.#arm(this.#timeoutMs);
    else {
      clearTimeout(this.#timer);
      this.#thread.port.unref();
    }
    if ("error" in reply) {
      this.#fail(new ToolError(`grep failed on ${p.labels[reply.index]}: ${reply.error}`));
      p.reject(this.#failure);
    } else p.resolve(reply.results);
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    clearTimeout(this.#timer);
    this.#thread.kill();
    for (const p of this.#pending.splice(0)) p.reject(error);
  }
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
