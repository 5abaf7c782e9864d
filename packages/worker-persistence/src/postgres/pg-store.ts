/**
 * One connection pool to a yoi database: the session store, the blob store
 * and what they share (schema migrations, the lease holder's name).
 *
 * Driver: `postgres` (porsager/postgres). It has no dependencies and ships
 * its own types, its tagged-template queries are parameterized by
 * construction (no SQL is ever built from strings), it pipelines queries on
 * a connection, streams large results with `cursor()`, and its `begin()`
 * gives transactions that roll back on a throw. `pg` would need @types/pg
 * and pg-cursor for the same.
 */
import { hostname } from "node:os";
import postgres, { type Sql } from "postgres";
import { pgSessionBlobRefs } from "./pg-blob-refs.ts";
import { PgBlobStore } from "./pg-blob-store.ts";
import { describeDbError, PgStoreError } from "./pg-error.ts";
import { migrate } from "./pg-migrations.ts";
import { PgSessionAccess } from "./pg-session-access.ts";
import { PgSessionStore } from "./pg-session-store.ts";
import { PgSignals } from "./pg-signals.ts";
import { describePostgresUrl } from "./pg-url.ts";

export interface PgStoreOptions {
  /** `postgres://user:password@host:5432/database` (also `postgresql://`; libpq query parameters such as `sslmode`). */
  url: string;
  /** This host's name in leases, shown to other hosts. Default `<hostname>:<pid>`. */
  holder?: string;
  /** Session lease length, ms. A dead host's sessions can be taken over this long after its last renewal. Default 30 000. */
  leaseMs?: number;
  /** Lease renewal interval, ms. Default a third of `leaseMs`. */
  heartbeatMs?: number;
  /** Pool size. Default 10. */
  maxConnections?: number;
  /** Seconds to wait for a connection. Default 10. */
  connectTimeoutSeconds?: number;
  /** Blob chunk size in bytes. Default 256 KiB. */
  chunkBytes?: number;
  /**
   * A session writer snapshots the replayed state every this many records
   * (and at close), so a resume reads the snapshot and the records after
   * it. Default 1000; 0 turns snapshots off (resumes replay every record).
   */
  snapshotEvery?: number;
  /** Called when a session writer of this store loses its lease (the writer stops accepting records). */
  onLeaseLost?: (sessionId: string, reason: string) => void;
}

export class PgStore {
  /** `host:port/db`, without user or password. */
  readonly where: string;
  readonly sessions: PgSessionStore;
  readonly blobs: PgBlobStore;
  /** Owners and members of sessions (hosts with users: `yoi serve --token-file`). */
  readonly access: PgSessionAccess;
  /** Messages between the hosts of this database (`LISTEN`/`NOTIFY`). */
  readonly signals: PgSignals;
  readonly holder: string;
  /** The driver's pool (for tests and tools; the stores are the API). */
  readonly sql: Sql;

  private constructor(sql: Sql, where: string, options: PgStoreOptions) {
    this.sql = sql;
    this.where = where;
    this.holder = options.holder ?? `${hostname()}:${process.pid}`;
    const leaseMs = options.leaseMs ?? 30_000;
    const heartbeatMs = options.heartbeatMs ?? Math.max(50, Math.floor(leaseMs / 3));
    if (!(leaseMs > 0) || !(heartbeatMs > 0) || heartbeatMs >= leaseMs)
      throw new RangeError(`need 0 < heartbeatMs (${heartbeatMs}) < leaseMs (${leaseMs})`);
    const snapshotEvery = options.snapshotEvery ?? 1000;
    if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0)
      throw new RangeError(
        `snapshotEvery must be a whole number of records, 0 for none; got ${snapshotEvery}`,
      );
    const location = `postgres://${where}`;
    this.sessions = new PgSessionStore(sql, location, {
      holder: this.holder,
      leaseMs,
      heartbeatMs,
      snapshotEvery,
      ...(options.onLeaseLost ? { onLeaseLost: options.onLeaseLost } : {}),
    });
    this.access = new PgSessionAccess(sql, location);
    this.signals = new PgSignals(sql, location);
    this.blobs = new PgBlobStore(sql, location, {
      ...(options.chunkBytes !== undefined ? { chunkBytes: options.chunkBytes } : {}),
    });
  }

  /**
   * Connects, checks the server answers, and applies pending schema
   * migrations. Rejects with `PgStoreError`: `invalid_url`, `unreachable`
   * (one line naming `host:port/db` and the reason, never the password),
   * `schema_too_new`, `migration_failed`.
   */
  static async connect(options: PgStoreOptions): Promise<PgStore> {
    const where = describePostgresUrl(options.url);
    const sql = postgres(options.url, {
      max: options.maxConnections ?? 10,
      connect_timeout: options.connectTimeoutSeconds ?? 10,
      idle_timeout: 60,
      onnotice: () => {},
      connection: { application_name: "yoi" },
    });
    try {
      await sql`SELECT 1`;
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      throw new PgStoreError(
        "unreachable",
        `cannot reach the PostgreSQL database ${where}: ${describeDbError(error)}`,
        { where, cause: error },
      );
    }
    try {
      await migrate(sql, where);
      return new PgStore(sql, where, options);
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
  }

  /** Every blob id the sessions in this database reference, for `blobs.gc({ liveRefs })`. */
  sessionBlobRefs(): Promise<Set<string>> {
    return pgSessionBlobRefs(this.sql);
  }

  /** Closes the pool (waits up to `timeoutSeconds` for queries in flight). */
  async close(timeoutSeconds = 5): Promise<void> {
    await this.sql.end({ timeout: timeoutSeconds });
  }
}
