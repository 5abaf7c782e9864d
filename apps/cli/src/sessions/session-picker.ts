/**
 * `yoi -r` without an id: a numbered list of this directory's sessions
 * (title, age, model, first prompt), answered with a number or the start
 * of an id. Enter on an empty line or Ctrl-C chooses nothing.
 */
import * as readline from "node:readline";
import type { SessionSummary } from "@yoi/worker-persistence";
import { usageError } from "../cli-error.ts";
import { ago } from "../commands/sessions.ts";
import type { Style } from "../style.ts";
import { sanitizeLine } from "../terminal-text.ts";
import { truncate } from "../text-width.ts";
import { shortIds } from "./short-ids.ts";

/** Most sessions the picker lists. */
export const PICKER_ROWS = 20;

/** The picker's lines for `sessions` (newest first). */
export function pickerLines(sessions: readonly SessionSummary[], style: Style, now = Date.now()): string[] {
  const ids = shortIds(sessions.map((s) => s.id));
  return sessions.slice(0, PICKER_ROWS).map((s, i) => {
    const n = String(i + 1).padStart(2);
    const title = truncate(sanitizeLine(s.title ?? "(no prompt yet)"), 50);
    const prompt =
      s.firstPrompt !== undefined && s.firstPrompt !== s.title
        ? ` · ${truncate(sanitizeLine(s.firstPrompt), 40)}`
        : "";
    const facts = `${ago(Date.parse(s.updatedAt), now)} · ${sanitizeLine(s.model ?? "-")} · ${sanitizeLine(ids.get(s.id) ?? s.id)}${prompt}`;
    return `${style.bold(n)}  ${title}  ${style.dim(facts)}`;
  });
}

/** Which session an answer names: a list number or a unique id prefix; undefined when none does. */
export function pickAnswer(answer: string, sessions: readonly SessionSummary[]): SessionSummary | undefined {
  const text = answer.trim().toLowerCase();
  if (/^\d+$/.test(text)) return sessions.slice(0, PICKER_ROWS)[Number(text) - 1];
  if (text === "") return undefined;
  const matches = sessions.filter((s) => s.id.toLowerCase().startsWith(text));
  return matches.length === 1 ? matches[0] : undefined;
}

/** Asks on the terminal; rejects with a usage error when there is none. */
export async function pickSession(
  sessions: readonly SessionSummary[],
  style: Style,
): Promise<SessionSummary | undefined> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw usageError("-r without an id needs a terminal to choose in; give the id (yoi sessions lists them)");
  }
  const out = process.stdout;
  out.write(`${style.bold("Resume which session?")}\n`);
  for (const line of pickerLines(sessions, style)) out.write(`${line}\n`);
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    for (;;) {
      const answer = await new Promise<string | undefined>((resolve) => {
        rl.question(style.cyan("number or id (Enter: none) › "), resolve);
        rl.once("SIGINT", () => resolve(undefined));
        rl.once("close", () => resolve(undefined));
      });
      if (answer === undefined || answer.trim() === "") return undefined;
      const chosen = pickAnswer(answer, sessions);
      if (chosen) return chosen;
      out.write(
        style.yellow(
          `"${sanitizeLine(answer.trim())}" is not a number from the list or the start of one id\n`,
        ),
      );
    }
  } finally {
    rl.close();
  }
}
