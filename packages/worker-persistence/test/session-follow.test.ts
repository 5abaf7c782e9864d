/**
 * Following a session another writer appends to: `recordsAfter` on both
 * stores, and the LISTEN/NOTIFY signals between the hosts of a database.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileSessionStore, type SessionStore } from "../src/index.ts";
import { MAX_SIGNAL_BYTES, PgStore } from "../src/postgres/index.ts";
import { findPostgresBinDir, startTestPostgres, type TestPostgres } from "../src/postgres/testing/index.ts";

// Without PostgreSQL server binaries the PostgreSQL half skips, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";

let pg: TestPostgres | undefined;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  if (withPostgres) pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  await pg?.stop();
});

async function connect(url: string): Promise<PgStore> {
  const store = await PgStore.connect({ url });
  closers.push(() => store.close(0));
  return store;
}

async function store(kind: "files" | "postgres"): Promise<SessionStore> {
  if (kind === "files")
    return new FileSessionStore({ dir: await mkdtemp(path.join(tmpdir(), "yoi-follow-")) });
  return (await connect(await (pg as TestPostgres).createDatabase())).sessions;
}

describe.each(withPostgres ? (["files", "postgres"] as const) : (["files"] as const))(
  "recordsAfter on %s",
  (kind) => {
    it("reads the records above a seq while the writer holds the session", async () => {
      const sessions = await store(kind);
      const log = await sessions.create({ cwd: "/work" });
      await log.userInput("first", undefined, undefined, "ann");
      expect((await sessions.recordsAfter(log.id, -1)).map((r) => [r.seq, r.type])).toEqual([
        [0, "session_start"],
        [1, "user_input"],
      ]);
      expect(await sessions.recordsAfter(log.id, 1)).toEqual([]);
      await log.alert("warn", "test", "second");
      const after = await sessions.recordsAfter(log.id, 1);
      expect(after).toMatchObject([{ seq: 2, type: "alert", message: "second" }]);
      await log.close();
    });

    it("answers not_found for a session that does not exist", async () => {
      const sessions = await store(kind);
      await expect(sessions.recordsAfter("0190a0b0-0000-7000-8000-000000000000", 0)).rejects.toMatchObject({
        code: "not_found",
      });
    });
  },
);

describe.skipIf(!withPostgres)("PgSignals", () => {
  it("delivers a payload to every host of the database and refuses one too large", async () => {
    const url = await (pg as TestPostgres).createDatabase();
    const [a, b] = [await connect(url), await connect(url)];
    const seen: string[] = [];
    const stop = await b.signals.subscribe((payload) => seen.push(payload));
    await a.signals.publish('{"s":"x","seq":3}');
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(['{"s":"x","seq":3}']);
    await expect(a.signals.publish("x".repeat(MAX_SIGNAL_BYTES))).rejects.toThrow(RangeError);
    await stop();
  });
});
