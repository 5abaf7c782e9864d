/**
 * The BlobStore port (docs/design/tool-output-storage.md#the-blob-store).
 * Declared here, next to its consumer (the worker's Stored tool output and the
 * `inspect` tool); implemented by `@yoi/worker-persistence` (FsBlobStore,
 * MemoryBlobStore).
 */
import { YoiError } from "@yoi/manifest/errors";

/** A blob id: a UUID v7 string (time-sortable). */
export type BlobId = string;

/** Stored content: plain text, or structured JSON (an array or an object). */
export type Content = { kind: "text"; text: string } | { kind: "structured"; value: unknown };

export type BlobStoreErrorCode = "not_found" | "invalid_id" | "corrupt" | "io";

/** Typed error of every BlobStore implementation. */
export class BlobStoreError extends YoiError<BlobStoreErrorCode> {
  override readonly name = "BlobStoreError";
  static override readonly marker: symbol = Symbol.for("yoi.error.BlobStoreError");
  /** The file involved, for I/O errors of a file-backed store. */
  readonly path: string | undefined;
  /** The underlying errno code (`ENOSPC`, `EACCES`, `EROFS`, ...), when there is one. */
  readonly errno: string | undefined;

  constructor(
    code: BlobStoreErrorCode,
    message: string,
    options: { path?: string; errno?: string; cause?: unknown } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.path = options.path;
    this.errno = options.errno;
  }
}

export interface BlobStore {
  /** Stores content durably and returns its new id. */
  store(content: Content): Promise<BlobId>;
  /** Loads content; rejects with `BlobStoreError` (`invalid_id`, `not_found`, `corrupt`, `io`). */
  load(id: BlobId): Promise<Content>;
  /** Whether a blob exists; rejects with `invalid_id` for a malformed id. */
  exists(id: BlobId): Promise<boolean>;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` has the shape of a UUID (any version); the gate before an id touches a path. */
export function isBlobId(id: string): boolean {
  return UUID_RE.test(id);
}
