import { type BlobId, type BlobStore, BlobStoreError, type Content } from "@yoi/llm-worker";
import { v7 as uuidv7 } from "uuid";
import { checkBlobId, serializeContent } from "./blob-content.ts";
import { type BlobInfo, GarbageCollectedStore } from "./blob-gc.ts";

export interface MemoryBlobStoreOptions {
  /** Clock for `storedAt` (epoch ms). Default `Date.now`. */
  now?: () => number;
}

interface Entry {
  kind: Content["kind"];
  /** The serialized bytes, exactly what FsBlobStore would write. */
  data: string;
  byteSize: number;
  storedAt: number;
}

/**
 * An in-memory BlobStore with FsBlobStore's behaviour: UUID v7 ids, id
 * validation before lookup (`invalid_id`), `not_found`, JSON round-trip
 * semantics for structured content (a loaded value is a fresh copy, and
 * content that cannot be serialized throws a `TypeError`), `list` and `gc`.
 * For embedding and tests; nothing survives the process.
 */
export class MemoryBlobStore extends GarbageCollectedStore implements BlobStore {
  readonly #blobs = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(options: MemoryBlobStoreOptions = {}) {
    super();
    this.#now = options.now ?? Date.now;
  }

  async store(content: Content): Promise<BlobId> {
    const { ext, data } = serializeContent(content);
    const id = uuidv7();
    this.#blobs.set(id, {
      kind: ext === "txt" ? "text" : "structured",
      data,
      byteSize: Buffer.byteLength(data, "utf8"),
      storedAt: this.#now(),
    });
    return id;
  }

  async load(id: BlobId): Promise<Content> {
    const entry = this.#blobs.get(checkBlobId(id));
    if (!entry) throw new BlobStoreError("not_found", `blob ${id} not found in the memory store`);
    return entry.kind === "text"
      ? { kind: "text", text: entry.data }
      : { kind: "structured", value: JSON.parse(entry.data) as unknown };
  }

  async exists(id: BlobId): Promise<boolean> {
    return this.#blobs.has(checkBlobId(id));
  }

  /** Deletes one blob; false when there was none (see FsBlobStore.delete). */
  async delete(id: BlobId): Promise<boolean> {
    return this.#blobs.delete(checkBlobId(id));
  }

  async list(): Promise<BlobInfo[]> {
    return [...this.#blobs]
      .map(([id, e]) => ({ id, kind: e.kind, byteSize: e.byteSize, storedAt: e.storedAt }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  protected override now(): number {
    return this.#now();
  }

  protected async deleteGarbage(garbage: BlobInfo[]): Promise<BlobInfo[]> {
    return garbage.filter((blob) => this.#blobs.delete(blob.id));
  }

  /** Number of stored blobs. */
  get size(): number {
    return this.#blobs.size;
  }
}
