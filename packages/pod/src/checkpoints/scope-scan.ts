/**
 * What bash touched: a scan of the writable scope before and after a
 * command. The scope's files (not gitignored, not in `.git` or
 * `node_modules`) are kept as last seen, bytes included up to a budget, so
 * a file bash changes or deletes can be put back; only files whose size or
 * mtime moved are read again.
 */
import { lstat } from "node:fs/promises";
import type { FileState } from "@yoi/worker-persistence";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { walk } from "../tools/walk.ts";
import { CHECKPOINT_MAX_FILE_BYTES, type ObservedFile, observeFile } from "./file-state.ts";

/** Limits of the bash scan. */
export interface ScanLimits {
  /** Most bytes of file content kept between scans. Default 64 MiB. */
  maxBytes?: number;
  /** Largest single file kept. Default 8 MiB. */
  maxFileBytes?: number;
  /** Most files scanned. Default 50,000. */
  maxFiles?: number;
}

interface Seen extends ObservedFile {
  size: number;
  mtimeMs: number;
}

/** One file a command changed: its state before and after. */
export interface ScannedChange {
  path: string;
  before: ObservedFile;
  after: ObservedFile;
}

export class ScopeScanner {
  readonly #fs: ScopedFs;
  readonly #maxBytes: number;
  readonly #maxFileBytes: number;
  readonly #maxFiles: number;
  #seen: Map<string, Seen> | undefined;
  #keptBytes = 0;

  constructor(fs: ScopedFs, limits: ScanLimits = {}) {
    this.#fs = fs;
    this.#maxBytes = limits.maxBytes ?? 64 * 1024 * 1024;
    this.#maxFileBytes = limits.maxFileBytes ?? CHECKPOINT_MAX_FILE_BYTES;
    this.#maxFiles = limits.maxFiles ?? 50_000;
  }

  /** Brings the kept picture up to date (before a command runs). */
  async refresh(): Promise<void> {
    await this.scan();
  }

  /** Scans the scope; returns what changed since the last scan and keeps the new picture. */
  async scan(): Promise<ScannedChange[]> {
    const previous = this.#seen;
    const next = new Map<string, Seen>();
    const changes: ScannedChange[] = [];
    // List first (one readdir a directory), then stat in parallel: a few
    // thousand sequential stats would cost more than the command.
    const paths: string[] = [];
    for (const root of this.#fs.writeRoots) {
      for await (const entry of walk(this.#fs, root, { gitignore: true })) {
        if (entry.kind !== "file") continue;
        if (paths.length >= this.#maxFiles) break;
        paths.push(entry.abs);
      }
    }
    const infos = await statAll(paths);
    for (let i = 0; i < paths.length; i++) {
      const info = infos[i];
      if (info === undefined) continue; // gone between the listing and the stat
      const file = paths[i] as string;
      const old = previous?.get(file);
      if (old && old.size === info.size && old.mtimeMs === info.mtimeMs) {
        next.set(file, old);
        continue;
      }
      const seen = await this.#read(file, info.size, info.mtimeMs, old);
      if (seen === undefined) continue;
      next.set(file, seen);
      if (previous !== undefined && !same(old?.state, seen.state)) {
        changes.push({ path: file, before: old ?? { state: { kind: "absent" } }, after: seen });
      }
    }
    if (previous !== undefined) {
      for (const [path, old] of previous) {
        if (next.has(path)) continue;
        // Not seen: deleted, or now ignored/over the cap. Only a real deletion counts.
        const exists = await lstat(path).then(
          () => true,
          () => false,
        );
        if (exists) next.set(path, old);
        else {
          this.#release(old);
          changes.push({ path, before: old, after: { state: { kind: "absent" } } });
        }
      }
    }
    this.#seen = next;
    return changes;
  }

  /** Tells the scanner a tool changed `path` to `observed` (so the next scan does not report it again). */
  note(path: string, observed: ObservedFile, size: number, mtimeMs: number): void {
    if (this.#seen === undefined) return;
    const old = this.#seen.get(path);
    if (old) this.#release(old);
    if (observed.state.kind === "absent") {
      this.#seen.delete(path);
      return;
    }
    this.#seen.set(path, this.#budget({ ...observed, size, mtimeMs }));
  }

  async #read(path: string, size: number, mtimeMs: number, old: Seen | undefined): Promise<Seen | undefined> {
    if (old) this.#release(old);
    let observed: ObservedFile;
    try {
      observed = await observeFile(this.#fs, path, this.#maxFileBytes);
    } catch {
      return undefined; // unreadable (permissions, a FIFO): not tracked
    }
    return this.#budget({ ...observed, size, mtimeMs });
  }

  #budget(seen: Seen): Seen {
    if (seen.bytes === undefined) return seen;
    if (this.#keptBytes + seen.bytes.length > this.#maxBytes) {
      const state: FileState =
        seen.state.kind === "file"
          ? {
              kind: "unsaved",
              sha256: seen.state.sha256,
              size: seen.state.size,
              reason: "over the checkpoint budget",
            }
          : seen.state;
      return { state, size: seen.size, mtimeMs: seen.mtimeMs };
    }
    this.#keptBytes += seen.bytes.length;
    return seen;
  }

  #release(seen: Seen): void {
    if (seen.bytes !== undefined) this.#keptBytes -= seen.bytes.length;
  }
}

const STAT_PARALLEL = 64;

/** lstat of each path (undefined where it failed), at most STAT_PARALLEL at a time. */
async function statAll(paths: readonly string[]): Promise<({ size: number; mtimeMs: number } | undefined)[]> {
  const out: ({ size: number; mtimeMs: number } | undefined)[] = new Array(paths.length);
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const i = next++;
      out[i] = await lstat(paths[i] as string).then(
        (info) => ({ size: info.size, mtimeMs: info.mtimeMs }),
        () => undefined,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAT_PARALLEL, paths.length) }, worker));
  return out;
}

function same(a: FileState | undefined, b: FileState): boolean {
  if (a === undefined) return false;
  if (a.kind === "absent" || b.kind === "absent") return a.kind === b.kind;
  return a.sha256 === b.sha256;
}
