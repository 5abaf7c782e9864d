/**
 * A permission question as it goes on screen: `? allow <tool>: <subject>`,
 * the preview of what the call would do, and why it asks. Everything the
 * model sent is shown with its control characters made visible, so a
 * command cannot draw a different question over itself; and the question
 * is fitted to the screen, so an argument of megabytes cannot push it out
 * of sight. What is cut is said, with Ctrl-O to print the call whole.
 */
import type { PermissionRequest } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitize, sanitizeDeep } from "../terminal-text.ts";
import { truncate, visibleWidth, wrapWords } from "../text-width.ts";
import { permissionPreview } from "./permission-preview.ts";
import type { RichOutput } from "./rich-output.ts";
import { formatBytes } from "./tool-summary.ts";

export interface QuestionScreen {
  columns: number;
  rows: number;
}

export interface PermissionQuestion {
  /** The lines to print above the choices; they fit the screen. */
  lines: string[];
  /** Something was left out: `whole` shows it. */
  cut: boolean;
  /** The call whole: its tool and every argument, made visible. */
  whole: string[];
}

/** Rows kept free below the question: the choices, the note on what was cut, one spare. */
const RESERVED_ROWS = 3;
/** Rows the summary line may take at most before it is cut. */
const SUMMARY_ROWS = 3;

export function permissionQuestion(
  raw: PermissionRequest,
  style: Style,
  rich: RichOutput | undefined,
  root: string,
  screen: QuestionScreen,
): PermissionQuestion {
  const request = sanitizeDeep(raw);
  const columns = Math.max(20, screen.columns);
  // Our own lines are word-wrapped one short of the width; a preview's lines (code, a diff) are the terminal's to wrap.
  const fit = (text: string) => wrapWords(text, columns - 1);
  const reason = request.reason === undefined ? [] : fit(style.dim(`  asking because ${request.reason}`));
  const budget = Math.max(4, screen.rows - RESERVED_ROWS - rowsOf(reason, columns));
  let cut = false;
  // The summary: the tool and the first line of its subject (a command, a path).
  const subject = request.subject?.split("\n")[0];
  let summary = fit(
    `${style.yellow("?")} ${style.bold("allow")} ${request.tool}${subject === undefined ? "" : `: ${subject}`}`,
  );
  const summaryRows = Math.min(SUMMARY_ROWS, budget - 1);
  if (summary.length > summaryRows) {
    summary = [...summary.slice(0, summaryRows - 1), truncate(`${summary[summaryRows - 1]}…`, columns - 1)];
    cut = true;
  }
  const lines = [...summary];
  let left = budget - rowsOf(lines, columns);
  const preview = permissionPreview(request, style, rich, root, Math.max(1, left));
  if (preview !== undefined) {
    if (preview.hidden > 0) cut = true;
    for (const line of preview.lines) {
      const rows = rowsOf([line], columns);
      if (rows <= left) {
        lines.push(line);
        left -= rows;
        continue;
      }
      if (left > 0) lines.push(truncate(line, left * columns - 1));
      cut = true;
      break;
    }
  }
  if (cut) {
    const size = formatBytes(Buffer.byteLength(JSON.stringify(raw.args) ?? ""));
    lines.push(
      ...fit(
        style.dim(`    … cut to fit the screen (the call's arguments are ${size}); ctrl+o shows it whole`),
      ),
    );
  }
  lines.push(...reason);
  return { lines, cut, whole: wholeCall(request.tool, request.args) };
}

/**
 * The answer keys of a question and what they do, as long as fits one line
 * of `columns` (the prompt adds 5): whole, then with short names and what
 * `p` and `t` do in `note` (printed above), then with what `a` grants
 * there too, then the letters alone. A note wider than a line has each key
 * on a line of its own. `always` is what "always" grants;
 * `project` whether `p` (always, in this project) is offered.
 */
export function permissionChoices(
  always: string,
  project: boolean,
  columns: number,
): { keys: string; note: string } {
  const p = project ? " · [p]roject" : "";
  const pNote = project ? "p: always, in this project · " : "";
  const forms = [
    {
      keys: `[y]es · [n]o · [a]lways ${always} this session${project ? " · [p]roject: always, here" : ""} · [t]ell the model why not`,
      note: "",
    },
    {
      keys: `[y]es · [n]o · [a]lways ${always} this session${p} · [t]ell`,
      note: `${pNote}t: tell the model why not`,
    },
    {
      keys: `[y]es · [n]o · [a]lways${p} · [t]ell`,
      note: `a: always allow ${always} this session · ${pNote}t: tell the model why not`,
    },
  ];
  const chosen = forms.find((f) => visibleWidth(f.keys) + 5 < columns) ?? {
    keys: project ? "y n a p t" : "y n a t",
    note: `y: yes · n: no · ${forms[2]?.note ?? ""}`,
  };
  // A note wider than the line: each key on a line of its own, so none is split between two.
  const note =
    visibleWidth(chosen.note) + 2 < columns
      ? chosen.note
      : chosen.note.replace(/ \u00b7 (?=[ynapt]: )/g, "\n").replace("y: yes\nn: no", "y: yes · n: no");
  return { keys: chosen.keys, note };
}

/** Terminal rows `lines` take at `columns` (a line wider than the screen wraps). */
function rowsOf(lines: readonly string[], columns: number): number {
  return lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(visibleWidth(line) / columns)), 0);
}

/** Every argument of a call: strings as their lines, anything else as JSON. */
function wholeCall(tool: string, args: unknown): string[] {
  const out = [`── ${tool} call, whole ──`];
  if (args === null || typeof args !== "object") out.push(sanitize(JSON.stringify(args) ?? ""));
  else
    for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
      if (typeof value === "string") out.push(`${key}:`, ...value.split("\n").map((l) => `  ${l}`));
      else out.push(`${key}: ${sanitize(JSON.stringify(value) ?? "")}`);
    }
  out.push("──");
  return out;
}
