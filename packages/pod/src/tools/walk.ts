import * as path from "node:path";
import { ScopeError } from "../scope-error.ts";
import type { ScopedFs } from "../scoped-fs.ts";

/** Directory names walks skip unless the walk starts inside them. */
export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set([".git", ".hg", ".svn", "node_modules"]);

export interface WalkEntry {
  /** Path relative to the walk's base, with `/` separators. */
  rel: string;
  /** Real path (of the link itself for an in-scope symlink to a file). */
  abs: string;
  kind: "file" | "directory";
}

export interface WalkOptions {
  signal?: AbortSignal;
  /** Stop after visiting this many entries. Default 200,000. */
  maxVisited?: number;
  skipDirs?: ReadonlySet<string>;
}

export interface WalkStats {
  visited: number;
  /** Whether the walk stopped at `maxVisited`. */
  capped: boolean;
}

/**
 * Walks a directory through ScopedFs, depth-first in name order. Symlinked
 * directories are not descended (no loops, no escapes); symlinked files are
 * yielded only when they resolve inside the scope.
 */
export async function* walk(
  fs: ScopedFs,
  baseReal: string,
  options: WalkOptions = {},
  stats: WalkStats = { visited: 0, capped: false },
): AsyncGenerator<WalkEntry> {
  const maxVisited = options.maxVisited ?? 200_000;
  const skip = options.skipDirs ?? DEFAULT_SKIP_DIRS;
  const stack: Array<{ abs: string; rel: string }> = [{ abs: baseReal, rel: "" }];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const dir = stack.pop()!;
    let entries: Awaited<ReturnType<ScopedFs["readdir"]>>["entries"];
    try {
      entries = (await fs.readdir(dir.abs)).entries;
    } catch (error) {
      // A directory that vanished or turned out of scope mid-walk is skipped, not fatal.
      if (error instanceof ScopeError && dir.rel !== "") continue;
      throw error;
    }
    const subdirs: Array<{ abs: string; rel: string }> = [];
    for (const entry of entries) {
      stats.visited += 1;
      if (stats.visited > maxVisited) {
        stats.capped = true;
        return;
      }
      const abs = path.join(dir.abs, entry.name);
      const rel = dir.rel === "" ? entry.name : `${dir.rel}/${entry.name}`;
      if (entry.kind === "directory") {
        if (!skip.has(entry.name)) subdirs.push({ abs, rel });
        yield { rel, abs, kind: "directory" };
      } else if (entry.kind === "file") {
        yield { rel, abs, kind: "file" };
      } else if (entry.kind === "symlink") {
        try {
          const st = await fs.stat(abs);
          if (st.kind === "file") yield { rel, abs, kind: "file" };
        } catch {
          // Out of scope, dangling or a loop: invisible to walks.
        }
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}
