/**
 * A filesystem confined to read roots and write roots. Every path is resolved
 * to its real path (symlinks followed, dangling ones included) and checked
 * for containment with `path.relative` against roots that were realpath'd at
 * construction. Reads verify the opened handle itself (through
 * `/proc/self/fd` on Linux, dev/ino otherwise), so a symlink swapped in
 * between the check and the open cannot leak bytes from outside the scope.
 */

import { randomBytes } from "node:crypto";
import { constants as fsc, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { errnoOf, ScopeError, scopeErrorFromOs } from "./scope-error.ts";

export interface ScopedFsOptions {
  /** Directories the session may read. Every write root is readable too. */
  readRoots?: readonly string[];
  /** Directories the session may create, overwrite and edit files in. */
  writeRoots?: readonly string[];
  /**
   * Where relative paths start. Default: the first write root, else the first
   * read root. Must lie inside a root.
   */
  cwd?: string;
  /**
   * How an opened handle is checked against the scope. `proc` reads
   * `/proc/self/fd/<n>` (Linux): exact, no race can get past it. `inode`
   * re-resolves the path and compares dev/ino with the handle: it catches a
   * link swapped in and left there, but a parent directory swapped back and
   * forth at the right instants can still slip through (Node has no
   * `openat`). `auto` (default) uses `proc` where it works, else `inode`.
   */
  handleCheck?: "auto" | "proc" | "inode";
  /**
   * Files and directories inside the roots that no access reaches: not
   * read, listed, written or stat'ed, and left out of directory listings.
   * For the embedder's private data that happens to lie in the scope (yoi's
   * saved keys and session logs when a session's root holds the home
   * directory). One that holds a root is ignored: the scope's own root is
   * never hidden.
   */
  hidden?: readonly string[];
}

export type AccessMode = "read" | "write";

/** A path after resolution. */
export interface ResolvedPath {
  /** The path as the caller wrote it. */
  input: string;
  /** `input` made absolute against the cwd (lexically normalized, links not followed). */
  absolute: string;
  /** The real path: every symlink followed; for a missing file, where it would be created. */
  real: string;
  /** Whether something exists at `real`. */
  exists: boolean;
}

export type EntryKind = "file" | "directory" | "symlink" | "other";

export interface DirEntry {
  name: string;
  kind: EntryKind;
}

export interface ScopedStat {
  path: ResolvedPath;
  kind: EntryKind;
  size: number;
  mtimeMs: number;
  dev: number;
  ino: number;
}

/** A verified open file; the caller must `close()` it. */
export interface ScopedReadHandle {
  handle: FileHandle;
  path: ResolvedPath;
  stat: Stats;
  close(): Promise<void>;
}

export interface WriteOptions {
  /** Create missing parent directories (inside a write root only). Default true. */
  createParents?: boolean;
  /**
   * What the file must still be when the write lands (the read-before-overwrite
   * guard), so a change by another process in between is never overwritten:
   * `"absent"` creates only (the final link fails if anything appeared, like
   * O_EXCL); `{ size, mtimeMs }` replaces only a file that still has that size
   * and mtime, checked under a lock file (`.<name>.yoi-lock`, created with
   * O_EXCL) that other yoi processes take too. A mismatch is a `conflict`.
   */
  expect?: "absent" | { size: number; mtimeMs: number };
}

/** How long a writer waits for another yoi process's lock on the same file. */
const LOCK_WAIT_MS = 5000;
/** A lock older than this was left by a crashed process and is removed. */
const LOCK_STALE_MS = 30_000;

const MAX_SYMLINKS = 40;
// O_NONBLOCK keeps an open of a FIFO from hanging; regular files ignore it.
const READ_FLAGS = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK;
const TEMP_FLAGS = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW;

/** Whether `child` is `root` or inside it. Both must be absolute and normalized. */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  if (rel === "") return true;
  if (path.isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(`..${path.sep}`);
}

/** Whether `/proc/self/fd/<n>` names open files here (Linux). Probed once per process. */
let procProbe: Promise<boolean> | undefined;
function procAvailable(): Promise<boolean> {
  procProbe ??= (async () => {
    let dir: FileHandle | undefined;
    try {
      dir = await fsp.open(path.parse(process.cwd()).root, fsc.O_RDONLY | fsc.O_DIRECTORY);
      return path.isAbsolute(await fsp.readlink(`/proc/self/fd/${dir.fd}`));
    } catch {
      return false;
    } finally {
      await dir?.close();
    }
  })();
  return procProbe;
}

/** The path the kernel has for an open handle (Linux `/proc`). */
async function handlePath(handle: FileHandle): Promise<string> {
  const target = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
  return target.endsWith(" (deleted)") ? target.slice(0, -" (deleted)".length) : target;
}

export class ScopedFs {
  /** Real paths of the readable roots (read roots and write roots). */
  readonly readRoots: readonly string[];
  /** Real paths of the write roots. */
  readonly writeRoots: readonly string[];
  /** Real path relative inputs start from. */
  readonly cwd: string;
  /** Real paths no access reaches (see {@link ScopedFsOptions.hidden}). */
  readonly hidden: readonly string[];
  /** Whether handles are checked (and writes anchored) through `/proc/self/fd`. */
  readonly #proc: boolean;

  private constructor(
    readRoots: string[],
    writeRoots: string[],
    cwd: string,
    proc: boolean,
    hidden: string[],
  ) {
    this.readRoots = readRoots;
    this.writeRoots = writeRoots;
    this.cwd = cwd;
    this.#proc = proc;
    this.hidden = hidden;
  }

  /** `proc` when handles are checked exactly through `/proc/self/fd`, else `inode` (best-effort). */
  get handleCheck(): "proc" | "inode" {
    return this.#proc ? "proc" : "inode";
  }

  /** Realpaths the roots (each must be an existing directory) and builds the scope. */
  static async create(options: ScopedFsOptions): Promise<ScopedFs> {
    const realRoot = async (root: string): Promise<string> => {
      if (typeof root !== "string" || root === "" || root.includes("\0")) {
        throw new ScopeError("invalid_path", String(root), `invalid scope root ${JSON.stringify(root)}`);
      }
      let real: string;
      let st: Stats;
      try {
        real = await fsp.realpath(path.resolve(root));
        st = await fsp.stat(real);
      } catch (error) {
        throw scopeErrorFromOs(error, root, "use as scope root");
      }
      if (!st.isDirectory())
        throw new ScopeError("invalid_path", root, `scope root ${root} is not a directory`);
      return real;
    };
    // Resolved beside the roots (a missing one is where it would be).
    const hiddenReal = Promise.all(
      (options.hidden ?? []).map((p) => fsp.realpath(path.resolve(p)).catch(() => path.resolve(p))),
    );
    // In order, so a bad root is reported as the first bad one given.
    const writeRoots: string[] = [];
    for (const root of options.writeRoots ?? []) writeRoots.push(await realRoot(root));
    const readOnly: string[] = [];
    for (const root of options.readRoots ?? []) readOnly.push(await realRoot(root));
    const readRoots = [...new Set([...writeRoots, ...readOnly])];
    if (readRoots.length === 0) {
      throw new ScopeError("invalid_path", "", "a ScopedFs needs at least one read or write root");
    }
    let cwd = writeRoots[0] ?? readRoots[0]!;
    if (options.cwd !== undefined) {
      cwd = await realRoot(options.cwd);
      if (!readRoots.some((r) => isInside(r, cwd))) {
        throw new ScopeError("out_of_scope", options.cwd, `cwd ${options.cwd} is outside every scope root`);
      }
    }
    const check = options.handleCheck ?? "auto";
    const proc = check !== "inode" && (await procAvailable());
    if (check === "proc" && !proc) {
      throw new ScopeError(
        "io",
        "/proc",
        'handleCheck "proc" needs /proc/self/fd (Linux); use "auto" or "inode"',
      );
    }
    const hidden = (await hiddenReal).filter((real) => !readRoots.some((r) => isInside(real, r)));
    return new ScopedFs(readRoots, writeRoots, cwd, proc, hidden);
  }

  /** How a real path is shown to users and the model: relative to the cwd when inside it. */
  display(real: string): string {
    if (isInside(this.cwd, real)) return path.relative(this.cwd, real) || ".";
    return real;
  }

  /** Whether a real path lies inside the roots of `mode` (and in no hidden place). */
  contains(real: string, mode: AccessMode = "read"): boolean {
    return this.rootsFor(mode).some((r) => isInside(r, real)) && this.#hiddenHolding(real) === undefined;
  }

  /** A directory's entries without the hidden ones. */
  #visible(dirReal: string, entries: DirEntry[]): DirEntry[] {
    if (!this.hidden.some((h) => path.dirname(h) === dirReal)) return entries;
    return entries.filter((e) => !this.hidden.includes(path.join(dirReal, e.name)));
  }

  /** The hidden path holding `real`, if any. */
  #hiddenHolding(real: string): string | undefined {
    return this.hidden.find((h) => isInside(h, real));
  }

  /**
   * Resolves `input` for `mode` and checks containment of its real path.
   * Rejects with `ScopeError` (`invalid_path`, `out_of_scope`, `io`); a path
   * that does not exist resolves with `exists: false` (callers decide).
   */
  async resolve(input: string, mode: AccessMode = "read"): Promise<ResolvedPath> {
    if (typeof input !== "string" || input.length === 0) {
      throw new ScopeError(
        "invalid_path",
        String(input),
        "empty path: give a file path relative to the project",
      );
    }
    if (input.includes("\0")) {
      throw new ScopeError("invalid_path", input, `${JSON.stringify(input)} contains a NUL byte`);
    }
    const absolute = path.resolve(this.cwd, input);
    const { real, exists } = await this.realOrWouldBe(absolute, input);
    const roots = this.rootsFor(mode);
    if (!roots.some((r) => isInside(r, real))) {
      throw this.outOfScope(input, absolute, real, mode);
    }
    const hidden = this.#hiddenHolding(real);
    if (hidden !== undefined) {
      throw new ScopeError(
        "out_of_scope",
        input,
        hidden === real
          ? `${input} is private: this session's tools cannot open it`
          : `${input} is inside ${this.display(hidden)}, which is private: this session's tools cannot open it`,
      );
    }
    return { input, absolute, real, exists };
  }

  /** Opens a regular file for reading and verifies the handle is the checked, in-scope file. */
  async openRead(input: string): Promise<ScopedReadHandle> {
    const resolved = await this.resolve(input, "read");
    if (!resolved.exists) throw new ScopeError("not_found", input, `${input}: no such file or directory`);
    let handle: FileHandle;
    try {
      handle = await fsp.open(resolved.real, READ_FLAGS);
    } catch (error) {
      if (errnoOf(error) === "ELOOP") {
        throw new ScopeError(
          "out_of_scope",
          input,
          `${input} changed into a symbolic link while being opened`,
        );
      }
      throw scopeErrorFromOs(error, input, "open");
    }
    try {
      const stat = await handle.stat();
      await this.verifyHandle(handle, stat, resolved, "read");
      if (stat.isDirectory()) {
        throw new ScopeError(
          "invalid_path",
          input,
          `${input} is a directory; use list_dir to see its entries`,
        );
      }
      if (!stat.isFile()) throw new ScopeError("invalid_path", input, `${input} is not a regular file`);
      return { handle, path: resolved, stat, close: () => handle.close() };
    } catch (error) {
      await handle.close().catch(() => {});
      throw scopeErrorFromOs(error, input, "read");
    }
  }

  /** Reads a whole file (or its first `maxBytes`). */
  async readFile(
    input: string,
    options: { maxBytes?: number } = {},
  ): Promise<{ bytes: Buffer; size: number }> {
    const file = await this.openRead(input);
    try {
      const size = file.stat.size;
      const want = options.maxBytes === undefined ? size : Math.min(size, options.maxBytes);
      const bytes = await readUpTo(file.handle, want);
      return { bytes, size };
    } catch (error) {
      throw scopeErrorFromOs(error, input, "read");
    } finally {
      await file.close();
    }
  }

  /** Metadata of an in-scope path (symlinks followed). */
  async stat(input: string, mode: AccessMode = "read"): Promise<ScopedStat> {
    const resolved = await this.resolve(input, mode);
    if (!resolved.exists) throw new ScopeError("not_found", input, `${input}: no such file or directory`);
    try {
      const st = this.#proc ? await this.statVerified(resolved, mode) : await fsp.lstat(resolved.real);
      return {
        path: resolved,
        kind: kindOf(st),
        size: st.size,
        mtimeMs: st.mtimeMs,
        dev: st.dev,
        ino: st.ino,
      };
    } catch (error) {
      throw scopeErrorFromOs(error, input, "stat");
    }
  }

  /** fstat of a verified handle (files, directories, FIFOs); lstat for what cannot be opened (sockets). */
  private async statVerified(resolved: ResolvedPath, mode: AccessMode): Promise<Stats> {
    let handle: FileHandle;
    try {
      handle = await fsp.open(resolved.real, READ_FLAGS);
    } catch (error) {
      const errno = errnoOf(error);
      if (errno === "ELOOP") {
        throw new ScopeError(
          "out_of_scope",
          resolved.input,
          `${resolved.input} changed into a symbolic link`,
        );
      }
      if (errno === "ENXIO" || errno === "EACCES" || errno === "EPERM") return fsp.lstat(resolved.real);
      throw error;
    }
    try {
      const st = await handle.stat();
      await this.verifyHandle(handle, st, resolved, mode);
      return st;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** Entries of an in-scope directory, sorted by name. Symlinks are reported as `symlink`, not followed. */
  async readdir(input: string): Promise<{ path: ResolvedPath; entries: DirEntry[] }> {
    const resolved = await this.resolve(input, "read");
    if (!resolved.exists) throw new ScopeError("not_found", input, `${input}: no such file or directory`);
    try {
      if (this.#proc) {
        // List through a verified directory handle: exact, whatever is swapped meanwhile.
        const dir = await fsp
          .open(resolved.real, fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW)
          .catch((error) => {
            if (errnoOf(error) === "ENOTDIR")
              throw new ScopeError("invalid_path", input, `${input} is not a directory`);
            if (errnoOf(error) === "ELOOP")
              throw new ScopeError("out_of_scope", input, `${input} changed while being listed`);
            throw error;
          });
        try {
          await this.verifyHandle(dir, await dir.stat(), resolved, "read");
          const dirents = await fsp.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
          return { path: resolved, entries: this.#visible(resolved.real, sortEntries(dirents)) };
        } finally {
          await dir.close().catch(() => {});
        }
      }
      const before = await fsp.lstat(resolved.real);
      if (!before.isDirectory()) throw new ScopeError("invalid_path", input, `${input} is not a directory`);
      const dirents = await fsp.readdir(resolved.real, { withFileTypes: true });
      // The listing went through a path; make sure that path still named the checked directory.
      const after = await fsp.realpath(resolved.real);
      const afterStat = await fsp.lstat(after);
      if (!this.contains(after) || afterStat.ino !== before.ino || afterStat.dev !== before.dev) {
        throw new ScopeError("out_of_scope", input, `${input} changed while being listed`);
      }
      return { path: resolved, entries: this.#visible(resolved.real, sortEntries(dirents)) };
    } catch (error) {
      throw scopeErrorFromOs(error, input, "list");
    }
  }

  /**
   * Writes a file atomically (a temp file in the same directory, then rename)
   * inside a write root. Missing parents are created inside the scope; an
   * existing file keeps its mode. Returns the resolved path.
   */
  async writeFile(
    input: string,
    data: string | Uint8Array,
    options: WriteOptions = {},
  ): Promise<ResolvedPath> {
    const resolved = await this.resolve(input, "write");
    let mode = 0o666;
    if (resolved.exists) {
      const st = await fsp.stat(resolved.real).catch((error) => {
        throw scopeErrorFromOs(error, input, "write");
      });
      if (st.isDirectory())
        throw new ScopeError("invalid_path", input, `${input} is a directory, not a file`);
      if (!st.isFile()) throw new ScopeError("invalid_path", input, `${input} is not a regular file`);
      mode = st.mode & 0o7777;
    }
    const parent = path.dirname(resolved.real);
    const name = path.basename(resolved.real);
    const tempName = `.${name}.${randomBytes(6).toString("hex")}.yoi-tmp`;
    const createParents = options.createParents ?? true;
    if (this.#proc) {
      // Every step relative to the verified directory handle: no parent swap can redirect the write.
      const dir = await this.openDirAnchored(parent, input, createParents);
      const base = `/proc/self/fd/${dir.fd}`;
      let handle: FileHandle | undefined;
      try {
        handle = await fsp.open(`${base}/${tempName}`, TEMP_FLAGS, mode);
        await handle.writeFile(data);
        await handle.datasync();
        await handle.close();
        handle = undefined;
        await this.land(
          `${base}/${tempName}`,
          `${base}/${name}`,
          `${base}/.${name}.yoi-lock`,
          input,
          options.expect,
        );
        return { ...resolved, exists: true };
      } catch (error) {
        if (handle !== undefined) await handle.close().catch(() => {});
        await fsp.unlink(`${base}/${tempName}`).catch(() => {});
        if (ScopeError.isInstance(error)) throw error;
        throw scopeErrorFromOs(error, input, "write");
      } finally {
        await dir.close().catch(() => {});
      }
    }
    if (createParents) await this.ensureDir(parent, input);
    const temp = path.join(parent, tempName);
    let handle: FileHandle | undefined;
    try {
      handle = await fsp.open(temp, TEMP_FLAGS, mode);
      const st = await handle.stat();
      await this.verifyHandle(handle, st, { ...resolved, real: temp }, "write");
      await handle.writeFile(data);
      await handle.datasync();
      await handle.close();
      handle = undefined;
      await this.land(temp, resolved.real, path.join(parent, `.${name}.yoi-lock`), input, options.expect);
      return { ...resolved, exists: true };
    } catch (error) {
      if (handle !== undefined) await handle.close().catch(() => {});
      await fsp.unlink(temp).catch(() => {});
      if (ScopeError.isInstance(error)) throw error;
      if (errnoOf(error) === "ENOENT" && !createParents) {
        throw new ScopeError("not_found", input, `parent directory of ${input} does not exist`, {
          cause: error,
        });
      }
      throw scopeErrorFromOs(error, input, "write");
    }
  }

  /**
   * Moves the written temp file into place. Without an expectation: rename.
   * `"absent"`: link (fails with EEXIST if anything is there now), then drop
   * the temp name. A stat expectation: under the lock, check, then rename.
   */
  private async land(
    temp: string,
    dest: string,
    lock: string,
    input: string,
    expect: WriteOptions["expect"],
  ): Promise<void> {
    if (expect === undefined) {
      await fsp.rename(temp, dest);
      return;
    }
    if (expect === "absent") {
      try {
        await fsp.link(temp, dest);
      } catch (error) {
        if (errnoOf(error) === "EEXIST")
          throw new ScopeError(
            "conflict",
            input,
            `${input} was created by someone else while it was being written; read it before replacing it`,
          );
        throw error;
      }
      await fsp.unlink(temp);
      return;
    }
    const release = await acquireLock(lock, input);
    try {
      const now = await fsp.lstat(dest).catch(() => undefined);
      if (now === undefined || !now.isFile() || now.size !== expect.size || now.mtimeMs !== expect.mtimeMs)
        throw new ScopeError(
          "conflict",
          input,
          `${input} changed on disk while it was being written; read it again before changing it`,
        );
      await fsp.rename(temp, dest);
    } finally {
      await release();
    }
  }

  /** Creates a directory (and missing parents) inside a write root. */
  async mkdir(input: string): Promise<ResolvedPath> {
    const resolved = await this.resolve(input, "write");
    if (this.#proc) await (await this.openDirAnchored(resolved.real, input, true)).close();
    else await this.ensureDir(resolved.real, input);
    return { ...resolved, exists: true };
  }

  private rootsFor(mode: AccessMode): readonly string[] {
    return mode === "write" ? this.writeRoots : this.readRoots;
  }

  private outOfScope(input: string, absolute: string, real: string, mode: AccessMode): ScopeError {
    const roots = this.rootsFor(mode);
    const lexicallyInside = roots.some((r) => isInside(r, absolute));
    if (mode === "write" && this.contains(real, "read")) {
      const where =
        roots.length === 0 ? "nothing is writable in this session" : `writable: ${roots.join(", ")}`;
      return new ScopeError("out_of_scope", input, `${input} is read-only in this session (${where})`);
    }
    const where = roots.length === 0 ? "" : ` (allowed: ${roots.join(", ")})`;
    const why = lexicallyInside
      ? `${input} leads outside the scope through a symbolic link`
      : `${input} is outside the scope`;
    return new ScopeError("out_of_scope", input, `${why}${where}`);
  }

  /** realpath, or for a missing path the place it would be created (dangling links followed). */
  private async realOrWouldBe(absolute: string, input: string): Promise<{ real: string; exists: boolean }> {
    try {
      return { real: await fsp.realpath(absolute), exists: true };
    } catch (error) {
      const errno = errnoOf(error);
      if (errno !== "ENOENT" && errno !== "ENOTDIR") throw scopeErrorFromOs(error, input, "resolve");
    }
    return this.walk(absolute, input);
  }

  /** Component-by-component resolution that follows symlinks, including dangling ones. */
  private async walk(absolute: string, input: string): Promise<{ real: string; exists: boolean }> {
    let rest = absolute.split(path.sep).filter((p) => p !== "");
    let current = path.parse(absolute).root;
    let links = 0;
    while (rest.length > 0) {
      const name = rest.shift()!;
      if (name === ".") continue;
      if (name === "..") {
        current = path.dirname(current);
        continue;
      }
      const next = path.join(current, name);
      let st: Stats;
      try {
        st = await fsp.lstat(next);
      } catch (error) {
        const errno = errnoOf(error);
        if (errno === "ENOENT" || errno === "ENOTDIR")
          return { real: path.join(next, ...rest), exists: false };
        throw scopeErrorFromOs(error, input, "resolve");
      }
      if (st.isSymbolicLink()) {
        links += 1;
        if (links > MAX_SYMLINKS) {
          throw new ScopeError("invalid_path", input, `${input}: too many levels of symbolic links`);
        }
        const target = await fsp.readlink(next).catch((error) => {
          throw scopeErrorFromOs(error, input, "resolve");
        });
        rest = [...target.split(path.sep).filter((p) => p !== ""), ...rest];
        if (path.isAbsolute(target)) current = path.parse(target).root;
        continue;
      }
      if (rest.length > 0 && !st.isDirectory()) return { real: path.join(next, ...rest), exists: false };
      current = next;
    }
    return { real: current, exists: true };
  }

  /** Checks that an open handle names an in-scope file (defeats a link swapped in after the check). */
  private async verifyHandle(handle: FileHandle, stat: Stats, resolved: ResolvedPath, mode: AccessMode) {
    const input = resolved.input;
    if (this.#proc) {
      let opened: string;
      try {
        opened = await handlePath(handle);
      } catch (error) {
        throw scopeErrorFromOs(error, input, "verify");
      }
      if (!this.contains(opened, mode)) {
        throw new ScopeError(
          "out_of_scope",
          input,
          `${input} changed to lead outside the scope while being opened`,
        );
      }
      return;
    }
    // No /proc: the path must resolve inside, to the handle's inode, twice in a row. Path-based, so
    // only best-effort against a directory swapped back and forth at the right instants (see `handleCheck`).
    let first: string;
    let second: string;
    let st: Stats;
    try {
      first = await fsp.realpath(resolved.real);
      st = await fsp.lstat(first);
      second = await fsp.realpath(resolved.real);
    } catch (error) {
      throw scopeErrorFromOs(error, input, "open");
    }
    if (first !== second || !this.contains(first, mode) || st.dev !== stat.dev || st.ino !== stat.ino) {
      throw new ScopeError(
        "out_of_scope",
        input,
        `${input} changed to lead outside the scope while being opened`,
      );
    }
  }

  /** The write root holding `dirReal` and the names leading from it down to `dirReal`. */
  private writeRootSteps(dirReal: string, input: string): { root: string; parts: string[] } {
    const root = this.writeRoots.find((r) => isInside(r, dirReal));
    if (root === undefined)
      throw new ScopeError("out_of_scope", input, `${input} is outside the writable scope`);
    const parts = path
      .relative(root, dirReal)
      .split(path.sep)
      .filter((p) => p !== "");
    return { root, parts };
  }

  /**
   * Opens the directory `dirReal` one component at a time from its write
   * root, each step relative to the verified handle of the previous one
   * (`/proc/self/fd/<n>/<name>` with O_NOFOLLOW: an `openat` walk), creating
   * missing components when `create`. No swap of a parent can redirect it.
   */
  private async openDirAnchored(dirReal: string, input: string, create: boolean): Promise<FileHandle> {
    const { root, parts } = this.writeRootSteps(dirReal, input);
    let dir: FileHandle;
    try {
      dir = await fsp.open(root, fsc.O_RDONLY | fsc.O_DIRECTORY);
      if (!this.contains(await handlePath(dir), "write")) {
        await dir.close();
        throw new ScopeError("out_of_scope", input, `the write root of ${input} moved outside the scope`);
      }
    } catch (error) {
      throw scopeErrorFromOs(error, input, "open the directory of");
    }
    try {
      for (const part of parts) {
        const child = `/proc/self/fd/${dir.fd}/${part}`;
        if (create) {
          try {
            await fsp.mkdir(child);
          } catch (error) {
            if (errnoOf(error) !== "EEXIST") throw error;
          }
        }
        let next: FileHandle;
        try {
          next = await fsp.open(child, fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW);
        } catch (error) {
          const errno = errnoOf(error);
          if (errno === "ELOOP") {
            throw new ScopeError(
              "out_of_scope",
              input,
              `a parent of ${input} is (or became) a symbolic link`,
            );
          }
          if (errno === "ENOTDIR") {
            throw new ScopeError("invalid_path", input, `a parent of ${input} is a file, not a directory`);
          }
          throw error;
        }
        await dir.close();
        dir = next;
      }
      return dir;
    } catch (error) {
      await dir.close().catch(() => {});
      if (errnoOf(error) === "ENOENT") {
        throw new ScopeError("not_found", input, `parent directory of ${input} does not exist`, {
          cause: error,
        });
      }
      throw scopeErrorFromOs(error, input, "create directories for");
    }
  }

  /** Creates `dirReal` and its missing parents one level at a time, refusing links and anything outside. */
  private async ensureDir(dirReal: string, input: string): Promise<void> {
    const { root, parts } = this.writeRootSteps(dirReal, input);
    let current = root;
    for (const part of parts) {
      current = path.join(current, part);
      let st: Stats | undefined;
      try {
        st = await fsp.lstat(current);
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw scopeErrorFromOs(error, input, "create directories for");
      }
      if (st === undefined) {
        try {
          await fsp.mkdir(current);
        } catch (error) {
          if (errnoOf(error) !== "EEXIST") throw scopeErrorFromOs(error, input, "create directories for");
        }
        st = await fsp.lstat(current).catch((error) => {
          throw scopeErrorFromOs(error, input, "create directories for");
        });
      }
      if (st.isSymbolicLink()) {
        throw new ScopeError("out_of_scope", input, `a parent of ${input} changed into a symbolic link`);
      }
      if (!st.isDirectory()) {
        throw new ScopeError("invalid_path", input, `a parent of ${input} is a file, not a directory`);
      }
    }
  }
}

function sortEntries(dirents: ReadonlyArray<{ name: string } & Parameters<typeof kindOf>[0]>): DirEntry[] {
  return dirents
    .map((d): DirEntry => ({ name: d.name, kind: kindOf(d) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function kindOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryKind {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  return "other";
}

/** Reads up to `want` bytes from the start of a handle (fewer at EOF). */
export async function readUpTo(handle: FileHandle, want: number, position = 0): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(want);
  let filled = 0;
  while (filled < want) {
    const { bytesRead } = await handle.read(buf, filled, want - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buf.subarray(0, filled);
}

/** Takes `lock` (O_EXCL), waiting for another holder up to LOCK_WAIT_MS; returns the release function. */
async function acquireLock(lock: string, input: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await fsp.open(lock, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600);
      await handle.close();
      return () => fsp.unlink(lock).catch(() => {});
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
    const held = await fsp.lstat(lock).catch(() => undefined);
    if (held !== undefined && Date.now() - held.mtimeMs > LOCK_STALE_MS) {
      await fsp.unlink(lock).catch(() => {});
      continue;
    }
    if (Date.now() > deadline)
      throw new ScopeError("conflict", input, `${input} is being written by another yoi process; try again`);
    await delay(25);
  }
}
