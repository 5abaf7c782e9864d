/**
 * What this session changed: each file a tool of the session wrote (the
 * checkpoints' `file_change` records), as it was before the session's first
 * change to it and as it is now. Works outside a repository; a file whose
 * earlier content was too large to keep is listed without texts.
 */
import type { BlobStore } from "@yoi/llm-worker";
import type { SessionRecord } from "@yoi/worker-persistence";
import { loadBytes, observeFile, sameContent } from "../checkpoints/file-state.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import type { ChangedFile } from "./git-changes.ts";

const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);

export async function sessionChanges(
  records: readonly SessionRecord[],
  fs: ScopedFs,
  blobStore: BlobStore,
): Promise<ChangedFile[]> {
  const first = new Map<string, Extract<SessionRecord, { type: "file_change" }>>();
  for (const record of records)
    if (record.type === "file_change" && !first.has(record.path)) first.set(record.path, record);
  const files: ChangedFile[] = [];
  for (const [real, record] of first) {
    const now = await observeFile(fs, real).catch(() => undefined);
    if (now === undefined) continue;
    const before = record.before;
    if (sameContent(before, now.state)) continue;
    const file: ChangedFile = {
      path: fs.display(real),
      status: before.kind === "absent" ? "added" : now.state.kind === "absent" ? "deleted" : "modified",
      binary: false,
    };
    if (before.kind === "file" && before.blob) {
      const bytes = await loadBytes(blobStore, before.blob).catch(() => undefined);
      if (bytes && isBinary(bytes)) file.binary = true;
      else if (bytes) file.before = bytes.toString("utf8");
    }
    if (now.bytes) {
      if (isBinary(now.bytes)) file.binary = true;
      else file.after = now.bytes.toString("utf8");
    }
    files.push(file);
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
