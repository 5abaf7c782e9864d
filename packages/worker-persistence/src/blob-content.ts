import { BlobStoreError, type Content, isBlobId } from "@yoi/llm-worker";

/**
 * Validates a blob id before it touches a path or a map; returns the
 * canonical (lower-case) form.
 */
export function checkBlobId(id: unknown): string {
  if (typeof id !== "string" || !isBlobId(id)) {
    const shown =
      typeof id === "string" ? JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}...` : id) : typeof id;
    throw new BlobStoreError(
      "invalid_id",
      `invalid blob id ${shown}: expected a UUID such as those store() returns`,
    );
  }
  return id.toLowerCase();
}

/**
 * Serializes content for storage, rejecting what cannot round-trip: the
 * stored bytes must load back as the same Content.
 */
export function serializeContent(content: Content): { ext: "txt" | "json"; data: string } {
  if (content === null || typeof content !== "object") {
    throw new TypeError("BlobStore.store expects a Content object ({ kind: 'text' | 'structured', ... })");
  }
  if (content.kind === "text") {
    if (typeof content.text !== "string") throw new TypeError("text Content needs a string `text`");
    return { ext: "txt", data: content.text };
  }
  if (content.kind === "structured") {
    let data: string | undefined;
    try {
      data = JSON.stringify(content.value);
    } catch (error) {
      throw new TypeError(`structured Content is not JSON-serializable: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (data === undefined)
      throw new TypeError("structured Content `value` must be a JSON value, got undefined");
    return { ext: "json", data };
  }
  throw new TypeError(`unknown Content kind ${JSON.stringify((content as { kind: unknown }).kind)}`);
}
