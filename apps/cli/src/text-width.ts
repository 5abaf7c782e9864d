/**
 * Terminal column widths (grapheme clusters, wide and zero-width
 * characters) and grapheme clusters for the screens that lay text out.
 *
 * string-width does the measuring, but loading it builds an Intl.Segmenter
 * and a dozen Unicode-property expressions: some 20 ms, which stood
 * between starting `yoi` and its prompt. Most text a screen measures is
 * ASCII, Latin-1 and the few symbols yoi draws (· › … ─ ↻ ⠇), where every
 * character is one cluster one column wide; such text is measured here,
 * and string-width is loaded the first time anything else comes (CJK,
 * emoji, combining marks). The characters of that fast path are checked
 * against string-width, one by one, in the tests.
 */
import { createRequire } from "node:module";

/**
 * Characters that are each a grapheme cluster of their own and one column
 * wide (string-width agrees, and none is an emoji, a mark, a format or an
 * ignorable character): printable ASCII, Latin-1 but © ® and the soft
 * hyphen, general punctuation, arrows, box drawing, block elements,
 * geometric shapes but the emoji among them, and braille.
 */
const SIMPLE =
  /^[\x20-\x7e\u00a0-\u00a8\u00aa-\u00ac\u00af-\u00ff\u2010-\u2027\u202f-\u203b\u203d-\u2048\u204a-\u205e\u2190-\u2193\u219a-\u21a8\u21ab-\u21ff\u2500-\u25a9\u25ac-\u25b5\u25b7-\u25bf\u25c1-\u25fa\u25ff\u2800-\u28ff]*$/;
/** ANSI CSI sequences (colours, cursor moves): no columns. Any other escape is left to string-width. */
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
/** The same, matched only where `lastIndex` points. */
const CSI_AT = new RegExp(CSI.source, "y");

type StringWidth = (text: string) => number;
let stringWidth: StringWidth | undefined;

/** string-width, loaded (synchronously: a width is needed now) the first time a text needs it. */
function measure(text: string): number {
  stringWidth ??= (createRequire(import.meta.url)("string-width") as { default: StringWidth }).default;
  return stringWidth(text);
}

/** Visible width of a string in terminal columns: ANSI sequences count 0, wide (CJK, emoji) 2, zero-width and joiners 0. */
export function visibleWidth(text: string): number {
  const plain = text.includes("\x1b") ? text.replace(CSI, "") : text;
  return SIMPLE.test(plain) ? plain.length : measure(text);
}

// Created on first use: building a Segmenter loads ICU data.
let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of `text` with their UTF-16 offsets, as Intl.Segmenter gives them. */
export function* graphemes(text: string): Generator<{ segment: string; index: number }> {
  if (SIMPLE.test(text)) {
    for (let index = 0; index < text.length; index++) yield { segment: text[index]!, index };
    return;
  }
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { segment, index } of segmenter.segment(text)) yield { segment, index };
}

/** Cuts text to `width` columns (ANSI sequences kept and not counted), adding an ellipsis when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return "";
  if (visibleWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  let styled = false;
  // Walk the text as ANSI sequences and grapheme clusters, so an emoji sequence or a combining mark is never split.
  for (let i = 0; i < text.length; ) {
    CSI_AT.lastIndex = i;
    const ansi = CSI_AT.exec(text);
    if (ansi) {
      out += ansi[0];
      styled = true;
      i += ansi[0].length;
      continue;
    }
    // From here to the next escape (an escape that is not CSI goes with the text after it, 0 columns wide).
    const next = text.indexOf("\x1b", i + 1);
    const run = text.slice(i, next === -1 ? undefined : next);
    let stop = false;
    for (const { segment } of graphemes(run)) {
      const w = visibleWidth(segment);
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

/**
 * Word-wraps text (ANSI styles allowed) to lines of at most `width`
 * columns, breaking at spaces. A word longer than a line is cut to it
 * (`cut`, the default) or left whole on a line of its own.
 */
export function wrapWords(text: string, width: number, { cut = true }: { cut?: boolean } = {}): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of text.split(/ +/)) {
    const candidate = current === "" ? word : `${current} ${word}`;
    if (visibleWidth(candidate) <= width) {
      current = candidate;
      continue;
    }
    if (current !== "") lines.push(current);
    current = !cut || visibleWidth(word) <= width ? word : truncate(word, width);
  }
  lines.push(current);
  return lines;
}
