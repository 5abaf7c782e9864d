/**
 * The first line of an interactive session: `yoi <version> · <model> ·
 * <dir> · <branch>`, fitted to the terminal. The directory gives way first
 * (its start cut, so the folder you are in stays), then goes; the branch stays.
 */
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { graphemes, truncate, visibleWidth } from "../text-width.ts";

export interface HeaderFacts {
  version: string;
  /** `provider/model`. */
  model: string;
  /** The scope root. */
  dir: string;
  /** The git branch (or `detached HEAD`); undefined outside a repository. */
  branch?: string | undefined;
}

/** A branch name longer than this is cut: it must not push everything else off the line. */
const MAX_BRANCH = 32;
/** Less room than this for the directory, and it is left out. */
const MIN_DIR = 10;
const SEP = " · ";

/** The header line; `columns` undefined (not a terminal) leaves it whole. */
export function headerLine(facts: HeaderFacts, style: Style, columns: number | undefined): string {
  const head = `${style.bold("yoi")} ${style.dim(facts.version)}${SEP}${style.cyan(sanitizeLine(facts.model))}`;
  const branch =
    facts.branch === undefined
      ? ""
      : `${SEP}${style.magenta(truncate(sanitizeLine(facts.branch), MAX_BRANCH))}`;
  const dir = sanitizeLine(facts.dir);
  if (columns === undefined) return `${head}${SEP}${dir}${branch}`;
  const room = columns - visibleWidth(head) - SEP.length - visibleWidth(branch);
  if (visibleWidth(dir) <= room) return `${head}${SEP}${dir}${branch}`;
  if (room >= MIN_DIR) return `${head}${SEP}${tail(dir, room)}${branch}`;
  return truncate(`${head}${branch}`, columns);
}

/** The end of `text` in at most `width` columns, after an ellipsis. */
function tail(text: string, width: number): string {
  const parts = [...graphemes(text)].map((g) => g.segment);
  let out = "";
  let used = 1; // the ellipsis
  for (let i = parts.length - 1; i >= 0; i--) {
    const w = visibleWidth(parts[i]!);
    if (used + w > width) break;
    out = parts[i] + out;
    used += w;
  }
  return `…${out}`;
}
