import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { type BlobId, type BlobStore, BlobStoreError, type Content } from "@yoi/llm-worker";
import { v7 as uuidv7 } from "uuid";
import { checkBlobId, serializeContent } from "./blob-content.ts";
import { type BlobInfo, GarbageCollectedStore } from "./blob-gc.ts";
import { fsyncDir, isProcessAlive } from "./durable-fs.ts";
import { blobIoError, errnoOf } from "./fs-errors.ts";

export interface FsBlobStoreOptions {
  /** Root directory; blobs live flat in `<dir>/blobs/` (created on first store, mode 0700). */
  dir: string;
  /**
   * Fsync each blob file and the directory after the rename. Default true.
   * Turning it off keeps atomicity (no partial blob is ever visible) but not
   * durability across a power loss.
   */
  fsync?: boolean;
  /**
   * Write-behind durability (with `fsync`): `store` resolves once the blob
   * is renamed into place, whole, which a process crash (SIGKILL) cannot
   * undo; the fsyncs of the blob files and the directory run in the
   * background, grouped (one directory fsync for every blob stored while the
   * previous group ran), and `sync()` resolves once every blob stored so far
   * is on disk. Until then a power loss can lose a blob or leave it torn, so
   * whoever acknowledges records that reference blobs calls `sync()` first
   * (the session log does, given this store as `blobs`). Default false: each
   * `store` fsyncs before it resolves.
   */
  deferSync?: boolean;
  /**
   * A temporary file whose writer is still alive is left alone by `cleanup()`
   * unless it is older than this (ms). Default 1 hour.
   */
  staleTempMs?: number;
}

/** Result of `cleanup()`. */
export interface CleanupResult {
  /** Temporary files removed (names relative to the blobs directory). */
  removed: string[];
}

const BLOB_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(txt|json)$/;
// `.{id}.{ext}.{pid}-{random}.tmp`: hidden, and it names its writer so cleanup
// can tell a dead writer's leftovers from a live writer's file in flight.
const TEMP_NAME = /^\.[0-9a-f-]{36}\.(?:txt|json)\.(\d+)-[0-9a-f]+\.tmp$/;
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Temp files this process is writing right now (across store instances). */
const inFlight = new Set<string>();

/**
 * The file-system BlobStore
 * (docs/design/tool-output-storage.md#the-blob-store): a flat store independent
 * of sessions, `blobs/{id}.txt` for text and `blobs/{id}.json` for structured
 * content, ids UUID v7.
 *
 * Contracts:
 * - `store` is atomic and durable: temp file in the same directory, write,
 *   fsync, rename, fsync of the directory. A crash at any step leaves either
 *   no blob or a whole one; leftover temp files are removed by `cleanup()`,
 *   which runs when the store is opened (`FsBlobStore.open`, or lazily before
 *   the first operation of a constructed store). With `deferSync` the
 *   fsyncs run after `store` resolves, grouped, and `sync()` waits for them:
 *   a process crash still leaves no blob or a whole one; a power loss before
 *   `sync()` resolved may not.
 * - `load`/`exists` validate the id before any path is built; ids compare
 *   case-insensitively. Symlinks in the blobs directory are never followed.
 * - Errors are `BlobStoreError`: `invalid_id`, `not_found`, `corrupt` (bytes
 *   that are not valid UTF-8 / JSON, or a non-regular file), `io` (with
 *   `path` and `errno`, e.g. ENOSPC, EACCES, EROFS). Content that cannot be
 *   serialized is a programming error and throws a `TypeError`.
 */
export class FsBlobStore extends GarbageCollectedStore implements BlobStore {
  /** The directory holding the blob files. */
  readonly blobsDir: string;
  readonly #fsync: boolean;
  readonly #deferSync: boolean;
  readonly #staleTempMs: number;
  #ready: Promise<void> | undefined;
  #dirMade = false;

  constructor(options: FsBlobStoreOptions) {
    if (typeof options?.dir !== "string" || options.dir === "") {
      throw new TypeError("FsBlobStore needs `dir`, the directory that holds `blobs/`");
    }
    super();
    this.blobsDir = join(options.dir, "blobs");
    this.#fsync = options.fsync ?? true;
    this.#deferSync = this.#fsync && options.deferSync === true;
    this.#staleTempMs = options.staleTempMs ?? 60 * 60 * 1000;
  }

  /** Creates a store and removes stale temporary files first; rejects if that cleanup fails. */
  static async open(options: FsBlobStoreOptions): Promise<FsBlobStore> {
    const store = new FsBlobStore(options);
    store.#ready = store.cleanup().then(() => {});
    await store.#ready;
    return store;
  }

  // A constructed (not opened) store cleans up once, before its first
  // operation; a failure there is not fatal (the operation reports its own).
  #init(): Promise<void> {
    this.#ready ??= this.cleanup().then(
      () => {},
      () => {},
    );
    return this.#ready;
  }

  async store(content: Content): Promise<BlobId> {
    const { ext, data } = serializeContent(content);
    await this.#init();
    const id = uuidv7();
    const finalPath = join(this.blobsDir, `${id}.${ext}`);
    const tempPath = join(
      this.blobsDir,
      `.${id}.${ext}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`,
    );
    inFlight.add(tempPath);
    try {
      await this.#writeTemp(tempPath, data, this.#fsync && !this.#deferSync);
      try {
        await rename(tempPath, finalPath);
      } catch (error) {
        throw blobIoError("rename a temporary file to", finalPath, error);
      }
      if (this.#deferSync) {
        this.#unsynced.push(finalPath);
        this.#startGroupSync();
      } else if (this.#fsync) {
        try {
          await this.#syncDir();
        } catch (error) {
          throw blobIoError("fsync the directory", this.blobsDir, error);
        }
      }
      return id;
    } catch (error) {
      await unlink(tempPath).catch(() => {});
      throw error;
    } finally {
      inFlight.delete(tempPath);
    }
  }

  // Group commit of the directory fsync: concurrent stores share one. A sync
  // already running may predate this caller's rename, so callers arriving
  // meanwhile join the next one, which starts when it ends.
  #syncRunning: Promise<void> | undefined;
  #syncQueued: Promise<void> | undefined;

  #syncDir(): Promise<void> {
    if (this.#syncQueued) return this.#syncQueued;
    if (this.#syncRunning) {
      this.#syncQueued = this.#syncRunning
        .catch(() => {})
        .then(() => {
          this.#syncQueued = undefined;
          return this.#startDirSync();
        });
      return this.#syncQueued;
    }
    return this.#startDirSync();
  }

  #startDirSync(): Promise<void> {
    const run = fsyncDir(this.blobsDir).finally(() => {
      if (this.#syncRunning === run) this.#syncRunning = undefined;
    });
    this.#syncRunning = run;
    return run;
  }

  // Write-behind (deferSync): blob files renamed into place and not yet fsynced, the group fsync running
  // (it takes every file queued when it starts), and the first failure, which every later sync() reports.
  #unsynced: string[] = [];
  #groupSync: Promise<void> | undefined;
  #groupFailure: BlobStoreError | undefined;

  #startGroupSync(): void {
    if (this.#groupSync !== undefined) return;
    const run = this.#syncGroup().finally(() => {
      this.#groupSync = undefined;
      if (this.#unsynced.length > 0 && this.#groupFailure === undefined) this.#startGroupSync();
    });
    this.#groupSync = run;
  }

  async #syncGroup(): Promise<void> {
    const files = this.#unsynced.splice(0);
    try {
      await Promise.all(files.map(fsyncFile));
      await fsyncDir(this.blobsDir);
    } catch (error) {
      // An fsync that failed cannot be retried with any confidence (the kernel may have dropped the dirty pages).
      this.#groupFailure ??= blobIoError("fsync blobs in", this.blobsDir, error);
    }
  }

  /**
   * Resolves once every blob stored so far is on disk (fsynced with its
   * directory entry). Without `deferSync` each store already was: resolves
   * at once. Rejects with an `io` error if a background fsync failed.
   */
  async sync(): Promise<void> {
    while (this.#groupSync !== undefined || (this.#unsynced.length > 0 && this.#groupFailure === undefined)) {
      this.#startGroupSync();
      await this.#groupSync;
    }
    if (this.#groupFailure !== undefined) throw this.#groupFailure;
  }

  async #writeTemp(tempPath: string, data: string, sync: boolean): Promise<void> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await this.#openTemp(tempPath);
    } catch (error) {
      throw blobIoError("create", tempPath, error);
    }
    try {
      await handle.writeFile(data, "utf8");
      if (sync) await handle.sync();
    } catch (error) {
      throw blobIoError("write", tempPath, error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  async #openTemp(tempPath: string): Promise<Awaited<ReturnType<typeof open>>> {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    if (!this.#dirMade) {
      try {
        return await open(tempPath, flags, FILE_MODE);
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw error;
      }
      await mkdir(this.blobsDir, { recursive: true, mode: DIR_MODE });
      // The new directory entry itself must survive a crash too.
      if (this.#fsync) await fsyncDir(join(this.blobsDir, ".."));
      this.#dirMade = true;
    }
    return open(tempPath, flags, FILE_MODE);
  }

  async load(id: BlobId): Promise<Content> {
    const key = checkBlobId(id);
    await this.#init();
    const text = await this.#read(join(this.blobsDir, `${key}.txt`));
    if (text !== undefined)
      return { kind: "text", text: decodeUtf8(text, join(this.blobsDir, `${key}.txt`)) };
    const jsonPath = join(this.blobsDir, `${key}.json`);
    const json = await this.#read(jsonPath);
    if (json === undefined)
      throw new BlobStoreError("not_found", `blob ${key} not found in ${this.blobsDir}`);
    const source = decodeUtf8(json, jsonPath);
    try {
      return { kind: "structured", value: JSON.parse(source) as unknown };
    } catch (error) {
      throw new BlobStoreError("corrupt", `blob ${jsonPath} is not valid JSON: ${(error as Error).message}`, {
        path: jsonPath,
        cause: error,
      });
    }
  }

  /** Reads a blob file without following symlinks; undefined when it does not exist. */
  async #read(path: string): Promise<Buffer | undefined> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      const errno = errnoOf(error);
      if (errno === "ENOENT") return undefined;
      if (errno === "ELOOP") {
        throw new BlobStoreError(
          "corrupt",
          `blob ${path} is a symbolic link; the store never follows links`,
          {
            path,
            errno,
          },
        );
      }
      throw blobIoError("read", path, error);
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new BlobStoreError("corrupt", `blob ${path} is not a regular file`, { path });
      return await handle.readFile();
    } catch (error) {
      if (BlobStoreError.isInstance(error)) throw error;
      throw blobIoError("read", path, error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  async exists(id: BlobId): Promise<boolean> {
    const key = checkBlobId(id);
    await this.#init();
    for (const ext of ["txt", "json"]) {
      const path = join(this.blobsDir, `${key}.${ext}`);
      try {
        await lstat(path);
        return true;
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw blobIoError("stat", path, error);
      }
    }
    return false;
  }

  /**
   * Deletes one blob (the optional `DeletableBlobStore` capability that
   * compaction uses for refs it leaves unreferenced). Validates the id first;
   * resolves false when there was no such blob.
   */
  async delete(id: BlobId): Promise<boolean> {
    const key = checkBlobId(id);
    await this.#init();
    let deleted = false;
    for (const ext of ["txt", "json"]) {
      const path = join(this.blobsDir, `${key}.${ext}`);
      try {
        await unlink(path);
        deleted = true;
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw blobIoError("delete", path, error);
      }
    }
    if (deleted && this.#fsync) await fsyncDir(this.blobsDir).catch(() => {});
    return deleted;
  }

  async list(): Promise<BlobInfo[]> {
    await this.#init();
    let names: string[];
    try {
      names = await readdir(this.blobsDir);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return [];
      throw blobIoError("list", this.blobsDir, error);
    }
    const out: BlobInfo[] = [];
    for (const name of names) {
      const match = BLOB_NAME.exec(name);
      if (!match) continue;
      const path = join(this.blobsDir, name);
      try {
        const info = await lstat(path);
        if (!info.isFile()) continue;
        out.push({
          id: match[1] as string,
          kind: match[2] === "txt" ? "text" : "structured",
          byteSize: info.size,
          storedAt: info.mtimeMs,
        });
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw blobIoError("stat", path, error);
      }
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  protected async deleteGarbage(garbage: BlobInfo[]): Promise<BlobInfo[]> {
    const deleted: BlobInfo[] = [];
    for (const blob of garbage) {
      const path = join(this.blobsDir, `${blob.id}.${blob.kind === "text" ? "txt" : "json"}`);
      try {
        await unlink(path);
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue; // deleted concurrently: not ours to report
        throw blobIoError("delete", path, error);
      }
      deleted.push(blob);
    }
    if (deleted.length > 0 && this.#fsync) await fsyncDir(this.blobsDir).catch(() => {});
    return deleted;
  }

  /**
   * Removes temporary files left by a crash: those of a dead process, those
   * of this pid that this process is not writing (a restarted container often
   * reuses the pid), and any older than `staleTempMs`.
   */
  async cleanup(): Promise<CleanupResult> {
    let names: string[];
    try {
      names = await readdir(this.blobsDir);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return { removed: [] };
      throw blobIoError("list", this.blobsDir, error);
    }
    const removed: string[] = [];
    const now = Date.now();
    for (const name of names) {
      const match = TEMP_NAME.exec(name);
      if (!match) continue;
      const path = join(this.blobsDir, name);
      if (inFlight.has(path)) continue;
      const pid = Number(match[1]);
      let stale = pid === process.pid || !isProcessAlive(pid);
      if (!stale) {
        const info = await stat(path).catch(() => undefined);
        stale = info !== undefined && now - info.mtimeMs > this.#staleTempMs;
      }
      if (!stale) continue;
      try {
        await unlink(path);
        removed.push(name);
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw blobIoError("remove the temporary file", path, error);
      }
    }
    return { removed };
  }
}

/** Fsyncs one file's data; a file deleted meanwhile (gc) has nothing left to sync. */
async function fsyncFile(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return;
    throw error;
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close().catch(() => {});
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Buffer, path: string): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new BlobStoreError("corrupt", `blob ${path} is not valid UTF-8`, { path, cause: error });
  }
}
