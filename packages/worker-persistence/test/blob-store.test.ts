import { mkdtempSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BlobStore, BlobStoreError, type Content } from "@yoi/llm-worker";
import { v7 as uuidv7 } from "uuid";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FsBlobStore, type ManagedBlobStore, MemoryBlobStore } from "../src/index.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "yoi-blob-"));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<BlobStoreError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BlobStoreError);
    return error as BlobStoreError;
  }
  throw new Error("expected a rejection");
}

const samples: Content[] = [
  { kind: "text", text: "" },
  { kind: "text", text: "hello\nworld\n" },
  { kind: "text", text: "日本語 ✓ emoji 🎉 and \u0000 NUL and \r\n CRLF" },
  { kind: "text", text: "x".repeat(300_000) },
  { kind: "structured", value: [] },
  { kind: "structured", value: { a: 1, b: [true, null, "s"], nested: { deep: { x: 1.5 } } } },
  {
    kind: "structured",
    value: [
      { path: "a.ts", line: 1 },
      { path: "b.ts", line: 2 },
    ],
  },
  { kind: "structured", value: "a bare string" },
  { kind: "structured", value: 42 },
  { kind: "structured", value: null },
];

type Store = BlobStore & ManagedBlobStore;
const factories: Array<[string, () => Promise<Store>]> = [
  ["FsBlobStore", () => FsBlobStore.open({ dir: tempDir() })],
  ["FsBlobStore (deferSync)", () => FsBlobStore.open({ dir: tempDir(), deferSync: true })],
  ["MemoryBlobStore", async () => new MemoryBlobStore()],
];

describe.each(factories)("%s (shared contract)", (_name, make) => {
  it("round-trips text and structured content", async () => {
    const store = await make();
    for (const content of samples) {
      const id = await store.store(content);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(await store.exists(id)).toBe(true);
      expect(await store.load(id)).toEqual(content);
      expect(await store.load(id.toUpperCase())).toEqual(content);
    }
  });

  it("returns a fresh copy of structured values", async () => {
    const store = await make();
    const value = { list: [1, 2] };
    const id = await store.store({ kind: "structured", value });
    value.list.push(3);
    const loaded = (await store.load(id)) as { kind: "structured"; value: { list: number[] } };
    expect(loaded.value.list).toEqual([1, 2]);
    loaded.value.list.push(9);
    expect(await store.load(id)).toEqual({ kind: "structured", value: { list: [1, 2] } });
  });

  it("issues unique, time-sortable ids under 10k concurrent stores", async () => {
    const store = await make();
    const ids = await Promise.all(
      Array.from({ length: 10_000 }, (_, i) => store.store({ kind: "text", text: String(i) })),
    );
    expect(new Set(ids).size).toBe(10_000);
    const listed = (await store.list()).map((b) => b.id);
    expect(listed).toHaveLength(10_000);
    expect(listed).toEqual([...ids].sort());
    // every id leads back to its own content
    for (const i of [0, 1, 4999, 9999])
      expect(await store.load(ids[i] as string)).toEqual({ kind: "text", text: String(i) });
  }, 120_000); // 10k files written at once: seconds on an idle disk, tens of seconds on a loaded machine

  it("deletes one blob by id, and says when there was none", async () => {
    const store = await make();
    const text = await store.store({ kind: "text", text: "bye" });
    const json = await store.store({ kind: "structured", value: { a: 1 } });
    expect(await store.delete(text)).toBe(true);
    expect(await store.exists(text)).toBe(false);
    expect((await rejection(store.load(text))).code).toBe("not_found");
    expect(await store.delete(text)).toBe(false);
    expect(await store.load(json)).toEqual({ kind: "structured", value: { a: 1 } });
    expect(await store.delete(json)).toBe(true);
    expect((await store.list()).map((b) => b.id)).toEqual([]);
    expect((await rejection(store.delete("../../etc/passwd"))).code).toBe("invalid_id");
  });

  it("rejects malformed ids before any lookup", async () => {
    const store = await make();
    for (const bad of [
      "",
      "../../etc/passwd",
      "..",
      "abc",
      `${uuidv7()}/../x`,
      `${uuidv7()}.txt`,
      "/tmp/x",
      "\0",
    ]) {
      const err = await rejection(store.load(bad));
      expect(err.code).toBe("invalid_id");
      expect(err.message).toContain("invalid blob id");
      expect((await rejection(store.exists(bad))).code).toBe("invalid_id");
    }
    expect((await rejection(store.load(42 as unknown as string))).code).toBe("invalid_id");
  });

  it("reports not_found for a well-formed unknown id", async () => {
    const store = await make();
    const id = uuidv7();
    expect(await store.exists(id)).toBe(false);
    const err = await rejection(store.load(id));
    expect(err.code).toBe("not_found");
    expect(err.message).toContain(id);
  });

  it("refuses content that cannot round-trip", async () => {
    const store = await make();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(store.store({ kind: "structured", value: cyclic })).rejects.toThrow(/not JSON-serializable/);
    await expect(store.store({ kind: "structured", value: undefined })).rejects.toThrow(
      /must be a JSON value/,
    );
    await expect(store.store({ kind: "structured", value: 1n })).rejects.toThrow(TypeError);
    await expect(store.store({ kind: "text", text: 5 } as unknown as Content)).rejects.toThrow(
      /string `text`/,
    );
    await expect(store.store({ kind: "bin" } as unknown as Content)).rejects.toThrow(/unknown Content kind/);
    expect(await store.list()).toEqual([]);
  });

  it("gc deletes only unreferenced blobs older than the grace period and says which", async () => {
    const store = await make();
    const live = await store.store({ kind: "text", text: "live" });
    const dead = await store.store({ kind: "structured", value: { dead: true } });
    const young = await store.store({ kind: "text", text: "young" });
    const [liveInfo, deadInfo, youngInfo] = await store.list();
    expect([liveInfo?.id, deadInfo?.id, youngInfo?.id]).toEqual([live, dead, young]);
    const now = Math.max(...(await store.list()).map((b) => b.storedAt));
    // nothing is old enough under a 1 h grace period
    expect((await store.gc({ liveRefs: [], graceMs: 3_600_000, now })).deleted).toEqual([]);
    // pretend an hour passed for everything but `young`
    const later = now + 3_600_000;
    const dry = await store.gc({
      liveRefs: [live.toUpperCase(), young],
      graceMs: 3_600_000,
      now: later,
      dryRun: true,
    });
    expect(dry.deleted.map((b) => b.id)).toEqual([dead]);
    expect(await store.exists(dead)).toBe(true);
    const result = await store.gc({ liveRefs: new Set([live]), graceMs: 3_600_000, now: later });
    expect(result.deleted.map((b) => b.id)).toEqual([dead, young]);
    expect(result.deleted[0]?.kind).toBe("structured");
    expect(result.freedBytes).toBe(Buffer.byteLength('{"dead":true}') + Buffer.byteLength("young"));
    expect(result.kept).toBe(1);
    expect(await store.exists(dead)).toBe(false);
    expect(await store.load(live)).toEqual({ kind: "text", text: "live" });
    await expect(store.gc({ liveRefs: [], graceMs: -1 })).rejects.toThrow(RangeError);
  });
});

describe("FsBlobStore on disk", () => {
  it("uses the flat blobs/<id>.txt|json layout with private modes", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir });
    const t = await store.store({ kind: "text", text: "plain" });
    const s = await store.store({ kind: "structured", value: { k: "v" } });
    expect(readdirSync(join(dir, "blobs")).sort()).toEqual([`${t}.txt`, `${s}.json`].sort());
    expect(await readFile(join(dir, "blobs", `${t}.txt`), "utf8")).toBe("plain");
    expect(await readFile(join(dir, "blobs", `${s}.json`), "utf8")).toBe('{"k":"v"}');
    const { statSync } = await import("node:fs");
    expect(statSync(join(dir, "blobs")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "blobs", `${t}.txt`)).mode & 0o777).toBe(0o600);
  });

  it("creates a missing directory tree on the first store, and reads nothing from a missing one", async () => {
    const dir = join(tempDir(), "not", "yet");
    const store = new FsBlobStore({ dir });
    expect(await store.list()).toEqual([]);
    expect(await store.exists(uuidv7())).toBe(false);
    expect((await rejection(store.load(uuidv7()))).code).toBe("not_found");
    const id = await store.store({ kind: "text", text: "x" });
    expect(await store.load(id)).toEqual({ kind: "text", text: "x" });
  });

  it("concurrent stores share directory fsyncs (group commit), sequential ones each get their own", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir });
    await store.store({ kind: "text", text: "creates the directory" });
    const { open } = await import("node:fs/promises");
    const probe = await open(join(dir, "probe"), "w");
    await probe.close();
    const spy = vi.spyOn(Object.getPrototypeOf(probe) as { sync: () => Promise<void> }, "sync");
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.store({ kind: "text", text: String(i) })));
    const concurrent = spy.mock.calls.length;
    spy.mockClear();
    for (let i = 0; i < 5; i++) await store.store({ kind: "text", text: String(i) });
    const sequential = spy.mock.calls.length;
    spy.mockRestore();
    expect(sequential).toBe(10); // file + directory, each time
    expect(concurrent).toBeGreaterThanOrEqual(41); // 40 files + at least one directory sync
    expect(concurrent).toBeLessThan(80);
  });

  it("deferSync: store resolves before any fsync; sync() fsyncs every stored file and the directory", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir, deferSync: true });
    await store.store({ kind: "text", text: "creates the directory" });
    await store.sync();
    const { open } = await import("node:fs/promises");
    const probe = await open(join(dir, "probe"), "w");
    await probe.close();
    const proto = Object.getPrototypeOf(probe) as {
      sync: () => Promise<void>;
      datasync: () => Promise<void>;
    };
    const fsyncs: string[] = [];
    const original = { sync: proto.sync };
    // File fsyncs are held until the test lets them go, so what ran before store() resolved is seen.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const datasync = proto.datasync;
    const spies = [
      vi.spyOn(proto, "datasync").mockImplementation(async function (this: unknown) {
        fsyncs.push("datasync");
        await gate;
        return datasync.call(this);
      }),
      vi.spyOn(proto, "sync").mockImplementation(async function (this: unknown) {
        fsyncs.push("sync");
        return original.sync.call(this);
      }),
    ];
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await store.store({ kind: "text", text: `blob ${i}` }));
      // all five resolved, whole and readable, while the file fsyncs are held
      for (const [i, id] of ids.entries())
        expect(await store.load(id)).toEqual({ kind: "text", text: `blob ${i}` });
      expect(fsyncs).toEqual(["datasync"]); // the first group's file fsync, held: no directory fsync yet
      await store.delete(ids[4] as string); // a blob deleted before its fsync: nothing left to sync, no error
      const synced = store.sync();
      release();
      await synced;
      // the first group took the first blob, the next the other four: 5 file fsyncs, 2 directory fsyncs at most
      expect(fsyncs.filter((name) => name === "datasync").length).toBeLessThanOrEqual(5);
      expect(fsyncs.filter((name) => name === "datasync").length).toBeGreaterThanOrEqual(4);
      expect(fsyncs.filter((name) => name === "sync").length).toBeGreaterThanOrEqual(1);
      fsyncs.length = 0;
      await store.sync(); // nothing stored since: nothing to do
      expect(fsyncs).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("deferSync: a background fsync that failed is reported by sync(), with path and errno", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir, deferSync: true });
    await store.store({ kind: "text", text: "creates the directory" });
    await store.sync();
    const { open } = await import("node:fs/promises");
    const probe = await open(join(dir, "probe"), "w");
    await probe.close();
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    const spy = vi
      .spyOn(proto, "datasync")
      .mockRejectedValue(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
    try {
      const id = await store.store({ kind: "text", text: "stored, never synced" });
      const error = await rejection(store.sync());
      expect(error.code).toBe("io");
      expect(error.errno).toBe("EIO");
      expect(error.message).toContain(join(dir, "blobs"));
      // the blob itself is there for this process; the failure stays (a failed fsync is not retried)
      expect(await store.load(id)).toEqual({ kind: "text", text: "stored, never synced" });
      spy.mockRestore();
      expect((await rejection(store.sync())).code).toBe("io");
    } finally {
      spy.mockRestore();
    }
  });

  it("uses gc's age from the file time", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir });
    const old = await store.store({ kind: "text", text: "old" });
    const fresh = await store.store({ kind: "text", text: "fresh" });
    const past = new Date(Date.now() - 2 * 86_400_000);
    utimesSync(join(dir, "blobs", `${old}.txt`), past, past);
    const result = await store.gc({ liveRefs: [] });
    expect(result.deleted.map((b) => b.id)).toEqual([old]);
    expect(await store.exists(fresh)).toBe(true);
  });

  it("flags corrupt blobs: bad JSON, bad UTF-8, symlinks, non-files", async () => {
    const dir = tempDir();
    const store = await FsBlobStore.open({ dir });
    const blobs = join(dir, "blobs");
    await store.store({ kind: "text", text: "seed" }); // creates the directory
    const badJson = uuidv7();
    await writeFile(join(blobs, `${badJson}.json`), '{"truncated": ');
    const badUtf8 = uuidv7();
    await writeFile(join(blobs, `${badUtf8}.txt`), Buffer.from([0x61, 0xff, 0xfe]));
    const link = uuidv7();
    const outside = join(tempDir(), "secret.txt");
    writeFileSync(outside, "secret");
    symlinkSync(outside, join(blobs, `${link}.txt`));
    const asDir = uuidv7();
    await mkdir(join(blobs, `${asDir}.txt`));
    for (const [id, pattern] of [
      [badJson, /not valid JSON/],
      [badUtf8, /not valid UTF-8/],
      [link, /symbolic link/],
      [asDir, /not a regular file/],
    ] as const) {
      const err = await rejection(store.load(id));
      expect(err.code).toBe("corrupt");
      expect(err.message).toMatch(pattern);
      expect(err.path).toContain(id);
    }
  });

  it("surfaces I/O errors with path and errno", async () => {
    const root = tempDir();
    // A path whose parent is a file fails for root too (ENOTDIR), unlike chmod.
    writeFileSync(join(root, "file"), "");
    const store = new FsBlobStore({ dir: join(root, "file") });
    const err = await rejection(store.store({ kind: "text", text: "x" }));
    expect(err.code).toBe("io");
    expect(err.errno).toBe("ENOTDIR");
    expect(err.path).toContain(join(root, "file", "blobs"));
    expect(err.message).toMatch(/ENOTDIR .*not a directory/);
    expect((await rejection(store.load(uuidv7()))).code).toBe("io");
  });

  it.skipIf(process.getuid?.() === 0)(
    "surfaces EACCES on a read-only directory (non-root only)",
    async () => {
      const dir = tempDir();
      await mkdir(join(dir, "blobs"));
      await chmod(join(dir, "blobs"), 0o500);
      const store = new FsBlobStore({ dir });
      const err = await rejection(store.store({ kind: "text", text: "x" }));
      expect(err.errno).toBe("EACCES");
      await chmod(join(dir, "blobs"), 0o700);
    },
  );

  it("cleanup removes temp files of dead writers and of this pid, keeps live ones", async () => {
    const dir = tempDir();
    const blobs = join(dir, "blobs");
    await mkdir(blobs, { recursive: true });
    const dead = `.${uuidv7()}.txt.999999999-ab12.tmp`; // no such pid
    const mine = `.${uuidv7()}.json.${process.pid}-cd34.tmp`; // a previous incarnation of this pid
    const liveOld = `.${uuidv7()}.txt.1-ef56.tmp`; // pid 1 is alive, but the file is ancient
    const liveNew = `.${uuidv7()}.txt.1-0a0b.tmp`;
    for (const name of [dead, mine, liveOld, liveNew]) writeFileSync(join(blobs, name), "partial");
    const past = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(join(blobs, liveOld), past, past);
    const keep = uuidv7();
    writeFileSync(join(blobs, `${keep}.txt`), "whole");
    const store = await FsBlobStore.open({ dir });
    expect(readdirSync(blobs).sort()).toEqual([liveNew, `${keep}.txt`].sort());
    expect((await store.cleanup()).removed).toEqual([]);
    expect((await store.list()).map((b) => b.id)).toEqual([keep]);
  });
});
