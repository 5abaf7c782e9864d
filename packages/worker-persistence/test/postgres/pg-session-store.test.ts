import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@yoi/llm-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  loadSession,
  type SessionLog,
  SessionLogError,
  type SessionWriter,
  sessionPath,
} from "../../src/index.ts";
import { type PgSessionLog, PgStore, PgStoreError, SessionLeasedError } from "../../src/postgres/index.ts";
import { PgLease } from "../../src/postgres/pg-lease.ts";
import { writeSnapshot } from "../../src/postgres/pg-snapshot.ts";
import {
  findPostgresBinDir,
  startTestPostgres,
  type TestPostgres,
} from "../../src/postgres/testing/index.ts";

// Without PostgreSQL server binaries these tests skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";

let pg: TestPostgres;
const stores: PgStore[] = [];
const dirs: string[] = [];
const writers: (SessionWriter | SessionLog)[] = [];

beforeAll(async () => {
  if (!withPostgres) return;
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});
afterEach(async () => {
  for (const w of writers.splice(0)) await w.close().catch(() => {});
  for (const s of stores.splice(0)) await s.close(0).catch(() => {});
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function connect(url: string, options: Partial<Parameters<typeof PgStore.connect>[0]> = {}) {
  const store = await PgStore.connect({ url, ...options });
  stores.push(store);
  return store;
}

const user = (text: string): Item => ({ type: "message", role: "user", content: [{ type: "text", text }] });
const assistant = (text: string): Item => ({
  type: "message",
  role: "assistant",
  content: [{ type: "text", text }],
});

/** The same conversation, written through any SessionWriter. */
async function writeConversation(log: SessionWriter | SessionLog): Promise<void> {
  await log.userInput("fix the bug in @src/a.ts\nplease", [
    { type: "text", text: "fix the bug in " },
    { type: "file_ref", path: "src/a.ts" },
  ]);
  await log.item(user("fix the bug — ünïcödé 🐛"), "user");
  await log.item(
    { type: "tool_call", callId: "c1", name: "read_file", arguments: '{"path":"src/a.ts"}' },
    "assistant",
    { turn: 1 },
  );
  await log.item(
    {
      type: "tool_result",
      callId: "c1",
      output: "summary [blob:0190a0a0-0000-7000-8000-000000000001]",
      isError: false,
      outputRef: { id: "0190a0a0-0000-7000-8000-000000000001" },
    } as Item,
    "tool_result",
    { turn: 1 },
  );
  await log.usage({ inputTokens: 120, outputTokens: 30, cacheReadTokens: 7 }, { model: "m1", turn: 1 });
  await log.item(assistant("done"), "assistant", { turn: 1 });
  await log.turnEnd({ turn: 1, stopReason: "end_turn" });
  await log.configChange({ model: "p/m2" }, "m2");
  await log.historyReplaced({ history: [user("summary of before"), assistant("ok")], reason: "compaction" });
  await log.item(user("and now?"), "user");
  await log.title("Bug fix");
  await log.alert("warn", "hook", "a warning");
  await log.subagent({
    callId: "c9",
    description: "scan",
    model: "p/m1",
    status: "completed",
    turns: 2,
    usage: { inputTokens: 40, outputTokens: 4 },
    blobId: "0190a0a0-0000-7000-8000-000000000002",
    items: [user("look around"), assistant("found it")],
  });
  await log.cancel("cancelled by the user");
  await log.error({ code: "rate_limited", message: "slow down", retryable: true });
}

describe.skipIf(!withPostgres)("PgSessionStore", () => {
  it("replays exactly what the JSONL store replays from the same records", async () => {
    const store = await connect(await pg.createDatabase());
    const id = "0190a0a0-0000-7000-8000-00000000abcd";
    const log = await store.sessions.create({
      id,
      model: "m1",
      provider: "p",
      cwd: "/work",
      config: { a: 1 },
    });
    writers.push(log);
    await writeConversation(log);
    await log.close();

    const fromPg = await store.sessions.load(id);
    // The records as a JSONL file: what the file store would have on disk.
    const dir = await mkdtemp(join(tmpdir(), "yoi-pg-parity-"));
    dirs.push(dir);
    const file = sessionPath(dir, id);
    await (await import("node:fs/promises")).mkdir(join(dir, "sessions"), { recursive: true });
    await writeFile(file, fromPg.records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const fromFile = await loadSession({ dir, id });
    expect(fromPg.records).toEqual(fromFile.records);
    expect(fromPg.history).toEqual(fromFile.history);
    expect({ ...fromPg.meta, path: "" }).toEqual({ ...fromFile.meta, path: "" });
    expect(fromPg.warnings).toEqual(fromFile.warnings);
    expect(fromPg.history).toEqual([user("summary of before"), assistant("ok"), user("and now?")]);
    expect(fromPg.meta).toMatchObject({ model: "m2", title: "Bug fix", turns: 1, records: 16, lastSeq: 15 });

    // And the same calls on the file store give the same records, up to their times.
    const fileLog = await createSession({
      dir,
      id: "same",
      model: "m1",
      provider: "p",
      cwd: "/work",
      config: { a: 1 },
      fsync: "never",
    });
    writers.push(fileLog);
    await writeConversation(fileLog);
    await fileLog.close();
    const direct = await loadSession({ dir, id: "same" });
    const strip = (records: readonly object[]) =>
      records.map((r) => ({ ...r, ts: "", ...("sessionId" in r ? { sessionId: "" } : {}) }));
    expect(strip(direct.records)).toEqual(strip(fromPg.records));
    expect(direct.history).toEqual(fromPg.history);

    // open() resumes with the same history and continues the seq
    const opened = await store.sessions.open(id);
    writers.push(opened.log);
    expect(opened.history).toEqual(fromPg.history);
    expect(opened.log.nextSeq).toBe(16);
    expect(opened.log.historyLength).toBe(3);
    const next = await opened.log.item(assistant("continuing"), "assistant");
    expect(next).toMatchObject({ seq: 16, index: 3 });
  });

  it("keeps concurrent appends in call order, each committed when it resolves", async () => {
    const store = await connect(await pg.createDatabase());
    const log = await store.sessions.create({});
    writers.push(log);
    const all = Array.from({ length: 200 }, (_, i) => log.item(user(`m${i}`), "user", { index: i }));
    const records = await Promise.all(all);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const rows = await store.sql<{ seq: number; line: string }[]>`
      SELECT seq, line FROM yoi_session_records WHERE session_id = ${log.id} ORDER BY seq`;
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 201 }, (_, i) => i));
    expect(
      (await store.sessions.load(log.id)).history.map(
        (i) => (i as { content: { text: string }[] }).content[0]?.text,
      ),
    ).toEqual(Array.from({ length: 200 }, (_, i) => `m${i}`));
  });

  it("lists sessions newest first with title, model, cwd and size", async () => {
    const store = await connect(await pg.createDatabase());
    const a = await store.sessions.create({ model: "m1", cwd: "/a" });
    writers.push(a);
    await a.userInput("first prompt\nmore");
    await a.close();
    const b = await store.sessions.create({ model: "m1", cwd: "/b" });
    writers.push(b);
    await b.title("Named");
    await b.configChange({ model: "x" }, "m9");
    await b.close();
    const list = await store.sessions.list();
    expect(list.map((s) => s.id)).toEqual([b.id, a.id]);
    expect(list[0]).toMatchObject({ title: "Named", model: "m9", cwd: "/b" });
    expect(list[1]).toMatchObject({ title: "first prompt", model: "m1", cwd: "/a" });
    expect(list[1]?.sizeBytes).toBeGreaterThan(50);
    expect(await store.sessions.list({ limit: 1 })).toHaveLength(1);
  });

  it("marks a run that failed before any output, and reports what a resume reuses", async () => {
    const store = await connect(await pg.createDatabase());
    const failed = await store.sessions.create({
      model: "m1",
      baseURL: "http://127.0.0.1:9/v1",
      config: { model: "openai-chat/m1" },
    });
    writers.push(failed);
    await failed.userInput("hello");
    await failed.error({ code: "network", message: "refused" });
    await failed.close();
    const answered = await store.sessions.create({ model: "m1", parentSessionId: failed.id });
    writers.push(answered);
    await answered.userInput("hello");
    await answered.item(
      { type: "message", role: "assistant", content: [{ type: "text", text: "hi" }] },
      "assistant",
    );
    await answered.error({ code: "network", message: "reset" });
    await answered.close();
    const rows = new Map((await store.sessions.list()).map((s) => [s.id, s]));
    expect(rows.get(failed.id)).toMatchObject({
      failedBeforeOutput: true,
      modelRef: "openai-chat/m1",
      baseURL: "http://127.0.0.1:9/v1",
      firstPrompt: "hello",
    });
    expect(rows.get(answered.id)).toMatchObject({ failedBeforeOutput: false, parentSessionId: failed.id });
  });

  it("rejects bad ids, unknown sessions and taken ids with typed errors", async () => {
    const store = await connect(await pg.createDatabase());
    await expect(store.sessions.open("no-such")).rejects.toMatchObject({ code: "not_found" });
    await expect(store.sessions.load("no-such")).rejects.toMatchObject({ code: "not_found" });
    await expect(store.sessions.open("../etc/passwd")).rejects.toMatchObject({ code: "invalid_id" });
    const log = await store.sessions.create({ id: "taken" });
    writers.push(log);
    await expect(store.sessions.create({ id: "taken" })).rejects.toMatchObject({ code: "exists" });
    await log.close();
    await expect(log.item(user("late"), "user")).rejects.toMatchObject({ code: "closed" });
  });

  it("one writer per session: a live lease is refused naming its holder", async () => {
    const url = await pg.createDatabase();
    const hostA = await connect(url, { holder: "host-a" });
    const hostB = await connect(url, { holder: "host-b" });
    const log = await hostA.sessions.create({});
    writers.push(log);
    const error = await hostB.sessions.open(log.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionLeasedError);
    expect(error).toMatchObject({ code: "locked", holder: "host-a" });
    expect((error as Error).message).toContain("host-a");
    // a clean close frees it at once
    await log.close();
    const opened = await hostB.sessions.open(log.id);
    writers.push(opened.log);
  });

  it("a lease let go between the take and the look is taken, not refused as held by no one", async () => {
    const url = await pg.createDatabase();
    const hostA = await connect(url, { holder: "host-a" });
    const hostB = await connect(url, { holder: "host-b" });
    const log = await hostA.sessions.create({});
    writers.push(log);
    // Host A closes the session (its idle time ended) just after host B's insert found the lease held.
    let statements = 0;
    const racing = (async (strings: TemplateStringsArray, ...values: unknown[]) => {
      const rows = await hostB.sql(strings, ...(values as never[]));
      if (++statements === 1) await log.close();
      return rows;
    }) as unknown as typeof hostB.sql;
    const lease = await PgLease.acquire(
      hostB.sql,
      "the test database",
      log.id,
      "host-b",
      {
        leaseMs: 5000,
        heartbeatMs: 1000,
      },
      racing,
    );
    expect((await hostB.sessions.leaseHolder(log.id))?.holder).toBe("host-b");
    await lease.release();
  });

  it("a store never opens a session twice, but takes back its own orphaned lease at once", async () => {
    const url = await pg.createDatabase();
    const hostA = await connect(url, { holder: "host-a" });
    const hostB = await connect(url, { holder: "host-b" });
    const log = await hostA.sessions.create({});
    writers.push(log);
    await expect(hostA.sessions.open(log.id)).rejects.toMatchObject({ code: "locked", holder: "host-a" });
    await log.close();
    // host A's release was lost (the database was down when it closed): its row stays behind
    await hostA.sql`INSERT INTO yoi_session_leases (session_id, holder, token, expires_at)
      VALUES (${log.id}, 'host-a', ${"0190a0a0-0000-7000-8000-0000000000aa"}, now() + interval '1 hour')`;
    await expect(hostB.sessions.open(log.id)).rejects.toMatchObject({ code: "locked", holder: "host-a" });
    const reopened = await hostA.sessions.open(log.id);
    writers.push(reopened.log);
    expect(reopened.log.nextSeq).toBe(1);
  });

  it("a dead host's lease expires; the next host continues with every acknowledged record", async () => {
    const url = await pg.createDatabase();
    const hostA = await PgStore.connect({ url, holder: "host-a", leaseMs: 2000 });
    const hostB = await connect(url, { holder: "host-b", leaseMs: 2000 });
    const log = await hostA.sessions.create({});
    const acknowledged: number[] = [];
    for (let i = 0; i < 20; i++) acknowledged.push((await log.item(user(`a${i}`), "user")).seq);
    // a few more in flight when the host dies: they may or may not have committed
    for (let i = 0; i < 5; i++) void log.item(user(`late${i}`), "user").catch(() => {});
    await hostA.close(0); // the process is gone: no release, no heartbeat
    await expect(hostB.sessions.open(log.id)).rejects.toMatchObject({ code: "locked", holder: "host-a" });
    const lease = await hostB.sessions.leaseHolder(log.id);
    await new Promise((r) =>
      setTimeout(r, Math.max(0, Date.parse(lease?.expiresAt ?? "") - Date.now()) + 300),
    );
    const opened = await hostB.sessions.open(log.id);
    writers.push(opened.log);
    const seqs = (await hostB.sessions.load(log.id)).records.map((r) => r.seq);
    for (const seq of acknowledged) expect(seqs).toContain(seq);
    expect(opened.history.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => user(`a${i}`)));
    const next = await opened.log.item(user("b0"), "user");
    expect(next.seq).toBe(seqs.length);
  });

  it("a holder whose lease ran out unnoticed keeps writing until another host takes it over", async () => {
    const url = await pg.createDatabase();
    const hostA = await connect(url, { holder: "host-a" });
    const log = await hostA.sessions.create({});
    writers.push(log);
    await hostA.sql`UPDATE yoi_session_leases SET expires_at = now() - interval '1 second' WHERE session_id = ${log.id}`;
    await expect(log.item(user("still mine"), "user")).resolves.toMatchObject({ seq: 1 });
    expect(await hostA.sessions.leaseHolder(log.id)).toBeUndefined();
  });

  it("fences a host whose lease was taken over: its appends are refused, not interleaved", async () => {
    const url = await pg.createDatabase();
    const lost: string[] = [];
    const hostA = await connect(url, { holder: "host-a", leaseMs: 400, onLeaseLost: (id) => lost.push(id) });
    const hostB = await connect(url, { holder: "host-b", leaseMs: 5000 });
    const log = await hostA.sessions.create({});
    writers.push(log);
    await log.item(user("a0"), "user");
    // host A stalls (a long GC pause, a partition): its lease runs out
    await hostA.sql`UPDATE yoi_session_leases SET expires_at = now() - interval '1 second' WHERE session_id = ${log.id}`;
    const opened = await hostB.sessions.open(log.id);
    writers.push(opened.log);
    await expect(log.item(user("a1 from the stalled host"), "user")).rejects.toMatchObject({
      code: "locked",
    });
    await expect(log.item(user("a2"), "user")).rejects.toMatchObject({ code: "locked" });
    await opened.log.item(user("b1"), "user");
    const { history } = await hostB.sessions.load(log.id);
    expect(history).toEqual([user("a0"), user("b1")]);
    await new Promise((r) => setTimeout(r, 500));
    expect(lost).toEqual([log.id]);
  });

  it("a host that stalled past its lease learns before it acts whether it still holds the session", async () => {
    const url = await pg.createDatabase();
    // a heartbeat late enough that the host looks stalled (stopped, a long pause) in between
    const hostA = await connect(url, { holder: "host-a", leaseMs: 2000, heartbeatMs: 1999 });
    const hostB = await connect(url, { holder: "host-b", leaseMs: 5000 });
    const [kept, taken] = [await hostA.sessions.create({}), await hostA.sessions.create({})];
    writers.push(kept, taken);
    for (const log of [kept, taken]) {
      await log.item(user("a0"), "user");
      await log.ensureHeld();
      await hostA.sql`UPDATE yoi_session_leases SET expires_at = now() - interval '1 second' WHERE session_id = ${log.id}`;
    }
    await new Promise((r) => setTimeout(r, 1100));
    // expired, but nobody took it: confirming renews it, and the host goes on
    await kept.ensureHeld();
    expect((await hostB.sessions.leaseHolder(kept.id))?.holder).toBe("host-a");
    await expect(kept.item(user("a1"), "user")).resolves.toMatchObject({ seq: 2 });
    // taken over by another host: refused, and the writer is done, as an append would have found
    const opened = await hostB.sessions.open(taken.id);
    writers.push(opened.log);
    await expect(taken.ensureHeld()).rejects.toMatchObject({ code: "locked" });
    await expect(taken.item(user("a1"), "user")).rejects.toMatchObject({ code: "locked" });
  });
});

describe.skipIf(!withPostgres)("PgSessionStore snapshots", () => {
  /** What a full replay of every record gives: the truth a snapshot must reproduce. */
  async function fullReplay(store: PgStore, id: string) {
    const { history, meta, warnings } = await store.sessions.load(id);
    return { history, meta, warnings };
  }
  async function snapshotSeq(store: PgStore, id: string): Promise<number | undefined> {
    const [row] = await store.sql<
      { seq: number }[]
    >`SELECT seq FROM yoi_session_snapshots WHERE session_id = ${id}`;
    return row?.seq;
  }
  async function until(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
  }

  it("a resume from the snapshot and the records after it equals a replay of every record", async () => {
    const store = await connect(await pg.createDatabase(), { snapshotEvery: 4 });
    const log = await store.sessions.create({ model: "m1", provider: "p", cwd: "/work", config: { a: 1 } });
    writers.push(log);
    await writeConversation(log);
    await log.close();
    // periodic ones, written in the background: the last one's seq depends on timing
    expect(await snapshotSeq(store, log.id)).toBeGreaterThanOrEqual(3);
    const same = async (opened: Awaited<ReturnType<typeof store.sessions.open>>) => {
      writers.push(opened.log);
      const { history, meta, warnings } = await store.sessions.load(log.id);
      expect({ history: opened.history, meta: opened.meta, warnings: opened.warnings }).toEqual({
        history,
        meta,
        warnings,
      });
    };
    // a bad row after it (written behind the store's back): skipped with the warning a full replay gives
    await store.sql`INSERT INTO yoi_session_records (session_id, seq, type, ts, line)
      VALUES (${log.id}, 16, 'item', now(), '{"v":1,"seq":16,broken')`;
    const first = await store.sessions.open(log.id);
    await same(first);
    expect(first.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^seq 16: not JSON/)]);
    for (let i = 0; i < 3; i++) await first.log.item(user(`after ${i}`), "user");
    await first.log.close();
    // the new snapshot (at close at the latest) covers the bad row and keeps its warning
    expect(await snapshotSeq(store, log.id)).toBeGreaterThanOrEqual(16);
    const second = await store.sessions.open(log.id);
    await same(second);
    expect(second.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^seq 16: not JSON/)]);

    // more records, then the host dies: no snapshot at close, the next host reads snapshot + tail
    for (let i = 3; i < 5; i++) await second.log.item(user(`after ${i}`), "user");
    await (second.log as PgSessionLog).lease.release();
    expect(await snapshotSeq(store, log.id)).toBeLessThan(21);
    const third = await store.sessions.open(log.id);
    await same(third);
    expect(third.history.at(-1)).toEqual(user("after 4"));
    expect(third.log.nextSeq).toBe(22);
  });

  it("writes one every snapshotEvery records while the session runs", async () => {
    const store = await connect(await pg.createDatabase(), { snapshotEvery: 10 });
    const log = await store.sessions.create({});
    writers.push(log);
    for (let i = 0; i < 25; i++) await log.item(user(`m${i}`), "user");
    await until(async () => ((await snapshotSeq(store, log.id)) ?? -1) >= 19);
    const seq = await snapshotSeq(store, log.id);
    expect(seq).toBeGreaterThanOrEqual(19);
    expect(seq).toBeLessThanOrEqual(25);
  });

  it("a session from before snapshots is replayed once and gets one; a damaged one is replaced", async () => {
    const url = await pg.createDatabase();
    const old = await connect(url, { snapshotEvery: 0 });
    const log = await old.sessions.create({});
    writers.push(log);
    for (let i = 0; i < 30; i++) await log.item(user(`m${i}`), "user");
    await log.close();
    expect(await snapshotSeq(old, log.id)).toBeUndefined();

    const store = await connect(url, { snapshotEvery: 10 });
    const opened = await store.sessions.open(log.id);
    writers.push(opened.log);
    expect(opened.warnings).toEqual([]);
    await until(async () => (await snapshotSeq(store, log.id)) === 30);
    expect(await snapshotSeq(store, log.id)).toBe(30);
    await opened.log.close();

    await store.sql`UPDATE yoi_session_snapshots SET state = '{"v":1,"seq":30,"history":' WHERE session_id = ${log.id}`;
    const again = await store.sessions.open(log.id);
    writers.push(again.log);
    expect(again.history).toEqual((await fullReplay(store, log.id)).history);
    expect(again.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^the snapshot at seq 30 cannot be used \(not JSON .*\); replayed every record$/),
    ]);
    await again.log.close();
    const fixed = await store.sessions.open(log.id);
    writers.push(fixed.log);
    expect(fixed.warnings).toEqual([]);
    expect(fixed.history).toHaveLength(30);
  });

  it("refuses a snapshotEvery that is not a whole number of records", async () => {
    const url = await pg.createDatabase();
    for (const bad of [-1, 1.5, Number.NaN])
      await expect(PgStore.connect({ url, snapshotEvery: bad })).rejects.toThrow(
        /snapshotEvery must be a whole number of records/,
      );
  });

  it("a snapshot is written only under the writer's lease, and never over a newer one", async () => {
    const url = await pg.createDatabase();
    const hostA = await connect(url, { holder: "host-a", snapshotEvery: 0 });
    const hostB = await connect(url, { holder: "host-b", snapshotEvery: 0 });
    const log = (await hostA.sessions.create({})) as PgSessionLog;
    writers.push(log);
    await hostA.sql`UPDATE yoi_session_leases SET expires_at = now() - interval '1 second' WHERE session_id = ${log.id}`;
    const opened = await hostB.sessions.open(log.id);
    writers.push(opened.log);
    const tokenB = (opened.log as PgSessionLog).lease.token;
    expect(await writeSnapshot(hostA.sql, log.id, log.lease.token, 5, "stale")).toBe(false);
    expect(await snapshotSeq(hostA, log.id)).toBeUndefined();
    expect(await writeSnapshot(hostB.sql, log.id, tokenB, 5, "b5")).toBe(true);
    expect(await writeSnapshot(hostB.sql, log.id, tokenB, 3, "b3")).toBe(false);
    expect(await snapshotSeq(hostA, log.id)).toBe(5);
  });
});

describe.skipIf(!withPostgres)("PgStore.connect", () => {
  it("applies migrations once, even when hosts start together", async () => {
    const url = await pg.createDatabase();
    await Promise.all([connect(url), connect(url), connect(url)]);
    const store = stores[0] as PgStore;
    const rows = await store.sql<{ version: number }[]>`SELECT version FROM yoi_schema_migrations`;
    expect(rows.map((r) => r.version).sort()).toEqual([1, 2, 3]);
  });

  it("refuses a database whose schema is newer than this code", async () => {
    const url = await pg.createDatabase();
    const store = await connect(url);
    await store.sql`INSERT INTO yoi_schema_migrations (version, name) VALUES (99, 'future')`;
    const error = await PgStore.connect({ url }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PgStoreError);
    expect(error).toMatchObject({ code: "schema_too_new" });
    expect((error as Error).message).toMatch(/v99.*upgrade yoi/);
  });

  it("an unreachable database is one clear line without the password", async () => {
    const port = pg.port + 1 === 65536 ? 1 : pg.port + 1;
    const error = await PgStore.connect({
      url: `postgres://yoi:s3cret@127.0.0.1:${port}/nope`,
      connectTimeoutSeconds: 3,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unreachable" });
    const message = (error as Error).message;
    expect(message).toContain(`127.0.0.1:${port}/nope`);
    expect(message).toContain("ECONNREFUSED");
    expect(message).not.toContain("s3cret");
    expect(message).not.toContain("\n");
  });

  it("rejects a URL that is not postgres://", async () => {
    await expect(PgStore.connect({ url: "mysql://x@y/z" })).rejects.toMatchObject({ code: "invalid_url" });
    await expect(PgStore.connect({ url: "not a url" })).rejects.toMatchObject({ code: "invalid_url" });
  });
});

describe.skipIf(!withPostgres)("a database lost mid-session", () => {
  it("fails the append with a clear io error, and the session resumes when the database is back", async () => {
    const url = await pg.createDatabase();
    const store = await connect(url, { connectTimeoutSeconds: 2 });
    const log = await store.sessions.create({});
    writers.push(log);
    await log.item(user("before"), "user");
    await pg.kill();
    try {
      const error = await log.item(user("during"), "user").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionLogError);
      expect(error).toMatchObject({ code: "io" });
      expect((error as Error).message).toMatch(/cannot append to session .* in postgres:\/\/127\.0\.0\.1/);
    } finally {
      await pg.restart();
    }
    await log.close();
    const opened = await store.sessions.open(log.id);
    writers.push(opened.log);
    expect(opened.history).toEqual([user("before")]);
  });
});
