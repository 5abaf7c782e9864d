/** A small in-memory BlobStore for tests (with the optional delete capability). */
import { randomUUID } from "node:crypto";
import { type BlobId, type BlobStore, BlobStoreError, type Content, isBlobId } from "@yoi/llm-worker";

export class TestBlobStore implements BlobStore {
  readonly blobs = new Map<string, Content>();
  stores = 0;
  loads = 0;

  async store(content: Content): Promise<BlobId> {
    const id = randomUUID();
    this.blobs.set(id, structuredClone(content));
    this.stores++;
    return id;
  }

  async load(id: BlobId): Promise<Content> {
    this.loads++;
    if (!isBlobId(id)) throw new BlobStoreError("invalid_id", `invalid blob id ${id}`);
    const content = this.blobs.get(id);
    if (!content) throw new BlobStoreError("not_found", `blob ${id} not found`);
    return structuredClone(content);
  }

  async exists(id: BlobId): Promise<boolean> {
    if (!isBlobId(id)) throw new BlobStoreError("invalid_id", `invalid blob id ${id}`);
    return this.blobs.has(id);
  }
}

/** The same store plus `delete(id)`. */
export class DeletableTestBlobStore extends TestBlobStore {
  async delete(id: BlobId): Promise<boolean> {
    return this.blobs.delete(id);
  }
}

export function storeText(store: TestBlobStore, text: string): string {
  const id = randomUUID();
  store.blobs.set(id, { kind: "text", text });
  return id;
}
