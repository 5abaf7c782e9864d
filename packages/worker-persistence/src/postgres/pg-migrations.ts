/**
 * Versioned schema migrations, applied in order when a store connects. All
 * pending migrations run in one transaction under an advisory lock, so
 * several hosts starting at once apply each exactly once, and a failure
 * leaves the schema as it was. A database newer than this code is refused.
 */
import type { Sql } from "postgres";
import { describeDbError, PgStoreError } from "./pg-error.ts";

/** One schema version: statements run in order inside the migration transaction. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

/** Every migration this version knows, oldest first. Never edit a released one: add the next. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, records, leases, chunked blobs",
    statements: [
      `CREATE TABLE yoi_sessions (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      // `line` is the record exactly as the JSONL log would hold it (without
      // the newline), so both stores replay the same bytes.
      `CREATE TABLE yoi_session_records (
        session_id text NOT NULL REFERENCES yoi_sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        type text NOT NULL,
        ts timestamptz NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
      "CREATE INDEX yoi_session_records_by_type ON yoi_session_records (session_id, type, seq)",
      `CREATE TABLE yoi_session_leases (
        session_id text PRIMARY KEY REFERENCES yoi_sessions (id) ON DELETE CASCADE,
        holder text NOT NULL,
        token uuid NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`,
      `CREATE TABLE yoi_blobs (
        id uuid PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('text', 'structured')),
        byte_size bigint NOT NULL,
        chunks integer NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE yoi_blob_chunks (
        blob_id uuid NOT NULL REFERENCES yoi_blobs (id) ON DELETE CASCADE,
        idx integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (blob_id, idx)
      )`,
    ],
  },
  {
    version: 2,
    name: "session access: owner and members",
    statements: [
      `CREATE TABLE yoi_session_access (
        session_id text NOT NULL REFERENCES yoi_sessions (id) ON DELETE CASCADE,
        principal text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'member')),
        granted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, principal)
      )`,
      "CREATE INDEX yoi_session_access_by_principal ON yoi_session_access (principal)",
    ],
  },
  {
    version: 3,
    name: "session snapshots: the replayed state at a seq",
    statements: [
      // One row per session, replaced as the session grows. Sessions from
      // before this version have none: the first host to open one replays
      // its records once and writes it.
      `CREATE TABLE yoi_session_snapshots (
        session_id text PRIMARY KEY REFERENCES yoi_sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        state text NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
      )`,
      // Kept uncompressed: a resume reads it whole, and pglz would cost more
      // time there than the disk it saves.
      "ALTER TABLE yoi_session_snapshots ALTER COLUMN state SET STORAGE EXTERNAL",
    ],
  },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

// An arbitrary constant: the advisory lock key that serializes migrations.
const MIGRATION_LOCK_KEY = 0x796f6931;

/** Applies pending migrations; resolves with the versions applied (empty when up to date). */
export async function migrate(sql: Sql, where: string, migrations = MIGRATIONS): Promise<number[]> {
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      await tx`CREATE TABLE IF NOT EXISTS yoi_schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
      const [row] = await tx<{ v: number | null }[]>`SELECT max(version) AS v FROM yoi_schema_migrations`;
      const current = row?.v ?? 0;
      if (current > latest) {
        throw new PgStoreError(
          "schema_too_new",
          `the database ${where} has yoi schema v${current}, newer than this yoi knows (v${latest}); upgrade yoi`,
          { where },
        );
      }
      const applied: number[] = [];
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        for (const statement of migration.statements) await tx.unsafe(statement);
        await tx`INSERT INTO yoi_schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
        applied.push(migration.version);
      }
      return applied;
    });
  } catch (error) {
    if (PgStoreError.isInstance(error)) throw error;
    throw new PgStoreError(
      "migration_failed",
      `cannot migrate the yoi schema in ${where}: ${describeDbError(error)} (nothing was changed)`,
      { where, cause: error },
    );
  }
}
