/**
 * PodFsView: what the pod's tools, the `@path` resolver and auto-read see of
 * the filesystem. Everything goes through ScopedFs; text is told from binary
 * by sniffing the first bytes, and reads are bounded by bytes and lines
 * without loading whole files.
 */

import type { FileHandle } from "node:fs/promises";
import * as path from "node:path";
import { TOOL_OUTPUT_CACHE_DEFAULTS, TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import { type ResolvedFileRef, resolveFileRef } from "../input/file-ref.ts";
import type { FileAccess } from "./file-access.ts";
import { ScopeError } from "./scope-error.ts";
import {
  type DirEntry,
  type ResolvedPath,
  readUpTo,
  type ScopedFs,
  type ScopedStat,
  type WriteOptions,
} from "./scoped-fs.ts";
import { type Classification, classifyBytes, SNIFF_BYTES } from "./text-sniff.ts";

export interface ReadTextOptions {
  /** 1-based number of the first line returned. Default 1. */
  offset?: number;
  /** Most lines returned. Default: as many as fit in `maxBytes`. */
  limit?: number;
  /** Cap of the returned text in UTF-8 bytes. Default `TOOL_OUTPUT_MAX_BYTES` (16 KiB). */
  maxBytes?: number;
  /** Longest line kept, in characters; longer lines are cut with a note. Default 2000. */
  maxLineLength?: number;
}

export interface TextRead {
  path: ResolvedPath;
  /** The path as shown to the model (relative to the cwd when inside it). */
  display: string;
  /** The lines returned, without line terminators; long ones cut. */
  lines: string[];
  /** 1-based number of `lines[0]`. */
  firstLine: number;
  /** Why reading stopped: the end of the file, the line limit, or the byte cap. */
  stoppedBy: "eof" | "limit" | "bytes";
  /** Total lines of the file, known when the read reached the end. */
  totalLines?: number;
  /** Lines that were cut at `maxLineLength`. */
  cutLines: number;
  size: number;
  mtimeMs: number;
}

/** A binary (or non-UTF-8) file where text was required. */
export class BinaryFileError extends YoiError<"binary"> {
  override readonly name = "BinaryFileError";
  static override readonly marker: symbol = Symbol.for("yoi.error.BinaryFileError");
  readonly path: string;
  constructor(path: string, reason: string) {
    super("binary", `${path} ${reason}`);
    this.path = path;
  }
}

const CHUNK_BYTES = 64 * 1024;

export class PodFsView {
  readonly fs: ScopedFs;

  readonly #access: FileAccess | undefined;

  /** `access`: where file text is read and written instead of the disk (see {@link FileAccess}). */
  constructor(fs: ScopedFs, access?: FileAccess) {
    this.fs = fs;
    this.#access = access;
  }

  /** Classifies a file by its first bytes (reads at most `SNIFF_BYTES`). */
  async classify(input: string): Promise<Classification & { size: number }> {
    const file = await this.fs.openRead(input);
    try {
      const head = await readUpTo(file.handle, Math.min(file.stat.size, SNIFF_BYTES));
      return { ...classifyBytes(head, head.length >= file.stat.size), size: file.stat.size };
    } catch (error) {
      throw wrapIo(error, input);
    } finally {
      await file.close();
    }
  }

  /**
   * Reads lines of a UTF-8 text file, bounded by `limit` lines and
   * `maxBytes`. Rejects with `BinaryFileError` for binary content and
   * `ScopeError` for scope and I/O failures.
   */
  async readText(input: string, options: ReadTextOptions = {}): Promise<TextRead> {
    if (this.#access?.readText !== undefined)
      return this.#readTextThrough(this.#access.readText, input, options);
    const file = await this.fs.openRead(input);
    try {
      const size = file.stat.size;
      const head = await readUpTo(file.handle, Math.min(size, SNIFF_BYTES));
      const cls = classifyBytes(head, head.length >= size);
      if (cls.kind === "binary") throw new BinaryFileError(input, cls.reason);
      return await takeLines(input, fileChunks(file.handle, size, head), options, {
        path: file.path,
        display: this.fs.display(file.path.real),
        size,
        mtimeMs: file.stat.mtimeMs,
      });
    } catch (error) {
      throw wrapIo(error, input);
    } finally {
      await file.close();
    }
  }

  /** {@link readText} of the text a {@link FileAccess} gives, after the same scope check (size and mtime from the disk). */
  async #readTextThrough(
    read: NonNullable<FileAccess["readText"]>,
    input: string,
    options: ReadTextOptions,
  ): Promise<TextRead> {
    const st = await this.#regularFile(input, "read");
    try {
      const text = await read(st.path.real);
      const bytes = Buffer.from(text.slice(0, SNIFF_BYTES), "utf8");
      const cls = classifyBytes(bytes, text.length <= SNIFF_BYTES);
      if (cls.kind === "binary") throw new BinaryFileError(input, cls.reason);
      return await takeLines(input, wholeText(text), options, {
        path: st.path,
        display: this.fs.display(st.path.real),
        size: st.size,
        mtimeMs: st.mtimeMs,
      });
    } catch (error) {
      throw wrapIo(error, input);
    }
  }

  /**
   * The whole content of an in-scope file as bytes: from the
   * {@link FileAccess} when it reads (its text, UTF-8 encoded), else from the disk.
   */
  async readBytes(input: string): Promise<Buffer> {
    const read = this.#access?.readText;
    if (read === undefined) return (await this.fs.readFile(input)).bytes;
    const st = await this.#regularFile(input, "read");
    try {
      return Buffer.from(await read(st.path.real), "utf8");
    } catch (error) {
      throw wrapIo(error, input);
    }
  }

  /**
   * Writes text to a file inside a write root: through the
   * {@link FileAccess} when it writes, else atomically on disk
   * ({@link ScopedFs.writeFile}). `expect` (the read-before-write guard) is
   * checked either way; through a FileAccess it is checked just before the
   * hand-over, since the writer is not yoi.
   */
  async writeText(input: string, text: string, options: WriteOptions = {}): Promise<ResolvedPath> {
    const write = this.#access?.writeText;
    if (write === undefined) return this.fs.writeFile(input, text, options);
    const resolved = await this.fs.resolve(input, "write");
    const expect = options.expect;
    if (expect !== undefined) {
      const now = resolved.exists ? await this.fs.stat(input, "write") : undefined;
      const same =
        expect === "absent"
          ? now === undefined
          : now !== undefined && now.size === expect.size && now.mtimeMs === expect.mtimeMs;
      if (!same)
        throw new ScopeError(
          "conflict",
          input,
          `${input} changed on disk while it was being written; read it again before changing it`,
        );
    }
    if (resolved.exists) {
      const st = await this.fs.stat(input, "write");
      if (st.kind !== "file") throw new ScopeError("invalid_path", input, `${input} is not a regular file`);
    }
    // Parents as ScopedFs.writeFile makes them: inside a write root only (an editor may not create them).
    if (!resolved.exists && (options.createParents ?? true)) await this.fs.mkdir(path.dirname(resolved.real));
    try {
      await write(resolved.real, text);
    } catch (error) {
      throw new ScopeError("io", input, `cannot write ${input}: ${errorMessage(error)}`, { cause: error });
    }
    return { ...resolved, exists: true };
  }

  async #regularFile(input: string, mode: "read" | "write"): Promise<ScopedStat> {
    const st = await this.fs.stat(input, mode);
    if (st.kind === "directory")
      throw new ScopeError("invalid_path", input, `${input} is a directory; use list_dir to see its entries`);
    if (st.kind !== "file") throw new ScopeError("invalid_path", input, `${input} is not a regular file`);
    return st;
  }

  /** Entries of a directory (symlinks reported, not followed). */
  async listDir(input: string): Promise<{ path: ResolvedPath; display: string; entries: DirEntry[] }> {
    const { path, entries } = await this.fs.readdir(input);
    return { path, display: this.fs.display(path.real), entries };
  }

  stat(input: string): Promise<ScopedStat> {
    return this.fs.stat(input);
  }

  /**
   * The `[File: <path>]` system message of a `@path` ref
   * (docs/design/file-refs.md#the-body), cut at `maxBytes`. Rejects with
   * `FileRefError` (`out_of_scope`, `not_found`, `binary`, `io`).
   */
  resolveFileRef(path: string, maxBytes: number = TOOL_OUTPUT_MAX_BYTES): Promise<ResolvedFileRef> {
    return resolveFileRef(this.fs, path, maxBytes);
  }
}

function wrapIo(error: unknown, input: string): unknown {
  if (ScopeError.isInstance(error) || BinaryFileError.isInstance(error)) return error;
  const message = errorMessage(error);
  return new ScopeError("io", input, `cannot read ${input}: ${message}`, { cause: error });
}

/** A file's text in decoded chunks, up to the size seen at open (a file that keeps growing must not keep us reading). */
async function* fileChunks(
  handle: FileHandle,
  size: number,
  head: Uint8Array,
): AsyncGenerator<{ text: string; last: boolean }> {
  // Past the sniff, decode leniently: one bad byte deep in a log should not hide the file.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: false });
  // The sniffed head is the file's first bytes (all of a small file): decoded as it is, not read again.
  let position = head.length;
  let last = head.length === 0 || position >= size;
  yield { text: decoder.decode(head, { stream: !last }), last };
  if (last) return;
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position);
    position += bytesRead;
    last = bytesRead === 0 || position >= size;
    yield { text: decoder.decode(buf.subarray(0, bytesRead), { stream: !last }), last };
    if (last) return;
  }
}

async function* wholeText(text: string): AsyncGenerator<{ text: string; last: boolean }> {
  yield { text: text.startsWith("\uFEFF") ? text.slice(1) : text, last: true };
}

/** The lines of `chunks` that `options` asks for, bounded by lines and bytes. */
async function takeLines(
  input: string,
  chunks: AsyncIterable<{ text: string; last: boolean }>,
  options: ReadTextOptions,
  file: Pick<TextRead, "path" | "display" | "size" | "mtimeMs">,
): Promise<TextRead> {
  const offset = Math.max(1, Math.floor(options.offset ?? 1));
  const limit =
    options.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, Math.floor(options.limit));
  const maxBytes = options.maxBytes ?? TOOL_OUTPUT_MAX_BYTES;
  const maxLine = options.maxLineLength ?? TOOL_OUTPUT_CACHE_DEFAULTS.maxLineLength;
  const lines: string[] = [];
  let lineNo = 0;
  let bytes = 0;
  let cutLines = 0;
  let stoppedBy: TextRead["stoppedBy"] | undefined;
  let partial = "";
  let partialLen = 0;
  const take = (raw: string, rawLen: number): boolean => {
    lineNo += 1;
    if (lineNo < offset) return true;
    if (lines.length >= limit) {
      stoppedBy = "limit";
      return false;
    }
    // The sniff saw only the first 8 KiB; a NUL in what would be sent means binary after all.
    if (raw.includes("\u0000")) throw new BinaryFileError(input, `is binary (a NUL byte on line ${lineNo})`);
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (rawLen > maxLine) {
      line = `${line.slice(0, maxLine)}… [line cut, ${rawLen} characters]`;
      cutLines += 1;
    }
    const lineBytes = Buffer.byteLength(line, "utf8") + 1;
    if (bytes + lineBytes > maxBytes && lines.length > 0) {
      stoppedBy = "bytes";
      return false;
    }
    bytes += lineBytes;
    lines.push(line);
    return true;
  };
  outer: for await (const { text, last } of chunks) {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      const piece = nl === -1 ? text.slice(start) : text.slice(start, nl);
      // Keep a bounded prefix of a huge line; its full length is only counted.
      if (partial.length < maxLine + 1) partial += piece.slice(0, maxLine + 1 - partial.length);
      partialLen += piece.length;
      if (nl === -1) break;
      if (!take(partial, partialLen)) break outer;
      partial = "";
      partialLen = 0;
      start = nl + 1;
      if (lines.length >= limit) {
        // Full: stop without scanning the next (possibly huge) line; say whether the file goes on.
        if (start < text.length || !last) stoppedBy = "limit";
        break outer;
      }
    }
  }
  // A last line without a newline still counts; take() sets stoppedBy if it does not fit.
  if (stoppedBy === undefined && (partialLen === 0 || take(partial, partialLen))) stoppedBy = "eof";
  const result: TextRead = { ...file, lines, firstLine: offset, stoppedBy: stoppedBy ?? "eof", cutLines };
  if (result.stoppedBy === "eof") result.totalLines = lineNo;
  return result;
}
