/**
 * The session's background commands (`bash` with `run_in_background`):
 * each runs in its own process group, in the same sandbox as any bash
 * command, with no time limit unless the call gave one. Its output is kept
 * in a bounded buffer (the tail; what was dropped is counted) and read
 * piece by piece with `bash_output`; `kill_bash` stops one, and `killAll`
 * (the pod's close) stops every one. A group still running when the process
 * exits without a close gets SIGKILL (child-reaper.ts).
 */
import { ToolError } from "@yoi/llm-worker";
import { YoiError } from "@yoi/manifest/errors";
import { trackChild, untrackChild } from "../mcp/child-reaper.ts";
import { killProcessGroup, type SpawnedCommand } from "./command-process.ts";

/** Output kept per background command: the last this many bytes. */
export const BACKGROUND_KEEP_BYTES = 1024 * 1024;
/** Longest `wait_ms` of `bash_output`. */
export const BACKGROUND_MAX_WAIT_MS = 60_000;
/** How long a kill waits for the group to be gone before it reports. */
const KILL_WAIT_MS = 5000;

export type BackgroundState = "running" | "exited" | "killed" | "failed";

/** What a UI or a tool knows about one background command. */
export interface BackgroundShellInfo {
  id: string;
  command: string;
  description?: string;
  /** The bash call that started it. */
  callId: string;
  startedAt: number;
  endedAt?: number;
  state: BackgroundState;
  /** Exit code once it exited by itself. */
  exitCode?: number | null;
  /** The signal that ended it, if one did. */
  signal?: string | null;
  /** Why it was killed (`kill_bash`, the session ended, its time limit) or could not start. */
  reason?: string;
  /** Bytes it printed so far. */
  totalBytes: number;
  /**
   * Its shell ended while processes it started still held its output open:
   * they run on (in its process group) until `kill` or the session's end.
   */
  leftRunning?: boolean;
}

/** What `read` returns: the output since the previous read and where the command stands. */
export interface BackgroundRead {
  info: BackgroundShellInfo;
  text: string;
  /** Bytes printed since the previous read that the buffer no longer holds. */
  dropped: number;
}

/** The tail of a stream of bytes, read from an offset; cuts fall on UTF-8 character boundaries. */
class OutputTail {
  readonly #keep: number;
  #chunks: Buffer[] = [];
  #kept = 0;
  total = 0;

  constructor(keep: number) {
    this.#keep = keep;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
    this.total += chunk.length;
    while (this.#kept > this.#keep) {
      const first = this.#chunks[0]!;
      const over = this.#kept - this.#keep;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#kept -= first.length;
      } else {
        this.#chunks[0] = first.subarray(over);
        this.#kept -= over;
      }
    }
  }

  /** The text after byte `offset` (what is still kept), the bytes dropped before it, and the offset to read from next. */
  since(offset: number): { text: string; dropped: number; next: number } {
    const start = this.total - this.#kept;
    let from = Math.max(offset, start);
    const dropped = from - offset;
    let bytes = Buffer.concat(this.#chunks).subarray(from - start);
    // Not in the middle of a character: skip continuation bytes at the start, hold back an unfinished one at the end.
    let skip = 0;
    while (skip < bytes.length && skip < 3 && (bytes[skip]! & 0xc0) === 0x80) skip++;
    bytes = bytes.subarray(skip);
    from += skip;
    bytes = bytes.subarray(0, bytes.length - unfinishedTail(bytes));
    return {
      text: new TextDecoder("utf-8").decode(bytes),
      dropped: dropped + skip,
      next: from + bytes.length,
    };
  }
}

/** Bytes at the end of `bytes` that start a UTF-8 character not complete yet. */
function unfinishedTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

interface Entry {
  info: BackgroundShellInfo;
  output: OutputTail;
  readAt: number;
  pid: number | undefined;
  /** Resolves when the command has ended (every pipe closed or given up on). */
  ended: Promise<void>;
  /** Wakes a `read` waiting for more output. */
  wake: Set<() => void>;
  kill(reason: string): void;
}

export interface StartBackgroundOptions {
  command: string;
  description?: string;
  callId: string;
  /** Kill it after this long. Default: no limit. */
  timeoutMs?: number;
  spawn: () => SpawnedCommand;
}

/** The background commands of one session. */
export class BackgroundShells {
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<(info: BackgroundShellInfo) => void | Promise<void>>();
  #next = 1;
  #closed = false;

  /** Starts a command in the background; returns its info (with its `id`) at once. */
  start(options: StartBackgroundOptions): BackgroundShellInfo {
    if (this.#closed) throw new ToolError("the session has ended: no background command can start");
    const id = `bash_${this.#next++}`;
    const info: BackgroundShellInfo = {
      id,
      command: options.command,
      ...(options.description !== undefined ? { description: options.description } : {}),
      callId: options.callId,
      startedAt: Date.now(),
      state: "running",
      totalBytes: 0,
    };
    const output = new OutputTail(BACKGROUND_KEEP_BYTES);
    const { child, run } = options.spawn();
    const pid = child.pid;
    if (pid !== undefined) trackChild(pid, { group: true });
    let killTimer: NodeJS.Timeout | undefined;
    let limit: NodeJS.Timeout | undefined;
    const wake = new Set<() => void>();
    const notify = () => {
      for (const w of [...wake]) w();
    };
    const onData = (chunk: Buffer) => {
      output.push(chunk);
      info.totalBytes = output.total;
      notify();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    let done = false;
    const entry: Entry = {
      info,
      output,
      readAt: 0,
      pid,
      wake,
      ended: new Promise<void>((resolve) => {
        const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
          if (done) return;
          done = true;
          if (limit !== undefined) clearTimeout(limit);
          if (killTimer !== undefined && info.leftRunning !== true) clearTimeout(killTimer);
          // A group that lives on stays tracked: the session's end (or the process's exit) stops it.
          if (pid !== undefined && info.leftRunning !== true) untrackChild(pid, { group: true });
          info.endedAt = Date.now();
          if (error !== undefined) {
            info.state = "failed";
            info.reason = `could not start ${run.file}: ${error.message}`;
          } else if (info.state === "running") {
            info.state = "exited";
            info.exitCode = code;
            info.signal = signal;
          } else {
            info.signal = signal;
          }
          if (info.leftRunning === true)
            onData(
              Buffer.from(
                "\n[its shell ended, but processes it started still run: kill_bash or the end of the session stops them]\n",
              ),
            );
          const undone = run.release?.();
          if (undone !== undefined) onData(Buffer.from(`\n[sandbox: ${undone}]\n`));
          notify();
          // Ended once its listeners are done (what it changed is checkpointed before the session's log closes).
          const heard = [...this.#listeners].map(async (listener) => listener({ ...info }));
          void Promise.allSettled(heard).then(() => resolve());
        };
        child.on("error", (error) => finish(null, null, error));
        child.on("close", (code, signal) => finish(code, signal));
        child.on("exit", (code, signal) => {
          // Processes it left behind may keep the pipes open: the command has ended all the same.
          setTimeout(() => {
            if (done) return;
            info.leftRunning = true;
            child.stdout.destroy();
            child.stderr.destroy();
            finish(code, signal);
          }, 500).unref();
        });
      }),
      kill: (reason) => {
        if (pid === undefined) return;
        if (info.state === "running") {
          info.state = "killed";
          info.reason = reason;
          killTimer = killProcessGroup(pid);
        } else if (info.leftRunning === true) {
          // Its shell is gone; what it left running is stopped now.
          delete info.leftRunning;
          killProcessGroup(pid);
          untrackChild(pid, { group: true });
        }
      },
    };
    if (options.timeoutMs !== undefined)
      limit = setTimeout(() => entry.kill(`timed out after ${options.timeoutMs} ms`), options.timeoutMs);
    limit?.unref();
    this.#entries.set(id, entry);
    return { ...info };
  }

  /** Every background command of the session, oldest first. */
  list(): BackgroundShellInfo[] {
    return [...this.#entries.values()].map((e) => ({ ...e.info }));
  }

  /** How many are still running. */
  get running(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.info.state === "running") n++;
    return n;
  }

  /** The info of `id`, or undefined for an id this session never gave out. */
  get(id: string): BackgroundShellInfo | undefined {
    const entry = this.#entries.get(id);
    return entry === undefined ? undefined : { ...entry.info };
  }

  /**
   * The output of `id` since the previous read. With `waitMs`, waits up to
   * that long for something new (output, or the end) when there is nothing
   * yet. Throws `UnknownBackgroundShell` for an unknown id.
   */
  async read(id: string, waitMs = 0, signal?: AbortSignal): Promise<BackgroundRead> {
    const entry = this.#entry(id);
    if (waitMs > 0 && entry.info.state === "running" && entry.output.total === entry.readAt) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          entry.wake.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        entry.wake.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    const { text, dropped, next } = entry.output.since(entry.readAt);
    entry.readAt = next;
    return { info: { ...entry.info }, text, dropped };
  }

  /** Stops `id` (its whole process group) and waits, bounded, until it has ended. */
  async kill(id: string, reason = "killed with kill_bash"): Promise<BackgroundShellInfo> {
    const entry = this.#entry(id);
    entry.kill(reason);
    await Promise.race([entry.ended, new Promise((r) => setTimeout(r, KILL_WAIT_MS).unref())]);
    return { ...entry.info };
  }

  /** Stops every command still running and waits for them (the session ends); no new one may start. */
  async killAll(reason = "the session ended"): Promise<void> {
    this.#closed = true;
    const running = [...this.#entries.values()].filter(
      (e) => e.info.state === "running" || e.info.leftRunning === true,
    );
    for (const entry of running) entry.kill(reason);
    await Promise.race([
      Promise.all(running.map((e) => e.ended)),
      new Promise((r) => setTimeout(r, KILL_WAIT_MS).unref()),
    ]);
  }

  /** Tells `listener` each time a command ends (exited, killed or failed); returns the unsubscribe function. */
  onEnd(listener: (info: BackgroundShellInfo) => void | Promise<void>): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry !== undefined) return entry;
    const known = [...this.#entries.keys()];
    throw new UnknownBackgroundShell(id, known);
  }
}

/** A background id this session never gave out (`unknown_background_id`). */
export class UnknownBackgroundShell extends YoiError<"unknown_background_id"> {
  override readonly name = "UnknownBackgroundShell";
  static override readonly marker: symbol = Symbol.for("yoi.error.UnknownBackgroundShell");
  readonly known: readonly string[];
  constructor(id: string, known: readonly string[]) {
    super(
      "unknown_background_id",
      `No background command has the id ${JSON.stringify(id)}. ` +
        (known.length === 0
          ? "None was started in this session: start one with bash and run_in_background: true."
          : `The ids of this session: ${known.join(", ")}.`),
    );
    this.known = known;
  }
}
