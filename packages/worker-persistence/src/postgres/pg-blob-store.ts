/**
 * The BlobStore on PostgreSQL: ids UUID v7 as in `FsBlobStore`, content
 * split into chunks of `chunkBytes` (default 256 KiB) stored with the blob
 * row in one transaction (a blob is whole or absent), read back one chunk at
 * a time (`chunks(id)` streams; `load` decodes while streaming), and
 * deleted by `gc` when no session references it.
 */
import { type BlobId, type BlobStore, BlobStoreError, type Content } from "@yoi/llm-worker";
import type { Sql } from "postgres";
import { v7 as uuidv7 } from "uuid";
import { checkBlobId, serializeContent } from "../blob-content.ts";
import { type BlobInfo, GarbageCollectedStore } from "../blob-gc.ts";
import { describeDbError } from "./pg-error.ts";

/** Default chunk size: 256 KiB. */
export const DEFAULT_CHUNK_BYTES = 256 * 1024;

interface BlobRow {
  id: string;
  kind: Content["kind"];
  byte_size: string;
  chunks: number;
  stored_at: Date;
}

export class PgBlobStore extends GarbageCollectedStore implements BlobStore {
  /** `postgres://host:port/db` without credentials. */
  readonly location: string;
  readonly chunkBytes: number;
  readonly #sql: Sql;

  /** @internal Use `PgStore.connect(...).blobs`. */
  constructor(sql: Sql, location: string, options: { chunkBytes?: number } = {}) {
    super();
    this.#sql = sql;
    this.location = location;
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (!(Number.isInteger(this.chunkBytes) && this.chunkBytes > 0))
      throw new RangeError(`chunkBytes must be a positive integer, got ${options.chunkBytes}`);
  }

  #ioError(action: string, error: unknown): BlobStoreError {
    if (BlobStoreError.isInstance(error)) return error;
    return new BlobStoreError("io", `cannot ${action} in ${this.location}: ${describeDbError(error)}`, {
      path: this.location,
      cause: error,
    });
  }

  async store(content: Content): Promise<BlobId> {
    const { ext, data } = serializeContent(content);
    const kind: Content["kind"] = ext === "txt" ? "text" : "structured";
    const bytes = Buffer.from(data, "utf8");
    const id = uuidv7();
    const count = Math.max(1, Math.ceil(bytes.length / this.chunkBytes));
    try {
      await this.#sql.begin(async (tx) => {
        await tx`INSERT INTO yoi_blobs (id, kind, byte_size, chunks) VALUES (${id}, ${kind}, ${bytes.length}, ${count})`;
        // a few chunks per statement keeps each message small
        for (let first = 0; first < count; first += 8) {
          const rows = [];
          for (let idx = first; idx < Math.min(count, first + 8); idx++) {
            rows.push({
              blob_id: id,
              idx,
              data: bytes.subarray(idx * this.chunkBytes, (idx + 1) * this.chunkBytes),
            });
          }
          await tx`INSERT INTO yoi_blob_chunks ${tx(rows, "blob_id", "idx", "data")}`;
        }
      });
    } catch (error) {
      throw this.#ioError("store a blob", error);
    }
    return id;
  }

  async #row(key: string): Promise<BlobRow | undefined> {
    try {
      const [row] = await this.#sql<BlobRow[]>`
        SELECT id::text, kind, byte_size::text, chunks, stored_at FROM yoi_blobs WHERE id = ${key}`;
      return row;
    } catch (error) {
      throw this.#ioError(`read blob ${key}`, error);
    }
  }

  /**
   * The stored bytes of a blob, one chunk at a time (UTF-8 text, or the JSON
   * serialization). Rejects with `not_found`, or `corrupt` when a chunk is
   * missing or the sizes disagree.
   */
  async *chunks(id: BlobId): AsyncGenerator<Uint8Array> {
    const key = checkBlobId(id);
    const row = await this.#row(key);
    if (row === undefined) throw new BlobStoreError("not_found", `blob ${key} not found in ${this.location}`);
    yield* this.#chunksOf(row);
  }

  async *#chunksOf(row: BlobRow): AsyncGenerator<Uint8Array> {
    let total = 0;
    for (let idx = 0; idx < row.chunks; idx++) {
      let chunk: { data: Uint8Array } | undefined;
      try {
        [chunk] = await this.#sql<{ data: Uint8Array }[]>`
          SELECT data FROM yoi_blob_chunks WHERE blob_id = ${row.id} AND idx = ${idx}`;
      } catch (error) {
        throw this.#ioError(`read blob ${row.id}`, error);
      }
      if (chunk === undefined) {
        throw new BlobStoreError(
          "corrupt",
          `blob ${row.id} in ${this.location} lacks chunk ${idx} of ${row.chunks}`,
        );
      }
      total += chunk.data.length;
      yield chunk.data;
    }
    if (total !== Number(row.byte_size)) {
      throw new BlobStoreError(
        "corrupt",
        `blob ${row.id} in ${this.location} has ${total} bytes, its row says ${row.byte_size}`,
      );
    }
  }

  async load(id: BlobId): Promise<Content> {
    const key = checkBlobId(id);
    const row = await this.#row(key);
    if (row === undefined) throw new BlobStoreError("not_found", `blob ${key} not found in ${this.location}`);
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let text = "";
    try {
      for await (const chunk of this.#chunksOf(row)) text += decoder.decode(chunk, { stream: true });
      text += decoder.decode();
    } catch (error) {
      if (BlobStoreError.isInstance(error)) throw error;
      throw new BlobStoreError("corrupt", `blob ${key} in ${this.location} is not valid UTF-8`, {
        cause: error,
      });
    }
    if (row.kind === "text") return { kind: "text", text };
    try {
      return { kind: "structured", value: JSON.parse(text) as unknown };
    } catch (error) {
      throw new BlobStoreError(
        "corrupt",
        `blob ${key} in ${this.location} is not valid JSON: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  async exists(id: BlobId): Promise<boolean> {
    return (await this.#row(checkBlobId(id))) !== undefined;
  }

  async delete(id: string): Promise<boolean> {
    const key = checkBlobId(id);
    try {
      const rows = await this.#sql`DELETE FROM yoi_blobs WHERE id = ${key} RETURNING id`;
      return rows.length > 0;
    } catch (error) {
      throw this.#ioError(`delete blob ${key}`, error);
    }
  }

  async list(): Promise<BlobInfo[]> {
    let rows: BlobRow[];
    try {
      rows = await this.#sql<BlobRow[]>`
        SELECT id::text, kind, byte_size::text, chunks, stored_at FROM yoi_blobs ORDER BY id`;
    } catch (error) {
      throw this.#ioError("list blobs", error);
    }
    return rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      byteSize: Number(row.byte_size),
      storedAt: new Date(row.stored_at).getTime(),
    }));
  }

  protected async deleteGarbage(garbage: BlobInfo[]): Promise<BlobInfo[]> {
    let gone: { id: string }[];
    try {
      gone = await this.#sql<{ id: string }[]>`
        DELETE FROM yoi_blobs WHERE id = ANY(${garbage.map((b) => b.id)}::uuid[]) RETURNING id::text`;
    } catch (error) {
      throw this.#ioError("delete unreferenced blobs", error);
    }
    // One deleted concurrently is not ours to report.
    const ids = new Set(gone.map((r) => r.id));
    return garbage.filter((blob) => ids.has(blob.id));
  }
}
