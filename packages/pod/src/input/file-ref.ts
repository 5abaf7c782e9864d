/**
 * Resolving a `@path` file ref into the system message the model sees
 * (docs/design/file-refs.md#the-body): `[File: <path>]\n<body>`, the body cut
 * at `maxBytes` on a character boundary with a visible note, binary and
 * non-UTF-8 rejected.
 */

import { type MessageItem, systemMessage } from "@yoi/llm-client";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import { ScopeError } from "../fs/scope-error.ts";
import { readUpTo, type ScopedFs } from "../fs/scoped-fs.ts";
import { classifyBytes, isValidUtf8, SNIFF_BYTES, utf8Boundary } from "../fs/text-sniff.ts";

/**
 * What went wrong, as a stable string:
 *
 * - `out_of_scope`
 * - `not_found`
 * - `binary`
 * - `directory`: The path names a directory: only files are attached.
 * - `io`
 * - `too_large`
 * - `unsupported`: The current model cannot take what the file is (an image, for a text-only model).
 */
export type FileRefErrorCode =
  | "out_of_scope"
  | "not_found"
  | "binary"
  | "directory"
  | "io"
  | "too_large"
  | "unsupported";

/** Why a file ref could not be attached. `message` is one line, fit for an Alert. */
export class FileRefError extends YoiError<FileRefErrorCode> {
  override readonly name = "FileRefError";
  static override readonly marker: symbol = Symbol.for("yoi.error.FileRefError");
  /** The path as the user wrote it. */
  readonly path: string;
  constructor(code: FileRefErrorCode, path: string, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.path = path;
  }
}

export interface ResolvedFileRef {
  item: MessageItem;
  /** The real path read (for auto-read bookkeeping). */
  real: string;
  /** Size of the whole file in bytes. */
  totalBytes: number;
  truncated: boolean;
  mtimeMs: number;
}

/** The note appended to a body cut at the cap. */
export function truncationNote(totalBytes: number): string {
  return `[...truncated, ${totalBytes} bytes total — use read_file for the rest]`;
}

function fromScopeError(error: ScopeError, path: string): FileRefError {
  const code: FileRefErrorCode =
    error.code === "out_of_scope"
      ? "out_of_scope"
      : error.code === "not_found" || error.code === "invalid_path"
        ? "not_found"
        : "io";
  return new FileRefError(code, path, error.message, { cause: error });
}

async function isDirectory(fs: ScopedFs, path: string): Promise<boolean> {
  try {
    return (await fs.stat(path)).kind === "directory";
  } catch {
    return false;
  }
}

/**
 * The one line a UI shows for a ref that was not attached: which ref, why,
 * and (when the ref may not have been meant as a path at all, `@Injectable`,
 * `@types/node`) how to send the `@` as text. The model sees only the
 * placeholder of the ref in the user's message.
 */
export function unattachedMessage(ref: string, reason: string, code: string | undefined): string {
  // An image too large, or one the model cannot take, was surely meant as a file: `\@` would not help.
  const meantAsFile = code === "unsupported" || code === "too_large";
  const literal = meantAsFile ? "" : `; to send it as text, write \\@${ref}`;
  return `@${ref} was not attached: ${reason}${literal}`;
}

/** A text file's body as it is sent: capped, the truncation note appended when cut. */
export interface TextBody {
  body: string;
  /** The real path read. */
  real: string;
  /** Size of the whole file in bytes. */
  totalBytes: number;
  truncated: boolean;
  mtimeMs: number;
}

/**
 * Reads `path` through `fs` and returns the `[File: <path>]` system message.
 * Rejects with `FileRefError` (`out_of_scope`, `not_found`, `binary`, `io`).
 */
export async function resolveFileRef(
  fs: ScopedFs,
  path: string,
  maxBytes: number = TOOL_OUTPUT_MAX_BYTES,
): Promise<ResolvedFileRef> {
  const { body, ...rest } = await readTextBody(fs, path, maxBytes);
  return { item: systemMessage(`[File: ${path}]\n${body}`), ...rest };
}

/**
 * Reads a UTF-8 text file through `fs`, capped at `maxBytes` on a character
 * boundary with the truncation note. The whole capped body is
 * checked: binary, NUL bytes and invalid UTF-8 are rejected. Rejects with
 * `FileRefError` (`out_of_scope`, `not_found`, `binary`, `io`).
 */
export async function readTextBody(
  fs: ScopedFs,
  path: string,
  maxBytes: number = TOOL_OUTPUT_MAX_BYTES,
): Promise<TextBody> {
  let file: Awaited<ReturnType<ScopedFs["openRead"]>>;
  try {
    file = await fs.openRead(path);
  } catch (error) {
    if (ScopeError.isInstance(error)) {
      if (error.code === "invalid_path" && (await isDirectory(fs, path)))
        throw new FileRefError("directory", path, `${path} is a directory; only a file can be attached`, {
          cause: error,
        });
      throw fromScopeError(error, path);
    }
    throw new FileRefError("io", path, `cannot read ${path}: ${errorMessage(error)}`, { cause: error });
  }
  try {
    const total = file.stat.size;
    // A few bytes past the cap let the cut find a character boundary.
    const bytes = await readUpTo(file.handle, Math.min(total, Math.max(maxBytes + 4, SNIFF_BYTES)));
    const atEof = bytes.length >= total;
    const cls = classifyBytes(
      bytes.subarray(0, Math.min(bytes.length, SNIFF_BYTES)),
      atEof && bytes.length <= SNIFF_BYTES,
    );
    if (cls.kind === "binary") throw new FileRefError("binary", path, `${path} ${cls.reason}`);
    const truncated = total > maxBytes;
    const cut = truncated ? utf8Boundary(bytes, maxBytes) : bytes.length;
    const kept = bytes.subarray(0, cut);
    // The sniff saw only the first 8 KiB: the whole body that is sent must be NUL-free UTF-8.
    const nul = kept.indexOf(0);
    if (nul !== -1) throw new FileRefError("binary", path, `${path} is binary (a NUL byte at offset ${nul})`);
    if (!isValidUtf8(kept, true)) throw new FileRefError("binary", path, `${path} is not valid UTF-8 text`);
    let body = new TextDecoder("utf-8").decode(kept);
    if (truncated) body += `${body.endsWith("\n") || body === "" ? "" : "\n"}${truncationNote(total)}`;
    return {
      body,
      real: file.path.real,
      totalBytes: total,
      truncated,
      mtimeMs: file.stat.mtimeMs,
    };
  } catch (error) {
    if (FileRefError.isInstance(error)) throw error;
    if (ScopeError.isInstance(error)) throw fromScopeError(error, path);
    throw new FileRefError("io", path, `cannot read ${path}: ${errorMessage(error)}`, { cause: error });
  } finally {
    await file.close();
  }
}
