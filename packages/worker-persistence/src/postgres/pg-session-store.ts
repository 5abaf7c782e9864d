/**
 * Sessions on PostgreSQL behind the `SessionStore` interface: one row per
 * session, one row per record (the exact JSONL line), a lease row per open
 * writer. Opening replays the records through the same `SessionReplay` and
 * record checks as the JSONL files, so both stores rebuild the same history
 * and metadata from the same records.
 */
import type { Sql } from "postgres";
import { v7 as uuidv7 } from "uuid";
import { checkSessionId, SessionLogError } from "../session-error.ts";
import { recordProblem, type SessionRecord, sessionStartInput } from "../session-records.ts";
import { type SessionReplay, titleFromInput } from "../session-replay.ts";
import type { SessionWarning } from "../session-scan.ts";
import type { LoadedSession, SessionSummary } from "../session-store.ts";
import type { NewSessionOptions, SessionStore, StoreOpenedSession } from "../session-store-port.ts";
import { dbIoError } from "./pg-error.ts";
import { type LeaseHolder, type LeaseOptions, PgLease } from "./pg-lease.ts";
import { PgSessionLog, type SnapshotBase } from "./pg-session-log.ts";
import { LineReplay, parseSnapshot, type RecordLine, readSnapshot } from "./pg-snapshot.ts";

export interface PgSessionStoreOptions {
  /** The lease holder's name, shown to other hosts (default `host:pid`). */
  holder: string;
  /** Lease length, ms. */
  leaseMs: number;
  /** Lease renewal interval, ms. */
  heartbeatMs: number;
  /** Records between snapshots of a session's replayed state (0: none). */
  snapshotEvery: number;
  /** Called when a writer of this store loses its lease. */
  onLeaseLost?: (sessionId: string, reason: string) => void;
}

export class PgSessionStore implements SessionStore {
  /** `postgres://host:port/db` without credentials. */
  readonly location: string;
  readonly #sql: Sql;
  readonly #options: PgSessionStoreOptions;

  /** @internal Use `PgStore.connect(...).sessions`. */
  constructor(sql: Sql, location: string, options: PgSessionStoreOptions) {
    this.#sql = sql;
    this.location = location;
    this.#options = options;
  }

  #path(id: string): string {
    return `${this.location}#${id}`;
  }

  /** Leases this store's writers hold (pruned as they are released). */
  readonly #held = new Set<PgLease>();

  #hold(lease: PgLease): PgLease {
    for (const old of this.#held) if (old.released) this.#held.delete(old);
    this.#held.add(lease);
    return lease;
  }

  #leaseOptions(id: string): LeaseOptions {
    const onLost = this.#options.onLeaseLost;
    const liveTokens = [...this.#held].filter((l) => !l.released).map((l) => l.token);
    return {
      leaseMs: this.#options.leaseMs,
      heartbeatMs: this.#options.heartbeatMs,
      liveTokens,
      ...(onLost ? { onLost: (reason: string) => onLost(id, reason) } : {}),
    };
  }

  #ioError(action: string, error: unknown): SessionLogError {
    return dbIoError(this.location, action, error);
  }

  async create(options: NewSessionOptions): Promise<PgSessionLog> {
    const id = checkSessionId(options.id ?? uuidv7());
    let lease: PgLease;
    try {
      lease = await this.#sql.begin(async (tx) => {
        const inserted =
          await tx`INSERT INTO yoi_sessions (id) VALUES (${id}) ON CONFLICT DO NOTHING RETURNING id`;
        if (inserted.length === 0) {
          throw new SessionLogError(
            "exists",
            `session ${id} already exists in ${this.location}; open it instead`,
            { path: this.#path(id) },
          );
        }
        return PgLease.acquire(
          this.#sql,
          this.location,
          id,
          this.#options.holder,
          this.#leaseOptions(id),
          tx,
        );
      });
    } catch (error) {
      throw this.#ioError(`create session ${id}`, error);
    }
    this.#hold(lease).start();
    const log = new PgSessionLog({
      id,
      path: this.#path(id),
      sql: this.#sql,
      lease,
      nextSeq: 0,
      historyLength: 0,
      snapshotEvery: this.#options.snapshotEvery,
    });
    try {
      await log.append(sessionStartInput(id, options));
    } catch (error) {
      await log.close().catch(() => {});
      throw error;
    }
    return log;
  }

  async open(id: string): Promise<StoreOpenedSession> {
    checkSessionId(id);
    let lease: PgLease;
    try {
      lease = await PgLease.acquire(
        this.#sql,
        this.location,
        id,
        this.#options.holder,
        this.#leaseOptions(id),
      );
    } catch (error) {
      throw this.#ioError(`open session ${id}`, error);
    }
    this.#hold(lease).start();
    try {
      // Read after taking the lease: a previous holder's last append has
      // committed (it held the lease row share-locked) and no other can follow.
      const { replay, warnings, maxSeq, snapshot } = await this.#replay(id, { resume: true });
      const log = new PgSessionLog({
        id,
        path: this.#path(id),
        sql: this.#sql,
        lease,
        nextSeq: maxSeq + 1,
        historyLength: replay.history.length,
        snapshotEvery: this.#options.snapshotEvery,
        ...(snapshot && { snapshot }),
      });
      return { log, history: replay.history, meta: replay.meta, warnings, truncatedBytes: 0 };
    } catch (error) {
      await lease.release();
      throw this.#ioError(`read session ${id}`, error);
    }
  }

  async load(id: string): Promise<LoadedSession> {
    checkSessionId(id);
    try {
      const exists = await this.#sql`SELECT 1 FROM yoi_sessions WHERE id = ${id}`;
      if (exists.length === 0) {
        throw new SessionLogError("not_found", `no session ${id} in ${this.location}`, {
          path: this.#path(id),
        });
      }
      const records: SessionRecord[] = [];
      const { replay, warnings } = await this.#replay(id, { into: records });
      return { records, history: replay.history, meta: replay.meta, warnings };
    } catch (error) {
      throw this.#ioError(`read session ${id}`, error);
    }
  }

  /**
   * Replays a session's records in seq order, checking each line as the
   * JSONL reader does (a bad record is skipped with a warning naming it).
   * With `resume`, it starts from the session's snapshot when there is a
   * usable one, and collects the rows it read for the writer's next one.
   */
  async #replay(
    id: string,
    options: { into?: SessionRecord[]; resume?: boolean } = {},
  ): Promise<{ replay: SessionReplay; warnings: SessionWarning[]; maxSeq: number; snapshot?: SnapshotBase }> {
    const path = this.#path(id);
    let from: Exclude<ReturnType<typeof parseSnapshot>, string> | undefined;
    const unusable: SessionWarning[] = [];
    let lines: LineReplay | undefined;
    const tail: RecordLine[] | undefined = options.resume ? [] : undefined;
    // Rows are replayed as they arrive, in one query: a cursor would cost a
    // round trip per batch (most of a resume's time on a busy server), and
    // collecting the result first would hold every line at once.
    const apply = (row: RecordLine) => {
      (lines as LineReplay).apply(row.seq, row.line, options.into);
      tail?.push(row);
    };
    const readFrom = (after: number) =>
      this.#sql<RecordLine[]>`
        SELECT seq, line FROM yoi_session_records
        WHERE session_id = ${id} AND seq > ${after} ORDER BY seq`.forEach(apply);
    if (options.resume) {
      // The snapshot and the records after it, read at once: neither changes
      // while this host holds the lease. Rows that come before the snapshot
      // is parsed wait for it.
      const early: RecordLine[] = [];
      const rows = this.#sql<RecordLine[]>`
        SELECT seq, line FROM yoi_session_records
        WHERE session_id = ${id}
          AND seq > coalesce((SELECT seq FROM yoi_session_snapshots WHERE session_id = ${id}), -1)
        ORDER BY seq`.forEach((row) => {
        if (lines === undefined) early.push(row);
        else apply(row);
      });
      let stored: Awaited<ReturnType<typeof readSnapshot>>;
      try {
        stored = await readSnapshot(this.#sql, id);
      } catch (error) {
        await rows.catch(() => {});
        throw error;
      }
      const parsed = stored && parseSnapshot(stored.state, stored.seq);
      if (typeof parsed === "string") {
        unusable.push({
          line: 0,
          offset: 0,
          message: `the snapshot at seq ${stored?.seq} cannot be used (${parsed}); replayed every record`,
        });
        // the rows read follow the snapshot: read them all again
        await rows;
        lines = new LineReplay(id, path);
        await readFrom(-1);
      } else {
        from = parsed;
        lines = new LineReplay(id, path, from);
        for (const row of early) apply(row);
        await rows;
      }
    } else {
      lines = new LineReplay(id, path);
      await readFrom(-1);
    }
    const replay = lines.replay;
    const warnings = [...unusable, ...lines.warnings()];
    if (replay.meta.records === 0) {
      warnings.unshift({ line: 0, offset: 0, message: "the session holds no records" });
    } else if (replay.meta.createdAt === undefined) {
      warnings.unshift({ line: 0, offset: 0, message: "the session has no session_start record" });
    }
    return {
      replay,
      warnings,
      maxSeq: lines.maxSeq,
      ...(tail && { snapshot: { ...(from && { seq: from.seq, rows: from.rows }), tail } }),
    };
  }

  async recordsAfter(id: string, afterSeq: number): Promise<SessionRecord[]> {
    checkSessionId(id);
    let rows: RecordLine[];
    try {
      rows = await this.#sql<RecordLine[]>`
        SELECT seq, line FROM yoi_session_records WHERE session_id = ${id} AND seq > ${afterSeq} ORDER BY seq`;
      if (rows.length === 0 && (await this.#sql`SELECT 1 FROM yoi_sessions WHERE id = ${id}`).length === 0) {
        throw new SessionLogError("not_found", `no session ${id} in ${this.location}`, {
          path: this.#path(id),
        });
      }
    } catch (error) {
      throw this.#ioError(`read session ${id}`, error);
    }
    const records: SessionRecord[] = [];
    for (const row of rows) {
      let value: unknown;
      try {
        value = JSON.parse(row.line);
      } catch {
        continue;
      }
      if (recordProblem(value) === undefined) records.push(value as SessionRecord);
    }
    return records;
  }

  /** The live lease on a session (who runs it now), or undefined when none holds. */
  async leaseHolder(id: string): Promise<LeaseHolder | undefined> {
    checkSessionId(id);
    try {
      const [row] = await this.#sql<{ holder: string; expires_at: Date }[]>`
        SELECT holder, expires_at FROM yoi_session_leases WHERE session_id = ${id} AND expires_at > now()`;
      return row && { holder: row.holder, expiresAt: new Date(row.expires_at).toISOString() };
    } catch (error) {
      throw this.#ioError(`read the lease of session ${id}`, error);
    }
  }

  async list(options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const limit = options.limit ?? null;
    let rows: {
      id: string;
      created_at: Date;
      updated_at: Date | null;
      start_line: string | null;
      input_line: string | null;
      title_line: string | null;
      model_line: string | null;
      size_bytes: string | null;
      failed_before_output: boolean | null;
    }[];
    try {
      rows = await this.#sql`
        SELECT s.id, s.created_at, last.ts AS updated_at,
          (SELECT line FROM yoi_session_records r WHERE r.session_id = s.id AND r.type = 'session_start' ORDER BY seq LIMIT 1) AS start_line,
          (SELECT line FROM yoi_session_records r WHERE r.session_id = s.id AND r.type = 'user_input' ORDER BY seq LIMIT 1) AS input_line,
          (SELECT line FROM yoi_session_records r WHERE r.session_id = s.id AND r.type = 'title' ORDER BY seq DESC LIMIT 1) AS title_line,
          (SELECT line FROM yoi_session_records r WHERE r.session_id = s.id AND r.type = 'config_change' AND r.line LIKE '%"model":%' ORDER BY seq DESC LIMIT 1) AS model_line,
          (SELECT sum(octet_length(line) + 1) FROM yoi_session_records r WHERE r.session_id = s.id)::text AS size_bytes,
          (EXISTS (SELECT 1 FROM yoi_session_records r WHERE r.session_id = s.id AND r.type IN ('error', 'cancel'))
            AND NOT EXISTS (SELECT 1 FROM yoi_session_records r WHERE r.session_id = s.id AND (
              r.type IN ('usage', 'turn_end', 'file_change', 'history_replaced', 'rewind')
              OR (r.type = 'item' AND (r.line LIKE '%"reason":"assistant"%' OR r.line LIKE '%"reason":"tool_result"%'))))
          ) AS failed_before_output
        FROM yoi_sessions s
        LEFT JOIN LATERAL (
          SELECT ts FROM yoi_session_records r WHERE r.session_id = s.id ORDER BY seq DESC LIMIT 1
        ) last ON true
        ORDER BY coalesce(last.ts, s.created_at) DESC, s.id DESC
        LIMIT ${limit}`;
    } catch (error) {
      throw this.#ioError("list sessions", error);
    }
    return rows.map((row) => {
      const start = parseLine(row.start_line);
      const input = parseLine(row.input_line);
      const title = parseLine(row.title_line);
      const change = parseLine(row.model_line);
      const summary: SessionSummary = {
        id: row.id,
        path: this.#path(row.id),
        updatedAt: new Date(row.updated_at ?? row.created_at).toISOString(),
        sizeBytes: Number(row.size_bytes ?? 0),
        failedBeforeOutput: row.failed_before_output === true,
      };
      if (typeof start?.ts === "string") summary.createdAt = start.ts;
      // what a resume reuses, as the file store reports it
      if (typeof start?.provider === "string") summary.provider = start.provider;
      if (typeof start?.baseURL === "string") summary.baseURL = start.baseURL;
      if (typeof start?.permissionMode === "string") summary.permissionMode = start.permissionMode;
      if (typeof start?.parentSessionId === "string") summary.parentSessionId = start.parentSessionId;
      const config = start?.config as Record<string, unknown> | undefined;
      const changes = change?.changes as Record<string, unknown> | undefined;
      const ref = changes?.ref ?? changes?.model ?? config?.model;
      if (typeof ref === "string") summary.modelRef = ref;
      if (typeof input?.text === "string") {
        const first = titleFromInput(input.text);
        if (first !== undefined) summary.firstPrompt = first;
      }
      const model = typeof change?.model === "string" ? change.model : start?.model;
      if (typeof model === "string") summary.model = model;
      if (typeof start?.cwd === "string") summary.cwd = start.cwd;
      if (typeof start?.gitBranch === "string") summary.gitBranch = start.gitBranch;
      const shown =
        typeof title?.title === "string"
          ? title.title
          : typeof input?.text === "string"
            ? titleFromInput(input.text)
            : undefined;
      if (shown !== undefined) summary.title = shown;
      return summary;
    });
  }
}

function parseLine(line: string | null): Record<string, unknown> | undefined {
  if (line === null) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
