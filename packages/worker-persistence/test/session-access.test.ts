import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FileSessionAccess,
  FileSessionStore,
  type SessionAccessStore,
  type SessionStore,
} from "../src/index.ts";
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

async function stores(
  kind: "files" | "postgres",
): Promise<{ sessions: SessionStore; access: SessionAccessStore }> {
  if (kind === "files") {
    const dir = await mkdtemp(path.join(tmpdir(), "yoi-access-"));
    return { sessions: new FileSessionStore({ dir }), access: new FileSessionAccess({ dir }) };
  }
  return connect(await (pg as TestPostgres).createDatabase());
}

describe.each(withPostgres ? (["files", "postgres"] as const) : (["files"] as const))(
  "session access on %s",
  (kind) => {
    it("keeps the owner and the members of each session, and which sessions a user may reach", async () => {
      const { sessions, access } = await stores(kind);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const log = await sessions.create({ cwd: "/work" });
        ids.push(log.id);
        await log.close();
      }
      const [a, b, c] = ids as [string, string, string];
      expect(await access.get(a)).toEqual({ owner: undefined, members: [] });
      await access.setOwner(a, "ann");
      await access.setOwner(b, "bob");
      await Promise.all([access.grant(b, "ann"), access.grant(b, "cy"), access.grant(b, "ann")]);
      expect(await access.get(a)).toEqual({ owner: "ann", members: [] });
      const bAccess = await access.get(b);
      expect(bAccess.owner).toBe("bob");
      expect([...bAccess.members].sort()).toEqual(["ann", "cy"]);
      expect(await access.visibleTo("ann")).toEqual(new Set([a, b]));
      expect(await access.visibleTo("bob")).toEqual(new Set([b]));
      expect(await access.visibleTo("nobody")).toEqual(new Set());
      expect(await access.get(c)).toEqual({ owner: undefined, members: [] });
    });
  },
);

describe("session access on files: a damaged table", () => {
  it("is an error naming the file and what to do, and is never overwritten", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "yoi-access-"));
    const sessions = new FileSessionStore({ dir });
    const log = await sessions.create({});
    await log.close();
    const file = path.join(sessions.location, "access.json");
    await writeFile(file, "[not json");
    const access = new FileSessionAccess({ dir });
    await expect(access.get(log.id)).rejects.toThrow(`${file} is not a JSON object`);
    await expect(access.grant(log.id, "ann")).rejects.toThrow("restore it from a backup");
    expect(await readFile(file, "utf8")).toBe("[not json");
  });
});

describe.each(withPostgres ? (["files", "postgres"] as const) : (["files"] as const))(
  "following a session on %s (recordsAfter)",
  (kind) => {
    it("reads the records above a seq while the writer holds the session", async () => {
      const { sessions } = await stores(kind);
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
      const { sessions } = await stores(kind);
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
