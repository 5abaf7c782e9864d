/**
 * The last turns of a resumed session, drawn the way the live session drew
 * them: the prompt after `›`, the answer's text, one line per tool call
 * with its arguments in short and whether it failed, one per web search.
 * Given the terminal's width, the answer is laid out by the caller's
 * `answer` (the Markdown renderer), the prompt is wrapped between words
 * under its `›`, and a tool line is fitted to the width.
 */
import { isCompactionMessage, SUMMARY_HEADER } from "@yoi/compaction";
import { type Item, messageText } from "@yoi/llm-client";
import type { Style } from "../style.ts";
import { sanitize } from "../terminal-text.ts";
import { truncate, wrapWords } from "../text-width.ts";
import { parseArgs, shortArgs } from "../ui/tool-summary.ts";
import { serverToolLine } from "../ui/web-sources.ts";

/** Turns shown on resume. */
export const RESUME_TURNS = 3;
const MAX_TEXT_LINES = 12;

/** The first lines of a text; one line more is shown rather than a line saying it is left out. */
function clip(lines: readonly string[]): string[] {
  if (lines.length <= MAX_TEXT_LINES + 1) return [...lines];
  return [...lines.slice(0, MAX_TEXT_LINES), `… (${lines.length - MAX_TEXT_LINES} more lines)`];
}

export interface TranscriptOptions {
  /** User turns shown (default {@link RESUME_TURNS}). */
  turns?: number | undefined;
  /** Columns to lay the lines out in; none (not a terminal): each line as it was written. */
  width?: number | undefined;
  /** Lays an answer's text out in lines (the Markdown renderer); none: its lines as written. */
  answer?: ((text: string) => string[]) | undefined;
}

/** Lines for the last `turns` user turns of `history` (a turn starts at a user message). */
export function transcriptLines(
  history: readonly Item[],
  style: Style,
  { turns = RESUME_TURNS, width, answer }: TranscriptOptions = {},
): string[] {
  const starts: number[] = [];
  history.forEach((item, i) => {
    if (item.type === "message" && item.role === "user" && !isCompactionMessage(item)) starts.push(i);
  });
  const from = starts.length > turns ? (starts[starts.length - turns] as number) : 0;
  const results = new Map<string, boolean>();
  for (const item of history) if (item.type === "tool_result") results.set(item.callId, item.isError);
  const out: string[] = [];
  if (from > 0) out.push(style.dim(`… ${starts.length - turns} earlier turn(s)`));
  for (const item of history.slice(from)) {
    switch (item.type) {
      case "message": {
        if (isCompactionMessage(item)) {
          // A summary in place of earlier turns: said, not drawn as something the user typed.
          if (item.content[0]?.type === "text" && item.content[0].text.startsWith(SUMMARY_HEADER))
            out.push(style.dim("⟳ earlier turns were compacted into a summary"));
          break;
        }
        // A log is replayed as it was written, by the model or by whoever could write the file.
        const text = sanitize(messageText(item));
        if (item.role === "user") {
          const lines = text.trimEnd().split("\n");
          const laid =
            width === undefined ? lines : lines.flatMap((l) => wrapWords(l, Math.max(1, width - 2)));
          out.push(`${style.cyan("› ")}${clip(laid).join("\n  ")}`);
        } else if (item.role === "assistant" && text.trim() !== "")
          out.push(...clip(answer ? answer(text) : text.trimEnd().split("\n")));
        break;
      }
      case "tool_call": {
        const failed = results.get(item.callId);
        const mark = failed === undefined ? style.dim("·") : failed ? style.red("✗") : style.green("✓");
        const args = sanitize(shortArgs(item.name, parseArgs(item.arguments)));
        const line = `${mark} ${sanitize(item.name)} ${style.dim(args)}`.trimEnd();
        out.push(width === undefined ? line : truncate(line, width));
        break;
      }
      case "server_tool": {
        const mark = item.status === "failed" ? style.red("✗") : style.green("✓");
        const line = `${mark} ${sanitize(serverToolLine(item))}`;
        out.push(width === undefined ? line : truncate(line, width));
        break;
      }
      default:
        break;
    }
  }
  return out;
}
