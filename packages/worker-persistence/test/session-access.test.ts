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
import { PgStore } from "../src/postgres/index.ts";
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

async function stores(
  kind: "files" | "postgres",
): Promise<{ sessions: SessionStore; access: SessionAccessStore }> {
  if (kind === "files") {
    const dir = await mkdtemp(path.join(tmpdir(), "yoi-access-"));
    return { sessions: new FileSessionStore({ dir }), access: new FileSessionAccess({ dir }) };
  }
  const store = await PgStore.connect({ url: await (pg as TestPostgres).createDatabase() });
  closers.push(() => store.close(0));
  return store;
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
