/**
 * The session log as the pod writes it: records are queued in order and
 * written one after another. A new session's log does not exist until a
 * record that `opens` it arrives (the first input), so a pod opened and
 * closed without input leaves nothing behind; records raised before that
 * (alerts at start-up) wait and go right after session_start, and are
 * dropped if the session never begins. A restored session starts with its
 * log open.
 *
 * Failure path: the first write that fails marks the log broken, reports
 * the error once through `onFailure`, and later records are dropped (see
 * `#fail`).
 */

import type { RunResult } from "@yoi/llm-worker";
import type { PermissionMode } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { SessionLogError, type SessionWriter } from "@yoi/worker-persistence";

/** What a new session's session_start says about the session as its first input arrives. */
export interface SessionStartMeta {
  model: string;
  provider: string;
  permissionMode: PermissionMode;
  /** The git branch checked out, when the environment was read and the directory is a repository. */
  gitBranch?: string;
}

/** One record's write. */
export type LogWrite = (log: SessionWriter) => Promise<unknown>;

export interface SessionLogOptions {
  /** A restored session's log, open. */
  writer?: SessionWriter;
  /** Creates a new session's log; called once, by the first record that opens it. */
  create?: (meta: SessionStartMeta) => Promise<SessionWriter>;
  /** What session_start says, read when the log is created. */
  startMeta: () => SessionStartMeta;
  /** The log could not be written (called once, with the first failure). */
  onFailure: (error: unknown) => void;
}

export class SessionLog {
  readonly #options: SessionLogOptions;
  #create: SessionLogOptions["create"];
  /** The log, once it exists or is being created. */
  #ready: Promise<SessionWriter> | undefined;
  #writer: SessionWriter | undefined;
  /** Records raised before the log exists, written after session_start. */
  readonly #early: LogWrite[] = [];
  readonly #pending = new Set<Promise<unknown>>();
  #broken = false;
  /** Why the log could not be written, once it could not. */
  #failure: { message: string; lost: boolean } | undefined;
  #closed = false;

  constructor(options: SessionLogOptions) {
    this.#options = options;
    this.#create = options.create;
    if (options.writer) {
      this.#writer = options.writer;
      this.#ready = Promise.resolve(options.writer);
    }
  }

  /** The log, once it exists (after the first input, or from the start when restored). */
  get writer(): SessionWriter | undefined {
    return this.#writer;
  }

  /**
   * Why the log could not be written (a full disk; `lost`: another host took
   * the session over), once a write failed; later records are dropped.
   */
  get failure(): { message: string; lost: boolean } | undefined {
    return this.#failure;
  }

  /** Whether the session has begun: its log exists or is being created. */
  get started(): boolean {
    return this.#ready !== undefined;
  }

  /**
   * Queues a record. Before the log exists, a record that `opens` (input,
   * items: the session has begun) creates it; others (alerts) wait for it.
   */
  append(write: LogWrite, options: { opens?: boolean } = {}): void {
    if (this.#closed || this.#broken) return;
    let ready = this.#ready;
    if (ready === undefined) {
      const create = this.#create;
      if (options.opens === false || create === undefined) {
        this.#early.push(write);
        return;
      }
      this.#create = undefined;
      const meta = this.#options.startMeta();
      ready = this.#ready = (async () => {
        const writer = await create(meta);
        this.#writer = writer;
        return writer;
      })();
      // Records raised before the session began go first, in order.
      for (const early of this.#early.splice(0)) this.append(early);
    }
    const pending = ready.then(write).catch((error: unknown) => this.#fail(error));
    this.#pending.add(pending);
    void pending.finally(() => this.#pending.delete(pending));
  }

  /** Waits until every record so far is written. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Writes what is queued, then closes the log (releases its lock); later records are dropped. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    const writer = await this.#ready?.catch(() => undefined);
    await writer?.close();
  }

  /** The failure path: once broken, the log takes no more records. */
  #fail(error: unknown): void {
    if (this.#broken) return;
    this.#broken = true;
    this.#failure = {
      message: errorMessage(error),
      lost: SessionLogError.isInstance(error) && error.code === "locked",
    };
    this.#options.onFailure(error);
  }
}

/**
 * A run's result once the session log failed (a full disk): failed with
 * `storage`, whatever the worker said, since what it did is not recorded.
 * `result` is undefined for a run that never started.
 */
export function unrecordedResult(
  result: RunResult | undefined,
  failure: { message: string; lost: boolean },
): RunResult {
  return {
    ...(result ?? { turns: 0, usage: {} }),
    status: "failed",
    error: {
      code: "storage",
      message: failure.lost
        ? `Another host took this session over (${failure.message}), so the run stopped here and did nothing more. Continue the session where it runs now: what was recorded is kept.`
        : `The session log could not be written (${failure.message}), so the run stopped and what it did is not recorded. Free disk space, then resume the session: what was recorded is kept.`,
      retryable: false,
    },
  };
}
