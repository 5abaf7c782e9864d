/**
 * The PostgreSQL stores against the JSONL files, on a throwaway local
 * PostgreSQL (the system's server binaries; skipped with a note when there
 * are none):
 * - appends per second (each committed before the next, as a session writes);
 * - resuming a 10,000-record session (lease, snapshot and records after it,
 *   history): closed cleanly, after its host was killed, and as stored
 *   before snapshots existed.
 *
 *   pnpm exec node --conditions=@yoi/source packages/worker-persistence/bench/postgres.bench.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { compare, median, pairedRatio, report } from "../../../scripts/bench-kit.ts";
import { createSession, openSession, type SessionRecordInput, sessionPath } from "../src/index.ts";
import { type PgSessionLog, PgStore } from "../src/postgres/index.ts";
import { findPostgresBinDir, startTestPostgres } from "../src/postgres/testing/index.ts";

const GROUP = "worker-persistence";

if (findPostgresBinDir() === undefined) {
  process.stderr.write("postgres.bench: no PostgreSQL server binaries; skipped\n");
  process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), "yoi-bench-pg-"));
const pg = await startTestPostgres();
const url = await pg.createDatabase();
const store = await PgStore.connect({ url, maxConnections: 4 });
try {
  /** A realistic small record (~400 bytes serialized). */
  const record = (i: number): SessionRecordInput => ({
    type: "item",
    index: i,
    reason: "tool_result",
    item: {
      type: "tool_result",
      callId: `call_${i}`,
      output: `line ${i}: ${"lorem ipsum dolor sit amet ".repeat(12)}`,
      isError: false,
    },
  });

  // ---- appends ----
  const APPENDS = 2000;
  let run = 0;
  const r = await compare(
    async () => {
      const log = await store.sessions.create({ id: `append-${run++}` });
      for (let i = 0; i < APPENDS; i++) await log.append(record(i));
      await log.close();
    },
    async () => {
      const log = await createSession({ dir: root, id: `append-file-${run++}`, fsync: "turn" });
      for (let i = 0; i < APPENDS; i++) await log.append(record(i));
      await log.close();
    },
    { runs: 3, warmup: 1 },
  );
  report({
    group: GROUP,
    name: `postgres: append ${APPENDS} records, each committed`,
    subject: (APPENDS / r.subject) * 1000,
    baseline: (APPENDS / r.baseline) * 1000,
    baselineName: "JSONL SessionLog, fsync turn",
    unit: "ops/s",
    note: "local server on 127.0.0.1, fsync off (both stores end in the OS page cache)",
  });

  // ---- resume of a 10,000-record session ----
  const RECORDS = 10_000;
  const id = "resume-10k";
  const file = await createSession({ dir: root, id, fsync: "never" });
  for (let i = 0; i < RECORDS - 1; i++) void file.append(record(i));
  await file.close();
  const lines = (await readFile(sessionPath(root, id), "utf8")).split("\n").filter(Boolean);

  // As a host writes it: each record committed, a snapshot every 1000 and at close.
  const closed = await store.sessions.create({ id });
  for (let i = 0; i < RECORDS - 1; i++) await closed.append(record(i));
  await closed.close();
  // A host killed at the worst point: the most records after its last snapshot
  // before the next is due (a quarter of what that one covers). 8001 rows are
  // written without snapshots; a host opens the session (which snapshots it at
  // once), appends 1999 more and dies: no snapshot at close, the lease left.
  const old = await PgStore.connect({ url, maxConnections: 4, snapshotEvery: 0 });
  const KILL_AT = 8000;
  const early = await old.sessions.create({ id: "killed-10k" });
  for (let i = 0; i < KILL_AT; i++) await early.append(record(i));
  await early.close();
  const host = await store.sessions.open("killed-10k");
  const snapshotSeq = async () =>
    (
      await store.sql<
        { seq: number }[]
      >`SELECT seq FROM yoi_session_snapshots WHERE session_id = 'killed-10k'`
    )[0]?.seq;
  for (let wait = 0; (await snapshotSeq()) !== KILL_AT && wait < 600; wait++)
    await new Promise((r) => setTimeout(r, 50));
  for (let i = KILL_AT; i < RECORDS - 1; i++) await host.log.append(record(i));
  await host.log.flush();
  const covered = await snapshotSeq();
  await (host.log as PgSessionLog).lease.release();
  const killedTail = RECORDS - 1 - (covered ?? -1);
  await old.sql`INSERT INTO yoi_sessions (id) VALUES ('old-10k')`;
  for (let i = 0; i < lines.length; i += 1000) {
    const rows = lines.slice(i, i + 1000).map((line) => {
      const parsed = JSON.parse(line) as { seq: number; type: string; ts: string };
      return { session_id: "old-10k", seq: parsed.seq, type: parsed.type, ts: parsed.ts, line };
    });
    await old.sql`INSERT INTO yoi_session_records ${old.sql(rows, "session_id", "seq", "type", "ts", "line")}`;
  }
  // What autovacuum does to a table in use: without statistics the planner
  // sorts the session's rows (on disk past work_mem) instead of walking the key.
  await store.sql`ANALYZE`;

  let fileItems = 0;
  const openFile = async () => {
    const opened = await openSession({ dir: root, id, fsync: "never" });
    fileItems = opened.history.length;
    await opened.log.close();
  };
  const RUNS = 21;
  const resumeRow = async (label: string, from: PgStore, session: string, note: string) => {
    let pgItems = 0;
    const openPg = async () => {
      const opened = await from.sessions.open(session);
      pgItems = opened.history.length;
      await opened.log.close();
    };
    const timed = async (fn: () => Promise<void>) => {
      const start = performance.now();
      await fn();
      return performance.now() - start;
    };
    for (let i = 0; i < 2; i++) {
      await openFile();
      await openPg();
    }
    const subject: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      baseline.push(await timed(openFile));
      subject.push(await timed(openPg));
    }
    if (pgItems !== fileItems || pgItems !== RECORDS - 1)
      throw new Error(`histories differ: ${pgItems} vs ${fileItems}`);
    report({
      group: GROUP,
      name: `postgres: resume a ${RECORDS.toLocaleString("en-US")}-record session, ${label}`,
      subject: median(subject),
      baseline: median(baseline),
      ratio: pairedRatio(subject, baseline),
      baselineName: "JSONL openSession",
      unit: "ms",
      ...(label === "stored before snapshots" ? {} : { target: 1.5 }),
      note: `${pgItems} history items; lease, ${note} (median of ${RUNS} paired runs)`,
    });
  };
  await resumeRow("closed cleanly", store, id, "the snapshot written at close, no records after it");
  await resumeRow(
    "host killed",
    old,
    "killed-10k",
    `the snapshot and the ${killedTail} records after it, the most a crash leaves at 10k (opened by a store with snapshotEvery 0, so every run reads the same)`,
  );
  await resumeRow(
    "stored before snapshots",
    old,
    "old-10k",
    "no snapshot, every record replayed (a store with snapshotEvery 0; the first open after the upgrade writes one)",
  );
  await old.close();

  // The read the replay used before (a cursor, 1000 rows a round trip)
  // against the one query it uses now, rows only (no replay), same run.
  const read = await compare(
    async () => {
      for await (const rows of store.sql`
        SELECT seq, line FROM yoi_session_records WHERE session_id = ${id} ORDER BY seq`.cursor(1000))
        for (const row of rows) JSON.parse(row.line as string);
    },
    () =>
      store.sql`SELECT seq, line FROM yoi_session_records WHERE session_id = ${id} ORDER BY seq`.forEach(
        (row) => {
          JSON.parse(row.line as string);
        },
      ),
    { runs: 9, warmup: 2 },
  );
  report({
    group: GROUP,
    name: `postgres: read ${RECORDS.toLocaleString("en-US")} records, cursor of 1000 vs one streamed query`,
    subject: read.subject,
    baseline: read.baseline,
    baselineName: "one query, rows parsed as they arrive",
    unit: "ms",
    note: "each line parsed; why the replay reads in one query",
  });
} finally {
  await store.close();
  await pg.stop();
  rmSync(root, { recursive: true, force: true });
}
