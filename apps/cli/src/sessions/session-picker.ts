/**
 * The session picker of `yoi -r` and `/resume`: a searchable list of this
 * directory's sessions, newest first, each with its first prompt (or
 * title), how long ago it was used, its git branch, its size and model
 * (ids are for `yoi sessions` and `--resume <id>`; here the prompt names it).
 * Typing filters (every word must match), Up/Down move, Enter resumes,
 * Esc or Ctrl-C chooses nothing. It is the line editor's `pick`.
 */
import type { SessionSummary } from "@yoi/worker-persistence";
import { usageError } from "../cli-error.ts";
import { ago } from "../commands/sessions.ts";
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { truncate, visibleWidth } from "../text-width.ts";
import { LineEditor } from "../ui/line-editor.ts";
import { formatBytes } from "../ui/tool-summary.ts";

/** Most sessions the picker lists. */
export const PICKER_ROWS = 200;

/** The picker's rows for `sessions` (newest first), plain text fitted to `columns`. */
export function pickerItems(
  sessions: readonly SessionSummary[],
  columns: number,
  now = Date.now(),
): string[] {
  // A row is the prompt (at least 20 columns), two spaces, the facts; the list's marker and a spare
  // column take 6 more. On a narrow terminal the facts that matter least go first (the model, the
  // size, the branch), whole, rather than being cut off at the edge: the age always stays.
  const factRoom = columns - 20 - 6;
  const facts = sessions.slice(0, PICKER_ROWS).map((s) => {
    let parts = [
      ago(Date.parse(s.updatedAt), now),
      s.gitBranch === undefined ? undefined : `⎇ ${s.gitBranch}`,
      formatBytes(s.sizeBytes),
      s.model,
    ]
      .filter((part) => part !== undefined)
      .map((part) => sanitizeLine(part));
    while (parts.length > 1 && visibleWidth(parts.join(" · ")) > factRoom) parts = parts.slice(0, -1);
    return parts.join(" · ");
  });
  // The prompt takes what the facts leave, at least 20 columns.
  const factWidth = Math.max(0, ...facts.map((f) => visibleWidth(f)));
  const room = Math.max(20, columns - factWidth - 6);
  return sessions.slice(0, PICKER_ROWS).map((s, i) => {
    const prompt = truncate(sanitizeLine(s.firstPrompt ?? s.title ?? "(no prompt yet)"), room);
    return `${prompt}${" ".repeat(Math.max(0, room - visibleWidth(prompt)))}  ${facts[i] ?? ""}`;
  });
}

/** Asks on the terminal; rejects with a usage error when there is none. */
export async function pickSession(
  sessions: readonly SessionSummary[],
  style: Style,
): Promise<SessionSummary | undefined> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw usageError("-r without an id needs a terminal to choose in; give the id (yoi sessions lists them)");
  }
  const editor = new LineEditor({ input: process.stdin, output: process.stdout, style });
  // Only the list takes keys here: the session's own editor starts after it.
  editor.start({ submit: () => {}, interrupt: () => {}, escape: () => {}, eof: () => {} });
  try {
    const index = await pickFrom(editor, sessions, style);
    return index === undefined ? undefined : sessions[index];
  } finally {
    editor.stop();
  }
}

/** The picker on an editor that is running (`/resume`): the index chosen in `sessions`. */
export function pickFrom(
  editor: LineEditor,
  sessions: readonly SessionSummary[],
  style: Style,
): Promise<number | undefined> {
  // The list's marker takes two columns.
  return editor.pick(
    style.bold("Resume which session?"),
    pickerItems(sessions, (process.stdout.columns ?? 80) - 2),
  );
}
