import type { Sql } from "postgres";
import { SessionLogError } from "../session-error.ts";
import type { FsyncPolicy } from "../session-log.ts";
import { SessionRecordWriter } from "../session-record-writer.ts";
import { type SessionRecord, serializeRecord } from "../session-records.ts";
import type { SessionWriter } from "../session-store-port.ts";
import { describeDbError } from "./pg-error.ts";
import type { PgLease } from "./pg-lease.ts";

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
 */
export class PgSessionLog extends SessionRecordWriter implements SessionWriter {
  /** Every append is a committed transaction: the strongest file policy. */
  readonly fsync: FsyncPolicy = "always";
  readonly lease: PgLease;
  readonly #sql: Sql;
  #broken: string | undefined;

  /** @internal Use `PgSessionStore.create` / `open`. */
  constructor(init: {
    id: string;
    path: string;
    sql: Sql;
    lease: PgLease;
    nextSeq: number;
    historyLength: number;
  }) {
    super(init);
    this.#sql = init.sql;
    this.lease = init.lease;
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
  }

  #break(code: "io" | "locked", message: string, cause?: unknown): SessionLogError {
    this.state = "broken";
    this.#broken = message;
    return new SessionLogError(code, message, { path: this.path, ...(cause ? { cause } : {}) });
  }

  protected override closedError(): SessionLogError {
    return new SessionLogError(
      "closed",
      this.state === "broken"
        ? `session ${this.id} stopped accepting records after a failed append (${this.#broken}); reopen the session`
        : `session ${this.id} is closed`,
      { path: this.path },
    );
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
    this.state = previous === "broken" ? "broken" : "closed";
    await this.lease.release();
    if (this.state !== "broken") this.state = "closed";
  }
}
