/**
 * A minimal in-memory BlobStore for tests of the worker and of packages that
 * build on it (the real one lives in @yoi/worker-persistence).
 */
import { v7 as uuidv7 } from "uuid";
import { type BlobStore, BlobStoreError, type Content, isBlobId } from "../blob-store.ts";

export interface MemoryBlobStore extends BlobStore {
  /** Stored content by id. */
  readonly blobs: ReadonlyMap<string, Content>;
}

export function createMemoryBlobStore(): MemoryBlobStore {
  const blobs = new Map<string, Content>();
  const check = (id: string) => {
    if (!isBlobId(id)) throw new BlobStoreError("invalid_id", `not a blob id: ${JSON.stringify(id)}`);
  };
  return {
    blobs,
    async store(content) {
      const id = uuidv7();
      blobs.set(id, structuredClone(content));
      return id;
    },
    async load(id) {
      check(id);
      const content = blobs.get(id);
      if (!content) throw new BlobStoreError("not_found", `no blob ${id}`);
      return structuredClone(content);
    },
    async exists(id) {
      check(id);
      return blobs.has(id);
    },
  };
}
