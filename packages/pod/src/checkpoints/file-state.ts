/**
 * A file's state as checkpoints see it: absent, or its bytes with their
 * SHA-256. Prior content is kept in the blob store, as text when it is
 * UTF-8 and as base64 otherwise (the BlobStore holds text or JSON).
 */
import { createHash } from "node:crypto";
import type { BlobStore } from "@yoi/llm-worker";
import type { FileState } from "@yoi/worker-persistence";
import { ScopeError } from "../fs/scope-error.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";

/** Largest file whose prior content a checkpoint keeps (8 MiB). Larger ones are noted, not kept. */
export const CHECKPOINT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/** A file observed now: its state and, when small enough to keep, its bytes. */
export interface ObservedFile {
  state: FileState;
  bytes?: Buffer;
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Reads `real` through the scope (one verified open). A missing path, a
 * directory or another non-regular file is `absent`: only regular files
 * are checkpointed.
 */
export async function observeFile(
  fs: ScopedFs,
  real: string,
  maxBytes = CHECKPOINT_MAX_FILE_BYTES,
): Promise<ObservedFile> {
  let file: Awaited<ReturnType<ScopedFs["openRead"]>>;
  try {
    file = await fs.openRead(real);
  } catch (error) {
    if (ScopeError.isInstance(error) && (error.code === "not_found" || error.code === "invalid_path"))
      return { state: { kind: "absent" } };
    throw error;
  }
  try {
    const bytes = await file.handle.readFile();
    const state = { sha256: sha256(bytes), size: bytes.length };
    // Over the limit: hashed for the "changed since" check, but not kept.
    if (bytes.length > maxBytes) {
      return {
        state: { kind: "unsaved", ...state, reason: `larger than ${Math.round(maxBytes / 1024 / 1024)} MiB` },
      };
    }
    return { state: { kind: "file", ...state }, bytes };
  } finally {
    await file.close();
  }
}

/** Whether two states describe the same content. */
export function sameContent(a: FileState, b: FileState): boolean {
  if (a.kind === "absent" || b.kind === "absent") return a.kind === b.kind;
  return a.sha256 === b.sha256;
}

/** Keeps `bytes` in the blob store; returns the blob id. */
export async function storeBytes(store: BlobStore, bytes: Buffer): Promise<string> {
  const text = bytes.toString("utf8");
  if (Buffer.byteLength(text, "utf8") === bytes.length && Buffer.from(text, "utf8").equals(bytes)) {
    return store.store({ kind: "text", text });
  }
  return store.store({ kind: "structured", value: { encoding: "base64", data: bytes.toString("base64") } });
}

/** The bytes `storeBytes` kept. */
export async function loadBytes(store: BlobStore, id: string): Promise<Buffer> {
  const content = await store.load(id);
  if (content.kind === "text") return Buffer.from(content.text, "utf8");
  const value = content.value as { encoding?: unknown; data?: unknown };
  if (value?.encoding === "base64" && typeof value.data === "string")
    return Buffer.from(value.data, "base64");
  throw new Error(`blob ${id} is not a checkpoint's file content`);
}

/** The state to record for observed content, its bytes kept in the store. */
export async function keptState(store: BlobStore, observed: ObservedFile): Promise<FileState> {
  if (observed.state.kind !== "file" || observed.bytes === undefined) return observed.state;
  return { ...observed.state, blob: await storeBytes(store, observed.bytes) };
}
