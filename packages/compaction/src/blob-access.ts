/**
 * Reading cached outputs back from the BlobStore: ref validation with clear
 * errors, rendering of stored content as numbered text, and the optional
 * delete capability used by GC.
 */

import type { BlobId, BlobStore, Content } from "@yoi/llm-worker";
import { BlobStoreError, isBlobId } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import { CompactionError } from "./errors.ts";

/**
 * Optional BlobStore capability: delete one blob. The llm-worker port has
 * no delete, so GC only deletes when the store offers this; otherwise it
 * reports the unreferenced ids and leaves deleting to the store's owner
 * (e.g. a session-level `gc` that knows every live reference).
 */
export interface DeletableBlobStore extends BlobStore {
  /** Deletes a blob; resolves false when it did not exist. */
  delete(id: BlobId): Promise<boolean>;
}

/** Whether a store offers `delete(id)`. */
export function canDelete(store: BlobStore): store is DeletableBlobStore {
  return typeof (store as Partial<DeletableBlobStore>).delete === "function";
}

/** Stored content as the text the cache tools number (structured JSON is pretty-printed). */
export function renderContent(content: Content): string {
  return content.kind === "text" ? content.text : JSON.stringify(content.value, null, 2);
}

const EMBEDDED_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * The id in what a model passed as `ref_id`: models often copy `ref=<id>`
 * or `[blob:<id>]` whole, so the UUID inside is taken when there is one.
 */
export function normalizeRefId(refId: string): string {
  const trimmed = refId.trim();
  if (isBlobId(trimmed)) return trimmed;
  return EMBEDDED_ID.exec(trimmed)?.[0] ?? trimmed;
}

/** Loads a ref's content as text, or throws a `CompactionError("cache")` the model can act on. */
export async function loadRef(store: BlobStore, refId: string): Promise<string> {
  const id = normalizeRefId(refId);
  if (!isBlobId(id)) {
    throw new CompactionError(
      "cache",
      `Unknown ref_id ${JSON.stringify(refId)}: a ref id is a UUID such as 01935c4e-7a1b-7c3d-8e9f-0123456789ab. Copy it from "ref=<id>" in a trimmed or truncated tool output.`,
    );
  }
  try {
    return renderContent(await store.load(id));
  } catch (error) {
    if (BlobStoreError.isInstance(error) && (error.code === "not_found" || error.code === "invalid_id")) {
      throw new CompactionError(
        "cache",
        `Unknown ref_id ${JSON.stringify(refId)}: no cached tool output has this id (it may have been removed after compaction). Use a ref shown in the current conversation, or run the tool again.`,
        { cause: error },
      );
    }
    const reason = errorMessage(error);
    throw new CompactionError("cache", `Could not read cached output ${id}: ${reason}`, { cause: error });
  }
}
