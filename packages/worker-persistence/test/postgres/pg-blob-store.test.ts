import type { Item } from "@yoi/llm-client";
import { BlobStoreError } from "@yoi/llm-worker";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PgStore } from "../../src/postgres/index.ts";
import {
  findPostgresBinDir,
  startTestPostgres,
  type TestPostgres,
} from "../../src/postgres/testing/index.ts";

// Without PostgreSQL server binaries these tests skip, unless YOI_REQUIRE_POSTGRES=1 (CI sets it).
const withPostgres = findPostgresBinDir() !== undefined || process.env.YOI_REQUIRE_POSTGRES === "1";

let pg: TestPostgres;
const stores: PgStore[] = [];
beforeAll(async () => {
  if (!withPostgres) return;
  pg = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close(0).catch(() => {});
});
async function connect(chunkBytes?: number): Promise<PgStore> {
  const store = await PgStore.connect({
    url: await pg.createDatabase(),
    ...(chunkBytes ? { chunkBytes } : {}),
  });
  stores.push(store);
  return store;
}

describe.skipIf(!withPostgres)("PgBlobStore", () => {
  it("round-trips text across chunk boundaries that split multi-byte characters", async () => {
    const { blobs } = await connect(1000);
    const text = "é🐛字".repeat(1500) + "\nend";
    const id = await blobs.store({ kind: "text", text });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(await blobs.load(id)).toEqual({ kind: "text", text });
    expect(await blobs.load(id.toUpperCase())).toEqual({ kind: "text", text });
    const chunks: Uint8Array[] = [];
    for await (const chunk of blobs.chunks(id)) chunks.push(chunk);
    const bytes = Buffer.byteLength(text);
    expect(chunks).toHaveLength(Math.ceil(bytes / 1000));
    expect(Buffer.concat(chunks).toString("utf8")).toBe(text);
    expect(await blobs.exists(id)).toBe(true);
  });

  it("round-trips structured content and the empty text", async () => {
    const { blobs } = await connect();
    const value = { rows: [1, 2, { deep: ["x", null, true] }], name: "ü" };
    const a = await blobs.store({ kind: "structured", value });
    const b = await blobs.store({ kind: "text", text: "" });
    expect(await blobs.load(a)).toEqual({ kind: "structured", value });
    expect(await blobs.load(b)).toEqual({ kind: "text", text: "" });
    expect((await blobs.list()).map((x) => x.id)).toEqual([a, b]);
  });

  it("rejects malformed ids before any query, and reports unknown ones as not_found", async () => {
    const { blobs } = await connect();
    for (const bad of ["../../etc/passwd", "", "1234", "x' OR '1'='1"]) {
      await expect(blobs.load(bad)).rejects.toMatchObject({ code: "invalid_id" });
      await expect(blobs.exists(bad)).rejects.toMatchObject({ code: "invalid_id" });
    }
    const missing = "0190a0a0-0000-7000-8000-000000000099";
    await expect(blobs.load(missing)).rejects.toBeInstanceOf(BlobStoreError);
    await expect(blobs.load(missing)).rejects.toMatchObject({ code: "not_found" });
    expect(await blobs.exists(missing)).toBe(false);
    await expect(blobs.store({ kind: "structured", value: undefined })).rejects.toBeInstanceOf(TypeError);
  });

  it("reports a blob with a missing chunk as corrupt", async () => {
    const store = await connect(10);
    const id = await store.blobs.store({ kind: "text", text: "x".repeat(95) });
    await store.sql`DELETE FROM yoi_blob_chunks WHERE blob_id = ${id} AND idx = 4`;
    await expect(store.blobs.load(id)).rejects.toMatchObject({ code: "corrupt" });
  });

  it("garbage-collects by reference: blobs no session record refers to, past the grace period", async () => {
    const store = await connect();
    const { blobs, sessions } = store;
    const referenced = await blobs.store({ kind: "text", text: "kept: a tool output in history" });
    const marker = await blobs.store({ kind: "text", text: "kept: named by a [blob:] marker only" });
    const compactedAway = await blobs.store({ kind: "text", text: "kept: history replaced, still audited" });
    const orphan = await blobs.store({ kind: "text", text: "garbage" });
    const fresh = await blobs.store({ kind: "text", text: "too young to delete" });
    const log = await sessions.create({});
    await log.item(
      {
        type: "tool_result",
        callId: "c",
        output: "summary",
        isError: false,
        outputRef: { id: referenced },
      } as Item,
      "tool_result",
    );
    await log.item(
      { type: "message", role: "assistant", content: [{ type: "text", text: `see [blob:${marker}]` }] },
      "assistant",
    );
    await log.item(
      { type: "tool_result", callId: "d", output: `[blob:${compactedAway}]`, isError: false } as Item,
      "tool_result",
    );
    await log.historyReplaced({ history: [], reason: "compaction" });
    await log.close();
    await store.sql`UPDATE yoi_blobs SET stored_at = now() - interval '2 days' WHERE id <> ${fresh}`;
    const liveRefs = await store.sessionBlobRefs();
    expect([...liveRefs].sort()).toEqual([referenced, marker, compactedAway].sort());
    const dry = await blobs.gc({ liveRefs, dryRun: true });
    expect(dry.deleted.map((b) => b.id)).toEqual([orphan]);
    expect(await blobs.exists(orphan)).toBe(true);
    const result = await blobs.gc({ liveRefs });
    expect(result.deleted.map((b) => b.id)).toEqual([orphan]);
    expect(result.freedBytes).toBe("garbage".length);
    expect(result.kept).toBe(4);
    expect(await blobs.exists(orphan)).toBe(false);
    const chunks = await store.sql`SELECT 1 FROM yoi_blob_chunks WHERE blob_id = ${orphan}`;
    expect(chunks).toHaveLength(0);
    expect(await blobs.delete(fresh)).toBe(true);
    expect(await blobs.delete(fresh)).toBe(false);
  });
});
