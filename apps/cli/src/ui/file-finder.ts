/**
 * The `@` file finder: as `@partial` is typed, the files and directories
 * of the working directory whose path matches it fuzzily (the letters in
 * order, anywhere), best first. The tree is walked through the pod's
 * ScopedFs walker with `.gitignore` honoured, so nothing outside the scope
 * and nothing ignored is offered; the walk is kept for a few seconds and
 * redone in the background after that. Among the best matches, files
 * changed recently rank higher.
 */
import { type ScopedFs, type WalkEntry, walk } from "@yoi/pod";
import type { Menu, MenuItem } from "./line-editor.ts";

/** Entries a walk collects at most (a huge tree is cut, not waited on). */
const MAX_ENTRIES = 50_000;
/** How long a walk's result is used before a new one is started. */
const FRESH_MS = 10_000;
/** Best matches that get their modification time looked up for ranking. */
const RANKED = 40;
/** Items the menu offers. */
const SHOWN = 30;

/**
 * How well `query` matches `path`: undefined when its characters are not
 * all there in order; higher is better. Matches at the start of a path
 * segment or a word, runs of consecutive characters, the query as one
 * piece and matches in the file's own name count most; long paths a little
 * less.
 */
export function fuzzyScore(query: string, path: string): number | undefined {
  const q = query.toLowerCase();
  const p = path.toLowerCase();
  if (q === "") return -p.length / 10;
  const name = p.replace(/\/$/, "");
  const base = name.lastIndexOf("/") + 1;
  let score = 0;
  let from = 0;
  let prev = -2;
  for (const ch of q) {
    const at = p.indexOf(ch, from);
    if (at === -1) return undefined;
    score += 1;
    if (at === prev + 1) score += 5;
    if (at === 0 || "/._- ".includes(p[at - 1] ?? "")) score += 8;
    if (at >= base) score += 2;
    prev = at;
    from = at + 1;
  }
  const whole = p.lastIndexOf(q);
  if (whole !== -1) {
    score += 20;
    if (whole >= base) score += 15;
    if (whole === base) score += 10;
  }
  return score - p.length / 10;
}

/** Points for a file changed within the last hour, day, week. */
function recencyBonus(mtimeMs: number, now: number): number {
  const age = now - mtimeMs;
  if (age < 3_600_000) return 12;
  if (age < 86_400_000) return 6;
  if (age < 7 * 86_400_000) return 2;
  return 0;
}

/** How a path is written as a ref: quoted when it holds whitespace. */
function refFor(rel: string): string {
  return /\s/.test(rel) ? `@"${rel}"` : `@${rel}`;
}

export class FileFinder {
  readonly #fs: ScopedFs;
  #entries: WalkEntry[] | undefined;
  #walking: Promise<WalkEntry[]> | undefined;
  #walkedAt = 0;
  readonly #mtimes = new Map<string, number>();

  constructor(fs: ScopedFs) {
    this.#fs = fs;
  }

  /** The walk's entries: the kept ones while fresh, else a new walk (the old ones meanwhile, when there are any). */
  async #list(): Promise<WalkEntry[]> {
    const stale = Date.now() - this.#walkedAt > FRESH_MS;
    if (stale && this.#walking === undefined) {
      this.#walking = this.#walk().finally(() => {
        this.#walking = undefined;
      });
    }
    if (this.#entries !== undefined) return this.#entries;
    return this.#walking ?? [];
  }

  async #walk(): Promise<WalkEntry[]> {
    const entries: WalkEntry[] = [];
    try {
      for await (const entry of walk(this.#fs, this.#fs.cwd, {
        gitignore: true,
        maxVisited: MAX_ENTRIES * 2,
      })) {
        entries.push(entry);
        if (entries.length >= MAX_ENTRIES) break;
      }
    } catch {
      // An unreadable tree offers what was found before the failure.
    }
    this.#entries = entries;
    this.#walkedAt = Date.now();
    this.#mtimes.clear();
    return entries;
  }

  async #mtime(entry: WalkEntry): Promise<number> {
    const known = this.#mtimes.get(entry.abs);
    if (known !== undefined) return known;
    const mtime = await this.#fs.stat(entry.abs).then(
      (st) => st.mtimeMs,
      () => 0,
    );
    this.#mtimes.set(entry.abs, mtime);
    return mtime;
  }

  /** The best matches for `query` (the text after `@`), best first. */
  async find(query: string, now = Date.now()): Promise<MenuItem[]> {
    const entries = await this.#list();
    const scored: { entry: WalkEntry; score: number }[] = [];
    for (const entry of entries) {
      const shown = entry.kind === "directory" ? `${entry.rel}/` : entry.rel;
      // Without a query: the top level only, as a listing would.
      if (query === "" && entry.rel.includes("/")) continue;
      const score = fuzzyScore(query, shown);
      if (score !== undefined) scored.push({ entry, score });
    }
    scored.sort((a, b) => b.score - a.score || a.entry.rel.localeCompare(b.entry.rel));
    const top = scored.slice(0, RANKED);
    const ranked = await Promise.all(
      top.map(async ({ entry, score }) => ({
        entry,
        score: entry.kind === "file" ? score + recencyBonus(await this.#mtime(entry), now) : score,
      })),
    );
    ranked.sort((a, b) => b.score - a.score || a.entry.rel.localeCompare(b.entry.rel));
    return ranked
      .slice(0, SHOWN)
      .map(({ entry }) =>
        entry.kind === "directory"
          ? { value: refFor(`${entry.rel}/`), label: `${entry.rel}/` }
          : { value: `${refFor(entry.rel)} `, label: entry.rel },
      );
  }

  /** The menu for the `@ref` being typed before the cursor, if one is. */
  async menu(text: string, cursor: number): Promise<Menu | undefined> {
    const before = text.slice(0, cursor);
    const at = /(?:^|\s)@([^\s"]*)$/.exec(before);
    if (!at) return undefined;
    const partial = at[1] ?? "";
    // `@server:uri` is an MCP resource, `@../x` and `@/x` lie outside the walk: Tab completes those.
    if (
      partial.includes(":") ||
      partial.startsWith("/") ||
      partial.startsWith("..") ||
      partial.startsWith("\\")
    )
      return undefined;
    const items = await this.find(partial);
    return { from: cursor - partial.length - 1, items };
  }
}
