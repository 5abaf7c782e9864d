/**
 * The writer lease of a session: a row with a holder, a random token and an
 * expiry in database time, renewed by a heartbeat.
 *
 * A lease row rather than advisory locks: an advisory lock lives as long as
 * one connection, so it cannot be used through a pool or a transaction-mode
 * pooler, a partitioned host keeps it until TCP notices, and it cannot say
 * who holds it. The row names its holder (the 409 of `yoi serve` shows it),
 * expires on the database's clock (no skew between hosts), and its token
 * fences every append: a record is inserted only while the row still holds
 * this writer's token, checked in the same statement. Expiry only decides
 * when another host may take the row over (replacing the token); a holder
 * that renews late but was not taken over keeps writing, so a loaded host
 * does not fail its own runs.
 */
import { randomUUID } from "node:crypto";
import type { Sql, TransactionSql } from "postgres";
import { SessionLogError } from "../session-error.ts";
import { describeDbError } from "./pg-error.ts";

/** Who holds a session's lease, and until when. */
export interface LeaseHolder {
  holder: string;
  expiresAt: string;
}

/** `SessionLogError` `locked` of a session leased by another host; `holder` names it. */
export class SessionLeasedError extends SessionLogError {
  static override readonly marker: symbol = Symbol.for("yoi.error.SessionLeasedError");
  declare readonly holder: string;
  readonly expiresAt: string;

  constructor(sessionId: string, where: string, lease: LeaseHolder) {
    super(
      "locked",
      `session ${sessionId} is open on ${lease.holder}, running or kept for its next run (its lease in ${where} expires at ${lease.expiresAt} unless renewed); retry there, or after that`,
      { path: where, holder: lease.holder },
    );
    this.expiresAt = lease.expiresAt;
  }
}

export interface LeaseOptions {
  /** Lease length, ms. */
  leaseMs: number;
  /** Renewal interval, ms (well under `leaseMs`). */
  heartbeatMs: number;
  /** Called once when the lease is found lost (taken over after it expired, or unrenewable). */
  onLost?: (reason: string) => void;
  /**
   * Tokens this holder still uses. A live lease of the same holder with any
   * other token is an orphan of this process (its release failed, e.g. while
   * the database was down) and is taken back at once instead of waiting for
   * its expiry. Holder names must therefore be unique per process.
   */
  liveTokens?: readonly string[];
}

export class PgLease {
  readonly sessionId: string;
  readonly holder: string;
  readonly token: string;
  readonly #sql: Sql;
  readonly #options: LeaseOptions;
  #timer: NodeJS.Timeout | undefined;
  #lastRenewed = Date.now();
  #lost: string | undefined;
  #released = false;

  private constructor(sql: Sql, sessionId: string, holder: string, token: string, options: LeaseOptions) {
    this.#sql = sql;
    this.sessionId = sessionId;
    this.holder = holder;
    this.token = token;
    this.#options = options;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.#released;
  }

  /** Why the lease was lost, or undefined while it holds. */
  get lost(): string | undefined {
    return this.#lost;
  }

  /**
   * Takes the lease when it is free or expired (a dead holder's), in
   * `sql` (a transaction, when creating the session in the same one).
   * Rejects with `SessionLeasedError` when another holder's lease is live,
   * `not_found` when there is no such session. `pool` renews and releases it.
   */
  static async acquire(
    pool: Sql,
    where: string,
    sessionId: string,
    holder: string,
    options: LeaseOptions,
    sql: Sql | TransactionSql = pool,
  ): Promise<PgLease> {
    const token = randomUUID();
    // The holder may let go between the two statements below (its idle time ended): the session is
    // then free, and taken on the next try rather than refused as held by a holder no longer there.
    for (let attempt = 1; ; attempt++) {
      let rows: { token: string }[];
      try {
        rows = await sql<{ token: string }[]>`
          INSERT INTO yoi_session_leases (session_id, holder, token, expires_at)
          VALUES (${sessionId}, ${holder}, ${token}, now() + ${options.leaseMs} * interval '1 millisecond')
          ON CONFLICT (session_id) DO UPDATE
            SET holder = EXCLUDED.holder, token = EXCLUDED.token, acquired_at = now(), expires_at = EXCLUDED.expires_at
            WHERE yoi_session_leases.expires_at <= now()
              OR (yoi_session_leases.holder = EXCLUDED.holder
                  AND NOT (yoi_session_leases.token = ANY(${[...(options.liveTokens ?? [])]}::uuid[])))
          RETURNING token`;
      } catch (error) {
        if ((error as { code?: string }).code === "23503")
          throw new SessionLogError("not_found", `no session ${sessionId} in ${where}`, { path: where });
        throw error;
      }
      if (rows.length > 0) break;
      const [row] = await sql<{ holder: string; expires_at: Date; live: boolean }[]>`
        SELECT holder, expires_at, expires_at > now() AS live FROM yoi_session_leases WHERE session_id = ${sessionId}`;
      if (row?.live || attempt >= 3)
        throw new SessionLeasedError(sessionId, where, {
          holder: row?.holder ?? "another host",
          expiresAt: row?.expires_at ? new Date(row.expires_at).toISOString() : "soon",
        });
    }
    return new PgLease(pool, sessionId, holder, token, options);
  }

  /** Starts the heartbeat. */
  start(): void {
    this.#lastRenewed = Date.now();
    const beat = async () => {
      await this.#renew();
      if (!this.#released && !this.#lost) this.#schedule(beat);
    };
    this.#schedule(beat);
  }

  /**
   * Why this host cannot act for the session now, or undefined when the
   * lease is known to hold. Free while the last renewal is recent; otherwise
   * (the process was stopped, or the database is slow) it renews first, so a
   * host never acts on a session another host may have taken over.
   */
  async problem(): Promise<string | undefined> {
    const fresh = () => Date.now() - this.#lastRenewed < this.#options.leaseMs / 2;
    if (this.#lost === undefined && !this.#released && fresh()) return undefined;
    await this.#renew();
    if (this.#released) return `the lease on session ${this.sessionId} was released`;
    if (this.#lost !== undefined) return this.#lost;
    return fresh() ? undefined : `the lease on session ${this.sessionId} could not be renewed just now`;
  }

  /** One renewal: extends the lease, or finds it lost. `lastRenewed` is when the update was sent (the expiry is later). */
  async #renew(): Promise<void> {
    if (this.#released || this.#lost) return;
    const sent = Date.now();
    try {
      const rows = await this.#sql`
        UPDATE yoi_session_leases SET expires_at = now() + ${this.#options.leaseMs} * interval '1 millisecond'
        WHERE session_id = ${this.sessionId} AND token = ${this.token}
        RETURNING 1`;
      if (this.#released) return;
      if (rows.length === 0) this.#lose("another host took the lease over after it expired");
      else this.#lastRenewed = Math.max(this.#lastRenewed, sent);
    } catch (error) {
      if (Date.now() - this.#lastRenewed >= this.#options.leaseMs)
        this.#lose(
          `the lease could not be renewed for ${this.#options.leaseMs} ms: ${describeDbError(error)}`,
        );
    }
  }

  #schedule(beat: () => Promise<void>): void {
    this.#timer = setTimeout(() => void beat(), this.#options.heartbeatMs);
    // a lease must not keep a finished process alive
    this.#timer.unref();
  }

  #lose(reason: string): void {
    if (this.#lost) return;
    this.#lost = reason;
    clearTimeout(this.#timer);
    this.#options.onLost?.(reason);
  }

  /** Stops the heartbeat and deletes the row if it is still ours. Idempotent; never throws. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearTimeout(this.#timer);
    await this
      .#sql`DELETE FROM yoi_session_leases WHERE session_id = ${this.sessionId} AND token = ${this.token}`.catch(
      () => {},
    );
  }
}
