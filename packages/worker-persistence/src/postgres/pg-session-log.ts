import type { Sql } from "postgres";
import { SessionLogError } from "../session-error.ts";
import type { FsyncPolicy } from "../session-log.ts";
import { SessionRecordWriter } from "../session-record-writer.ts";
import { type SessionRecord, serializeRecord } from "../session-records.ts";
import type { SessionWriter } from "../session-store-port.ts";
import { describeDbError } from "./pg-error.ts";
import type { PgLease } from "./pg-lease.ts";
import { LineReplay, parseSnapshot, type RecordLine, readSnapshot, writeSnapshot } from "./pg-snapshot.ts";

/** What an opened session's writer starts its snapshots from: the stored snapshot and the rows after it. */
export interface SnapshotBase {
  /** The seq of the snapshot the session was opened from, if any, and the rows it covers. */
  seq?: number;
  rows?: number;
  /** Rows read after it. */
  tail: RecordLine[];
}

/**
 * A snapshot is due when the rows after the last one reach a quarter of the
 * rows it covers (at least `snapshotEvery`): each costs the whole state, so
 * this keeps what snapshots write to a few times the records' own size
 * however long a session grows, and a resume after a crash reads at most a
 * quarter more than the snapshot.
 */
const SNAPSHOT_GROWTH = 4;

/** A writer closing with at least this many records past its last snapshot (or `snapshotEvery`, if fewer) writes one. */
const SNAPSHOT_AT_CLOSE = 100;

/**
 * An open session on PostgreSQL: the same records and typed helpers as the
 * JSONL `SessionLog`. Each append is one statement that inserts the record
 * at the next seq only while the lease row still holds this writer's token (the lease
 * row is share-locked by that statement, so a takeover waits for it to
 * commit, and the new holder's replay sees it). An append resolves once
 * committed: every acknowledged record survives a crash of this host.
 *
 * A failed append (connection lost, lease lost) breaks the writer: later
 * appends reject with `closed`, as a JSONL log that cannot repair itself
 * does; reopen the session to continue from what was committed.
 *
 * Its `path` says where the session lives: `postgres://host:port/db#<id>`
 * (no credentials).
 *
 * Every `snapshotEvery` records, and at close, it writes a snapshot of the
 * replayed state (see `pg-snapshot.ts`) in the background, built from the
 * lines it stored (never from objects its caller may still change). A
 * snapshot that fails to write is skipped: the records hold everything.
 */
export class PgSessionLog extends SessionRecordWriter implements SessionWriter {
  /** Every append is a committed transaction: the strongest file policy. */
  readonly fsync: FsyncPolicy = "always";
  readonly lease: PgLease;
  readonly #sql: Sql;
  #broken: string | undefined;
  #brokenBy: "io" | "locked" | undefined;
  readonly #snapshotEvery: number;
  /**
   * The seq of the last snapshot written or read (undefined: none), and the
   * rows stored after it. The snapshot itself is read again when the next is
   * built, rather than held: a host keeps many sessions open.
   */
  #baseSeq: number | undefined;
  #tail: RecordLine[];
  /** The next snapshot is due when the tail has this many rows. */
  #due: number;
  #snapshotting: Promise<void> | undefined;

  /** @internal Use `PgSessionStore.create` / `open`. */
  constructor(init: {
    id: string;
    path: string;
    sql: Sql;
    lease: PgLease;
    nextSeq: number;
    historyLength: number;
    snapshotEvery: number;
    snapshot?: SnapshotBase;
  }) {
    super(init);
    this.#sql = init.sql;
    this.lease = init.lease;
    this.#snapshotEvery = init.snapshotEvery;
    this.#baseSeq = init.snapshot?.seq;
    this.#tail = (this.#snapshotEvery > 0 && init.snapshot?.tail) || [];
    this.#due = this.#dueAfter(init.snapshot?.rows ?? 0);
    // A session opened with a long tail (one written before snapshots
    // existed, or by a host that died) gets its snapshot now.
    this.#maybeSnapshot();
  }

  #maybeSnapshot(): void {
    if (this.#snapshotEvery <= 0 || this.#snapshotting || this.#tail.length < this.#due) return;
    this.#snapshotting = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#snapshot())
      .finally(() => {
        this.#snapshotting = undefined;
        // rows stored while it was written may make the next one due already
        if (this.state === "open") this.#maybeSnapshot();
      });
  }

  /** Builds and writes a snapshot of every row stored so far. Never rejects. */
  async #snapshot(): Promise<void> {
    const count = this.#tail.length;
    if (count === 0 || this.state === "broken" || this.lease.lost !== undefined) return;
    try {
      let from: Exclude<ReturnType<typeof parseSnapshot>, string> | undefined;
      if (this.#baseSeq !== undefined) {
        const stored = await readSnapshot(this.#sql, this.id);
        const parsed = stored && parseSnapshot(stored.state, this.#baseSeq);
        // never a snapshot of the tail alone: it would lack everything before it
        if (typeof parsed !== "object")
          throw new Error(`the snapshot at seq ${this.#baseSeq} cannot be read`);
        from = parsed;
      }
      const replay = new LineReplay(this.id, this.path, from);
      for (let i = 0; i < count; i++) {
        const row = this.#tail[i] as RecordLine;
        replay.apply(row.seq, row.line);
      }
      const state = replay.snapshot();
      if (await writeSnapshot(this.#sql, this.id, this.lease.token, replay.maxSeq, state)) {
        this.#baseSeq = replay.maxSeq;
        this.#tail = this.#tail.slice(count);
        this.#due = this.#dueAfter(replay.rows);
        return;
      }
    } catch {
      // derived data: the records are intact, the next resume replays more of them
    }
    this.#due = this.#tail.length + this.#snapshotEvery;
  }

  #dueAfter(rows: number): number {
    return Math.max(this.#snapshotEvery, Math.floor(rows / SNAPSHOT_GROWTH));
  }

  protected override async store(record: SessionRecord): Promise<void> {
    const lost = this.lease.lost;
    if (lost !== undefined) throw this.#break("locked", `the lease on session ${this.id} was lost: ${lost}`);
    const line = serializeRecord(record).slice(0, -1);
    let rows: { seq: number }[];
    try {
      rows = await this.#sql<{ seq: number }[]>`
        WITH lease AS (
          SELECT 1 FROM yoi_session_leases
          WHERE session_id = ${this.id} AND token = ${this.lease.token}
          FOR SHARE
        )
        INSERT INTO yoi_session_records (session_id, seq, type, ts, line)
        SELECT ${this.id}, ${record.seq}, ${record.type}, ${record.ts}, ${line} FROM lease
        RETURNING seq`;
    } catch (error) {
      if ((error as { code?: string }).code === "23505") {
        throw this.#break("locked", `another writer appended seq ${record.seq} to session ${this.id}`, error);
      }
      throw this.#break(
        "io",
        `cannot append to session ${this.id} in ${this.path.split("#")[0]}: ${describeDbError(error)}`,
        error,
      );
    }
    if (rows.length === 0) {
      throw this.#break(
        "locked",
        `the lease on session ${this.id} was taken over by another host after it expired; this host stopped writing it`,
      );
    }
    if (this.#snapshotEvery > 0) {
      this.#tail.push({ seq: record.seq, line });
      this.#maybeSnapshot();
    }
  }

  #break(code: "io" | "locked", message: string, cause?: unknown): SessionLogError {
    this.state = "broken";
    this.#broken = message;
    this.#brokenBy = code;
    return new SessionLogError(code, message, { path: this.path, ...(cause ? { cause } : {}) });
  }

  protected override closedError(): SessionLogError {
    return new SessionLogError(
      // a lost lease stays `locked`: the session is another host's now, not merely closed here
      this.#brokenBy === "locked" ? "locked" : "closed",
      this.state === "broken"
        ? `session ${this.id} stopped accepting records after a failed append (${this.#broken}); reopen the session`
        : `session ${this.id} is closed`,
      { path: this.path },
    );
  }

  /**
   * Resolves while this host still holds the session's lease (renewing it
   * first when the last renewal is old, e.g. after the process was stopped);
   * rejects with `locked` once another host took it over (the writer is then
   * broken, as an append would find), or `io` when the database cannot say.
   */
  override async ensureHeld(): Promise<void> {
    if (this.state === "broken") throw this.closedError();
    const problem = await this.lease.problem();
    if (problem === undefined) return;
    if (this.lease.lost !== undefined)
      throw this.#break("locked", `the lease on session ${this.id} was lost: ${problem}`);
    throw new SessionLogError("io", `session ${this.id}: ${problem}`, { path: this.path });
  }

  /** Every append is already durable when it resolves: the same as `flush`. */
  sync(): Promise<void> {
    return this.flush();
  }

  /** Waits for pending appends and releases the lease. Idempotent. */
  async close(): Promise<void> {
    if (this.state === "closed" || this.state === "closing") return;
    const previous = this.state;
    this.state = "closing";
    await this.flush();
    await this.#snapshotting;
    const atClose = Math.min(this.#snapshotEvery, SNAPSHOT_AT_CLOSE);
    if (previous !== "broken" && atClose > 0 && this.#tail.length >= atClose) await this.#snapshot();
    this.state = previous === "broken" ? "broken" : "closed";
    await this.lease.release();
    if (this.state !== "broken") this.state = "closed";
  }
}
