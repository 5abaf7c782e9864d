import * as path from "node:path";
import { ScopeError } from "../fs/scope-error.ts";
import { type DirEntry, isInside, type ScopedFs } from "../fs/scoped-fs.ts";
import { type IgnoreRule, isIgnored, parseGitignore } from "./gitignore.ts";

/** Version-control directories: never walked into. */
export const VCS_DIRS: ReadonlySet<string> = new Set([".git", ".hg", ".svn"]);
/** Directory names walks skip unless the walk starts inside them. */
export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set([...VCS_DIRS, "node_modules"]);

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
  /** Honour `.gitignore` files (in the walked tree and above it, up to its scope root). Default false. */
  gitignore?: boolean;
}

/** Largest .gitignore read. */
const GITIGNORE_MAX_BYTES = 256 * 1024;

async function readIgnore(fs: ScopedFs, dirAbs: string, base: string, prefix: string): Promise<IgnoreRule[]> {
  try {
    const { bytes } = await fs.readFile(path.join(dirAbs, ".gitignore"), { maxBytes: GITIGNORE_MAX_BYTES });
    return parseGitignore(bytes.toString("utf8"), base, prefix);
  } catch {
    return []; // none, unreadable or out of scope: no rules
  }
}

/** Rules of the .gitignore files between the scope root holding `baseReal` and `baseReal` itself (exclusive). */
async function ancestorRules(fs: ScopedFs, baseReal: string): Promise<IgnoreRule[]> {
  const root = fs.readRoots.filter((r) => isInside(r, baseReal)).sort((a, b) => a.length - b.length)[0];
  if (root === undefined || root === baseReal) return [];
  const rules: IgnoreRule[] = [];
  const parts = path.relative(root, baseReal).split(path.sep);
  let dir = root;
  for (let i = 0; i < parts.length; i++) {
    const prefix = parts.slice(i).join("/");
    rules.push(...(await readIgnore(fs, dir, "", prefix)));
    dir = path.join(dir, parts[i]!);
  }
  return rules;
}

export interface WalkStats {
  visited: number;
  /** Whether the walk stopped at `maxVisited`. */
  capped: boolean;
}

/** Directories listed ahead of the walk, at most: their reads overlap instead of queueing one by one. */
const LIST_AHEAD = 16;

interface PendingDir {
  abs: string;
  rel: string;
  rules: IgnoreRule[];
  /** The listing and the directory's own rules, once started. */
  listing?: Promise<{ entries: DirEntry[]; rules: IgnoreRule[] }>;
}

/**
 * Walks a directory through ScopedFs, depth-first in name order. Symlinked
 * directories are not descended (no loops, no escapes); symlinked files are
 * yielded only when they resolve inside the scope. The directories next in
 * line are listed ahead (up to LIST_AHEAD at once): each listing is several
 * checked reads, and a tree of many small directories would otherwise wait
 * on them one at a time.
 */
export async function* walk(
  fs: ScopedFs,
  baseReal: string,
  options: WalkOptions = {},
  stats: WalkStats = { visited: 0, capped: false },
): AsyncGenerator<WalkEntry> {
  const maxVisited = options.maxVisited ?? 200_000;
  const skip = options.skipDirs ?? DEFAULT_SKIP_DIRS;
  const useIgnore = options.gitignore ?? false;
  const list = async (dir: PendingDir) => {
    const { entries } = await fs.readdir(dir.abs);
    let rules = dir.rules;
    if (useIgnore && entries.some((e) => e.name === ".gitignore" && e.kind === "file")) {
      rules = [...rules, ...(await readIgnore(fs, dir.abs, dir.rel, ""))];
    }
    return { entries, rules };
  };
  const start = (dir: PendingDir) => {
    if (dir.listing) return;
    dir.listing = list(dir);
    // Handled when the walk reaches it; one it never reaches (stopped early) must not be an unhandled rejection.
    dir.listing.catch(() => {});
  };
  const stack: PendingDir[] = [
    { abs: baseReal, rel: "", rules: useIgnore ? await ancestorRules(fs, baseReal) : [] },
  ];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const dir = stack.pop()!;
    start(dir);
    // The next in line (the top of the stack) are listed meanwhile.
    for (let i = stack.length - 1; i >= Math.max(0, stack.length - LIST_AHEAD); i--) start(stack[i]!);
    let entries: DirEntry[];
    let rules: IgnoreRule[];
    try {
      ({ entries, rules } = await dir.listing!);
    } catch (error) {
      // A directory that vanished or turned out of scope mid-walk is skipped, not fatal.
      if (ScopeError.isInstance(error) && dir.rel !== "") continue;
      throw error;
    }
    const subdirs: PendingDir[] = [];
    for (const entry of entries) {
      stats.visited += 1;
      if (stats.visited > maxVisited) {
        stats.capped = true;
        return;
      }
      const abs = path.join(dir.abs, entry.name);
      const rel = dir.rel === "" ? entry.name : `${dir.rel}/${entry.name}`;
      if (rules.length > 0 && entry.kind !== "symlink" && isIgnored(rules, rel, entry.kind === "directory"))
        continue;
      if (entry.kind === "directory") {
        if (!skip.has(entry.name)) subdirs.push({ abs, rel, rules });
        yield { rel, abs, kind: "directory" };
      } else if (entry.kind === "file") {
        yield { rel, abs, kind: "file" };
      } else if (entry.kind === "symlink") {
        try {
          const st = await fs.stat(abs);
          if (st.kind === "file" && !(rules.length > 0 && isIgnored(rules, rel, false))) {
            yield { rel, abs, kind: "file" };
          }
        } catch {
          // Out of scope, dangling or a loop: invisible to walks.
        }
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}
