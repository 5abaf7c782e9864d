/**
 * Checks that the repository's pointers to its design documentation hold
 * (`pnpm check`):
 *
 * - no file cites a design by the number of a document outside the
 *   repository (the word "seed" or "seeds" followed by a number from 000 to
 *   004, with spaces, hyphens, brackets or a comment's line break between),
 *   in its text or in its file name: the designs are explained in docs/, and
 *   a clone holds nothing else;
 * - every pointer into docs/ names a page that exists and, with `#section`,
 *   a heading of that page: `docs/<page>.md#<section>` in code and text
 *   (read from the repository root), and relative Markdown links in `.md`
 *   files (read from the file's folder), so links between the docs pages
 *   and from the READMEs are checked too.
 *
 *   node scripts/check-docs.ts [paths...]
 *     (default: packages apps scripts docs .changeset README.md CONTRIBUTING.md)
 *
 * Exits 1 and lists every violation.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";

const repoRoot = join(import.meta.dirname, "..");

export const DEFAULT_PATHS = [
  "packages",
  "apps",
  "scripts",
  "docs",
  ".changeset",
  "README.md",
  "CONTRIBUTING.md",
] as const;

export interface DocsResult {
  ok: boolean;
  /** One line per violation. */
  violations: string[];
}

const TEXT_EXTENSIONS = new Set([
  ".ts",
  ".mts",
  ".cts",
  ".tsx",
  ".js",
  ".mjs",
  ".cjs",
  ".md",
  ".json",
  ".jsonc",
  ".yaml",
  ".yml",
]);
const SKIPPED_DIRS = new Set(["node_modules", "dist", "coverage", ".turbo", ".git"]);
/** Recorded provider streams and the like can be large; nothing in them is prose. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

/**
 * "seed" or "seeds", then only spaces, line breaks, comment marks, brackets
 * and separators, then a two- or three-digit number from 00 to 04 (a number
 * split from the word by a comment's line break included). A colon or any
 * other number ends it: a random generator's seed is no citation.
 */
const SEED_CITATION = /\bseeds?[\s*/#_(-]*0?0[0-4](?!\d)/gi;
const SEED_FILE_NAME = /seeds?[-_. ]?0?0[0-4](?!\d)/i;
/** `docs/<path>.md` with an optional `#section`, as code comments and text name a page. */
const DOCS_POINTER = /(?<![\w./-])docs\/[\w./-]*?\.md(?:#[\w-]+)?/g;
/** A Markdown link or image target: `](target)` or `](target "title")`. */
const MARKDOWN_LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Anchors of every heading of a Markdown text (fenced code skipped; repeats get `-1`, `-2`, ...). */
export function markdownAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark !== undefined) {
      if (fence === undefined) fence = fenceMark;
      else if (fence === fenceMark) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = headingAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function listFiles(root: string, path: string, out: string[]): void {
  const full = join(root, path);
  if (!existsSync(full)) return;
  const stat = statSync(full);
  if (stat.isFile()) {
    if (TEXT_EXTENSIONS.has(extname(path)) && stat.size <= MAX_FILE_BYTES) out.push(path);
    return;
  }
  if (!stat.isDirectory()) return;
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_DIRS.has(entry.name)) continue;
    if (entry.isDirectory() || entry.isFile()) listFiles(root, join(path, entry.name), out);
  }
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** Checks `paths` (relative to `root`; defaults to DEFAULT_PATHS) and returns every violation. */
export function checkDocs(paths: readonly string[] = DEFAULT_PATHS, root: string = repoRoot): DocsResult {
  const files: string[] = [];
  for (const path of paths) listFiles(root, path, files);
  const violations: string[] = [];
  const anchorsOf = new Map<string, Set<string> | undefined>();
  const anchors = (target: string): Set<string> | undefined => {
    if (!anchorsOf.has(target)) {
      const full = join(root, target);
      anchorsOf.set(target, existsSync(full) ? markdownAnchors(readFileSync(full, "utf8")) : undefined);
    }
    return anchorsOf.get(target);
  };
  /** `target` is repository-relative, with `/` separators. */
  const checkTarget = (file: string, line: number, written: string, target: string, anchor: string) => {
    if (target.startsWith("..") || !existsSync(join(root, target))) {
      violations.push(`error docs: ${file}:${line}: ${written} leads nowhere (no file ${target})`);
      return;
    }
    if (anchor === "" || !target.endsWith(".md")) return;
    const known = anchors(target);
    if (known !== undefined && !known.has(anchor)) {
      violations.push(
        `error docs: ${file}:${line}: ${written}: ${target} has no section "#${anchor}" (it has ${[...known].map((a) => `#${a}`).join(", ") || "no headings"})`,
      );
    }
  };

  for (const file of files) {
    const shown = file.split(sep).join("/");
    if (SEED_FILE_NAME.test(file.split(sep).pop() ?? "")) {
      violations.push(
        `error docs: ${shown}: the file name cites a design by an outside document's number; name it after what it holds`,
      );
    }
    const text = readFileSync(join(root, file), "utf8");
    for (const match of text.matchAll(SEED_CITATION)) {
      const cited = match[0].replace(/\s+/g, " ");
      violations.push(
        `error docs: ${shown}:${lineOf(text, match.index)}: "${cited}" cites a design by an outside document's number; point at its page in docs/ (docs/README.md lists them) or say it in words`,
      );
    }
    const markdown = file.endsWith(".md");
    if (markdown) {
      for (const match of text.matchAll(MARKDOWN_LINK)) {
        const link = match[1] as string;
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith("//")) continue; // a URL
        const [pathPart = "", anchor = ""] = link.split("#", 2);
        const target =
          pathPart === ""
            ? shown
            : relative(root, resolve(root, dirname(file), decodeURIComponent(pathPart)))
                .split(sep)
                .join("/");
        checkTarget(shown, lineOf(text, match.index), link, target, anchor);
      }
    } else {
      for (const match of text.matchAll(DOCS_POINTER)) {
        const [target = "", anchor = ""] = match[0].split("#", 2);
        checkTarget(shown, lineOf(text, match.index), match[0], target, anchor);
      }
    }
  }
  return { ok: violations.length === 0, violations };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const result = checkDocs(args.length > 0 ? args : DEFAULT_PATHS);
  for (const line of result.violations) console.error(line);
  if (!result.ok) {
    console.error(`check-docs: ${result.violations.length} violation(s)`);
    process.exit(1);
  }
  console.log("check-docs: no design cited by an outside number; every docs/ pointer leads to its page");
}
