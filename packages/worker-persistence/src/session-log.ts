import type { FileHandle } from "node:fs/promises";
import { BlobStoreError } from "@yoi/llm-worker";
import { SessionLogError, sessionIoError } from "./session-error.ts";
import type { SessionLock } from "./session-lock.ts";
import { SessionRecordWriter } from "./session-record-writer.ts";
import { type SessionRecord, serializeRecord } from "./session-records.ts";

/**
 * When the log fsyncs (`fdatasync`) the file:
 * - `"always"`: after every record. Nothing whose append returned is lost,
 *   even on power loss; the slowest.
 * - `"turn"` (default): after session_start, turn_end, cancel, error and
 *   history_replaced, and on `sync()`/`close()`. A process crash loses
 *   nothing whose append returned (the data is in the OS page cache); a
 *   power loss can lose the records of the turn in progress.
 * - `"never"`: leaves flushing to the OS. For tests and throwaway sessions.
 */
export type FsyncPolicy = "always" | "turn" | "never";

/** Storage the log's records point into (the blob store): synced before the log, so a synced record's blobs are on disk. */
export interface SyncedBefore {
  sync(): Promise<void>;
}

const BOUNDARY = new Set<string>(["session_start", "turn_end", "cancel", "error", "history_replaced"]);

/**
 * An open session log: one writer per session, enforced by a lock file.
 * Each record is one `write` of one line (with its newline) on an O_APPEND
 * descriptor; appends are serialized (see `SessionRecordWriter`), so `seq`
 * order is file order. An append resolves once the line is written (and
 * synced, per the policy).
 */
export class SessionLog extends SessionRecordWriter {
  readonly fsync: FsyncPolicy;
  readonly #handle: FileHandle;
  readonly #lock: SessionLock;
  readonly #blobs: SyncedBefore | undefined;
  #size: number;
  #dirty = false;

  /** @internal Use `createSession` / `openSession`. */
  constructor(init: {
    id: string;
    path: string;
    fsync: FsyncPolicy;
    handle: FileHandle;
    lock: SessionLock;
    /** A write-behind blob store the records reference: each fsync of the log waits for its `sync()` first. */
    blobs?: SyncedBefore;
    nextSeq: number;
    size: number;
    historyLength: number;
  }) {
    super(init);
    this.fsync = init.fsync;
    this.#handle = init.handle;
    this.#lock = init.lock;
    this.#blobs = init.blobs;
    this.#size = init.size;
  }

  /** Bytes in the log file. */
  get size(): number {
    return this.#size;
  }

  protected override async store(record: SessionRecord): Promise<void> {
    const bytes = Buffer.from(serializeRecord(record), "utf8");
    const before = this.#size;
    try {
      let written = 0;
      // One write; the loop only runs again on a short write.
      while (written < bytes.length) {
        const { bytesWritten } = await this.#handle.write(bytes, written, bytes.length - written, null);
        written += bytesWritten;
      }
    } catch (error) {
      await this.#undoPartial(before);
      throw sessionIoError("append to the session log", this.path, error);
    }
    this.#size += bytes.length;
    this.#dirty = true;
  }

  protected override async stored(record: SessionRecord): Promise<void> {
    if (this.fsync === "always" || (this.fsync === "turn" && BOUNDARY.has(record.type))) await this.#sync();
  }

  // A failed write (ENOSPC mid-line) may leave a partial line; cut it off so
  // the next append does not glue onto it. If even that fails, stop writing.
  async #undoPartial(size: number): Promise<void> {
    try {
      await this.#handle.truncate(size);
    } catch {
      this.state = "broken";
    }
  }

  async #sync(): Promise<void> {
    if (!this.#dirty) return;
    try {
      await this.#blobs?.sync();
    } catch (error) {
      // The blob store's io error wraps the fs error, whose errno the message names.
      const cause = BlobStoreError.isInstance(error) ? error.cause : error;
      throw sessionIoError("fsync the blobs referenced by the session log", this.path, cause);
    }
    try {
      await this.#handle.datasync();
      this.#dirty = false;
    } catch (error) {
      throw sessionIoError("fsync the session log", this.path, error);
    }
  }

  protected override closedError(): SessionLogError {
    return new SessionLogError(
      "closed",
      this.state === "broken"
        ? `session log ${this.path} could not be repaired after a failed write; reopen the session`
        : `session log ${this.path} is closed`,
      { path: this.path },
    );
  }

  /** Flushes everything appended so far to disk, whatever the policy. */
  sync(): Promise<void> {
    return this.serialized(() => this.#sync());
  }

  /** Waits for pending appends, fsyncs (unless the policy is `never`), closes and releases the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.state === "closed" || this.state === "closing") return;
    const wasBroken = this.state === "broken";
    this.state = "closing";
    await this.flush();
    try {
      if (this.fsync !== "never" && !wasBroken) await this.#sync();
    } finally {
      this.state = "closed";
      await this.#handle.close().catch(() => {});
      await this.#lock.release();
    }
  }
}
