/**
 * Runs a grep's regular expression in a worker thread: the one matcher of
 * the pod's `grep` tool and of `tool_output_cache_grep`. A JavaScript regex
 * cannot be interrupted: a catastrophically backtracking pattern (`(a+)+$`
 * on a long line) would freeze the whole agent (UI, cancel, other tools) if
 * it ran on the main thread. The thread (grep-matcher-worker.ts) gets
 * contents only, as bytes transferred to it, never a path, so it cannot
 * open anything, in scope or out. A watchdog terminates it when one text
 * takes longer than the time limit, and the caller's abort signal
 * terminates it at once.
 *
 * Threads are leased per search and kept (at most two, unref'd, for a
 * while) for the next one: starting one costs tens of milliseconds.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { ToolError } from "@yoi/llm-worker";

/** Default longest time the matcher may spend on one text. */
export const GREP_TIMEOUT_MS = 10_000;
/** Idle threads kept for the next search. */
const POOL_SIZE = 2;
/** An idle thread is closed after this long. */
const IDLE_MS = 30_000;

/** What the thread needs to match and report one search's texts. */
export interface MatchJob {
  /** The pattern, as `RegExp.source`. */
  source: string;
  flags: string;
  /**
   * Test each whole text with the pattern and the `m` flag first, and skip
   * the lines of a text it misses. Sound only where a line-wise match
   * implies a whole-text one: not for lookarounds, which may look across a
   * newline in the whole text.
   */
  prefilter?: boolean;
  /**
   * `content`: the matching lines with context, as chunks to print;
   * `lines`: the indexes of the matching lines and their exact count;
   * `count`: the exact count; `files_with_matches`: whether any line matches.
   */
  mode: "content" | "lines" | "count" | "files_with_matches";
  /** At most this many hits are returned per text (content and lines modes). */
  maxHits: number;
  /** Lines shown before and after each hit (content mode). Default 0. */
  context?: number;
  /** Stop collecting a text's chunks once their characters pass this (content mode). Default: no limit. */
  budget?: number;
  /** Longer lines are cut to this many characters and `…` (content mode). Default: no limit. */
  maxLineLength?: number;
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

/**
 * What a text gave. Lines are split at `\n` or `\r\n`; a final newline
 * ends the last line. `count` is exact in count and lines modes, at least
 * 1 if any line matches otherwise.
 */
export interface FileMatch {
  count: number;
  /** Indexes (0-based) of the first `maxHits` matching lines (lines mode). */
  hits: number[];
  /** What to print (content mode). */
  chunks: HitChunk[];
}

/** A message to the thread: the job, then batches of texts. */
export type MatcherRequest =
  | { t: "job"; job: MatchJob & { epoch: number } }
  | { t: "batch"; id: number; seq: number; files: Array<{ bytes: ArrayBuffer; length: number }> };

/** The thread's answer to a batch. */
export type MatcherReply =
  | { id: number; results: FileMatch[] }
  | { id: number; error: string; index: number };

/**
 * The thread's module file: beside this one (the .ts source, which Node
 * strips of its types, or the .js of `dist`), or, in the CLI's bundle,
 * `grep-matcher-worker.js` at the bundle's root (this code then sits in a
 * file of `chunks/`).
 */
let workerUrl: URL | undefined;
function matcherModule(): URL {
  if (workerUrl !== undefined) return workerUrl;
  const beside = import.meta.url.endsWith(".ts")
    ? new URL("./grep-matcher-worker.ts", import.meta.url)
    : new URL("./grep-matcher-worker.js", import.meta.url);
  const bundled = new URL("../grep-matcher-worker.js", import.meta.url);
  workerUrl = [beside, bundled].find((url) => existsSync(fileURLToPath(url)));
  if (workerUrl === undefined) {
    throw new ToolError(
      `the search could not start: its matcher (${fileURLToPath(beside)}) is missing from this install; reinstall the package`,
    );
  }
  return workerUrl;
}

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
  #onReply: ((reply: MatcherReply) => void) | undefined;
  #onDeath: ((error: Error) => void) | undefined;
  dead = false;
  idleTimer: NodeJS.Timeout | undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(matcherModule(), {
      workerData: { port: port2, progress: this.progress.buffer },
      transferList: [port2],
      // The matcher needs no environment and writes nothing.
      env: {},
    });
    this.worker.unref();
    this.port.on("message", (reply: MatcherReply) => this.#onReply?.(reply));
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
  bind(onReply?: (reply: MatcherReply) => void, onDeath?: (error: Error) => void): void {
    this.#onReply = onReply;
    this.#onDeath = onDeath;
  }

  /** Delivers replies already queued on the port (used before declaring a timeout). */
  drain(): void {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      this.#onReply?.(m.message as MatcherReply);
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

/**
 * Closes the idle matcher threads now (tests, shutdown) and says how many
 * there were. Threads in use are not affected.
 */
export function closeIdleMatchers(): number {
  let closed = 0;
  for (let t = idle.pop(); t !== undefined; t = idle.pop()) {
    clearTimeout(t.idleTimer);
    t.kill();
    closed += 1;
  }
  return closed;
}

export interface GrepMatcherOptions {
  /** Longest time spent on one text before the search is stopped. Default `GREP_TIMEOUT_MS` (10 s). */
  timeoutMs?: number;
  /** The caller's signal: aborting it terminates the thread and rejects with the signal's reason. */
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
    const start: MatcherRequest = { t: "job", job: { ...job, epoch: this.#epoch } };
    this.#thread.port.postMessage(start);
    Atomics.store(this.#thread.progress, 0, -1);
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) this.#onAbort();
  }

  /**
   * Matches a batch of texts (UTF-8 bytes) in one message (each message
   * costs a thread round trip). The buffers are transferred: do not use
   * them afterwards; they must not be slices of Node's shared pool.
   * `label` names a text (a file, a ref) in a timeout error.
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
      const batch: MatcherRequest = { t: "batch", id, seq, files: payload };
      this.#thread.port.postMessage(batch, transfer);
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

  #onReply(reply: MatcherReply): void {
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
