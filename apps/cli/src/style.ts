/**
 * ANSI styling that switches itself off: no colour when the stream is not a
 * terminal, with NO_COLOR set (any value), TERM=dumb, or --no-color.
 */
import { stripVTControlCharacters, styleText } from "node:util";
import stringWidth from "string-width";

export interface Style {
  enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

export function colorEnabled(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
  argv: readonly string[] = process.argv,
): boolean {
  if (argv.includes("--no-color")) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

export function createStyle(enabled: boolean): Style {
  // styleText does the escape codes; whether to colour at all is decided above (it sees our flags and env).
  const paint = (format: Parameters<typeof styleText>[0]) => (text: string) =>
    enabled ? styleText(format, text, { validateStream: false }) : text;
  return {
    enabled,
    bold: paint("bold"),
    dim: paint("dim"),
    red: paint("red"),
    yellow: paint("yellow"),
    green: paint("green"),
    cyan: paint("cyan"),
    magenta: paint("magenta"),
  };
}

/** Visible width of a string in terminal columns: ANSI sequences count 0, wide (CJK, emoji) 2, zero-width and joiners 0. */
export function visibleWidth(text: string): number {
  return stringWidth(text);
}

export function stripAnsi(text: string): string {
  return stripVTControlCharacters(text);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const ANSI_AT = /^\x1b\[[0-9;?]*[A-Za-z]/;

/** Cuts text to `width` columns (ANSI sequences kept and not counted), adding an ellipsis when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return "";
  if (visibleWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  let styled = false;
  // Walk the text as ANSI sequences and grapheme clusters, so an emoji sequence or a combining mark is never split.
  for (let i = 0; i < text.length; ) {
    const ansi = ANSI_AT.exec(text.slice(i, i + 16));
    if (ansi) {
      out += ansi[0];
      styled = true;
      i += ansi[0].length;
      continue;
    }
    const next = text.indexOf("\x1b", i);
    const run = text.slice(i, next === -1 ? undefined : next);
    let stop = false;
    for (const { segment } of graphemes.segment(run)) {
      const w = stringWidth(segment);
      if (used + w > width - 1) {
        stop = true;
        break;
      }
      out += segment;
      used += w;
    }
    if (stop) break;
    i += run.length;
  }
  return `${out}…${styled ? "\x1b[0m" : ""}`;
}
