/**
 * Terminal column widths (grapheme clusters, wide and zero-width
 * characters) for the screens that lay text out. Kept apart from
 * style.ts: string-width builds an Intl.Segmenter when it loads, a cost
 * that print mode, which only colours, should not pay.
 */
import stringWidth from "string-width";

/** Visible width of a string in terminal columns: ANSI sequences count 0, wide (CJK, emoji) 2, zero-width and joiners 0. */
export function visibleWidth(text: string): number {
  return stringWidth(text);
}

// Created on first use: building a Segmenter loads ICU data, which print mode never needs.
let graphemes: Intl.Segmenter | undefined;
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
    graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
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
