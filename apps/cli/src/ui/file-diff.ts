/**
 * Coloured unified diffs of what an edit or write changed (jsdiff's
 * structured patch, drawn with line numbers), collapsed past a number of
 * lines; and the snapshot of a file taken just before a tool changes it.
 * jsdiff is imported lazily with the rest of the UI's heavy modules.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";
import { structuredPatch } from "diff";
import type { Style } from "../style.ts";
import { sanitize } from "../terminal-text.ts";

/** Files larger than this are not snapshotted (no diff is shown for them). */
const SNAPSHOT_MAX_BYTES = 1024 * 1024;

/**
 * The text of `file` (relative to `root`) now, or undefined when it does not
 * exist, is not a regular file, is too large, or resolves outside `root`
 * (a snapshot never reads what the session may not).
 */
export function snapshotFile(root: string, file: string): string | undefined {
  try {
    const realRoot = realpathSync(root);
    const real = realpathSync(path.resolve(root, file));
    const rel = path.relative(realRoot, real);
    if (rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    const info = statSync(real);
    if (!info.isFile() || info.size > SNAPSHOT_MAX_BYTES) return undefined;
    const text = readFileSync(real, "utf8");
    return text.includes("\u0000") ? undefined : text;
  } catch {
    return undefined;
  }
}

export interface DiffView {
  /** Lines to print (styled). */
  lines: string[];
  added: number;
  removed: number;
  /** Lines left out by the collapse. */
  hidden: number;
}

/** The diff of `before` → `after`, at most `maxLines` lines of it (the rest counted). */
export function renderDiff(before: string, after: string, style: Style, maxLines: number): DiffView {
  // A file's text and an edit's are shown, never acted on by the terminal.
  const patch = structuredPatch("a", "b", sanitize(before), sanitize(after), undefined, undefined, {
    context: 2,
  });
  const all: string[] = [];
  let added = 0;
  let removed = 0;
  const width = String(Math.max(1, ...patch.hunks.map((h) => h.newStart + h.newLines))).length;
  for (const [i, hunk] of patch.hunks.entries()) {
    if (i > 0) all.push(style.dim(`${" ".repeat(width)}  ⋮`));
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    for (const line of hunk.lines) {
      const mark = line[0];
      const body = line.slice(1);
      if (mark === "\\") continue; // "\ No newline at end of file"
      if (mark === "+") {
        added++;
        all.push(style.green(`${String(newNo++).padStart(width)} + ${body}`));
      } else if (mark === "-") {
        removed++;
        all.push(style.red(`${String(oldNo++).padStart(width)} - ${body}`));
      } else {
        oldNo++;
        all.push(style.dim(`${String(newNo++).padStart(width)}   ${body}`));
      }
    }
  }
  const shown = all.slice(0, maxLines);
  return { lines: shown, added, removed, hidden: all.length - shown.length };
}
