import type { BlobId, Content } from "@yoi/llm-worker";

/** What a store knows about one blob without loading it. */
export interface BlobInfo {
  id: BlobId;
  kind: Content["kind"];
  /** Size of the stored bytes (UTF-8 text, or the JSON serialization). */
  byteSize: number;
  /** When the blob was stored (epoch ms; the file's mtime for FsBlobStore). */
  storedAt: number;
}

export interface GcOptions {
  /**
   * Blob ids still referenced (by session logs, live histories, caches).
   * Compared case-insensitively. Anything not in this set may be deleted.
   */
  liveRefs: Iterable<string>;
  /**
   * Never delete a blob younger than this, in ms. It covers the window
   * between `store()` and the moment the reference reaches a session log.
   * Default 24 h.
   */
  graceMs?: number;
  /** The current time (epoch ms), for tests. Default `Date.now()`. */
  now?: number;
  /** Report what would be deleted without deleting it. Default false. */
  dryRun?: boolean;
}

export interface GcResult {
  /** The blobs deleted (or that would be, with `dryRun`), oldest first. */
  deleted: BlobInfo[];
  /** Bytes freed. */
  freedBytes: number;
  /** Blobs kept (live or younger than the grace period). */
  kept: number;
}

/** Default grace period of `gc`: 24 hours. */
export const DEFAULT_GC_GRACE_MS = 24 * 60 * 60 * 1000;

/** The blob-store operations beyond the llm-worker port that both stores implement. */
export interface ManagedBlobStore {
  /** Every stored blob, sorted by id (UUID v7 ids sort by creation time). */
  list(): Promise<BlobInfo[]>;
  /** Deletes unreferenced blobs older than the grace period and says which. */
  gc(options: GcOptions): Promise<GcResult>;
  /** Deletes one blob by id (validated first); false when there was none. */
  delete(id: string): Promise<boolean>;
}

/** Decides which blobs `gc` deletes; shared so every store behaves identically. */
function selectGarbage(blobs: readonly BlobInfo[], options: GcOptions): BlobInfo[] {
  const graceMs = options.graceMs ?? DEFAULT_GC_GRACE_MS;
  if (!(graceMs >= 0)) throw new RangeError(`gc graceMs must be a non-negative number, got ${graceMs}`);
  const now = options.now ?? Date.now();
  const live = new Set<string>();
  for (const ref of options.liveRefs) live.add(ref.toLowerCase());
  return blobs.filter((blob) => !live.has(blob.id) && now - blob.storedAt >= graceMs);
}

/**
 * What every store shares: its `gc` lists the blobs, picks the garbage
 * (`selectGarbage`) and, unless `dryRun`, hands it to the store's own
 * `deleteGarbage`.
 */
export abstract class GarbageCollectedStore implements ManagedBlobStore {
  abstract list(): Promise<BlobInfo[]>;
  abstract delete(id: string): Promise<boolean>;

  /**
   * Deletes the blobs `gc` chose and answers with those it did delete (one
   * already deleted by someone else is not reported, nor counted as freed).
   */
  protected abstract deleteGarbage(garbage: BlobInfo[]): Promise<BlobInfo[]>;

  /** The time the grace period is measured from (epoch ms) when `options.now` is not given. */
  protected now(): number {
    return Date.now();
  }

  async gc(options: GcOptions): Promise<GcResult> {
    const blobs = await this.list();
    const garbage = selectGarbage(blobs, { ...options, now: options.now ?? this.now() });
    const deleted = options.dryRun || garbage.length === 0 ? garbage : await this.deleteGarbage(garbage);
    const freedBytes = deleted.reduce((sum, blob) => sum + blob.byteSize, 0);
    return { deleted, freedBytes, kept: blobs.length - garbage.length };
  }
}
