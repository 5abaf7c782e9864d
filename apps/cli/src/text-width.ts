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
 * Lays styled text out in lines of at most `width` columns. Lines break at
 * spaces and between East Asian ideographs (never before a closing mark
 * like 。 or after an opening one like 「); a `\n` in the text is a break
 * of its own. A word wider than a line is broken across lines at
 * grapheme-cluster boundaries (`cut`, the default; nothing is lost) or left
 * whole on a line of its own for the terminal to wrap. The spaces where a
 * line breaks are dropped. A style open where a line ends is closed there
 * and opened again at the start of the next line, so each line stands on
 * its own (a prefix put before it, a quote bar, is not painted).
 */
export function wrapWords(text: string, width: number, { cut = true }: { cut?: boolean } = {}): string[] {
  const room = Math.max(1, width);
  const out: string[] = [];
  const sgr = new SgrState();
  for (const hard of text.split("\n")) {
    if (!hard.includes("\x1b") && SIMPLE.test(hard) && hard.length <= room && sgr.open() === "") {
      out.push(hard.replace(/ +$/, ""));
      continue;
    }
    layLine(hard, room, cut, sgr, out);
  }
  return out;
}

/**
 * Lines of a listing (`yoi lsp status`, `/mcp`) fitted to `width` columns:
 * each line word-wrapped, its further rows two columns further in than the
 * line itself starts (under its text). No width (not a terminal): as given.
 */
export function fitLines(lines: readonly string[], width: number | undefined): string[] {
  if (width === undefined) return [...lines];
  return lines.flatMap((line) => {
    const indent = (/^ */.exec(line.replace(CSI, ""))?.[0].length ?? 0) + 2;
    const pad = " ".repeat(indent);
    return wrapWords(line, Math.max(1, width - indent)).map((row, i) => (i === 0 ? row : pad + row));
  });
}

/**
 * Writes a command's lines (`\n` separates them) on stdout (or stderr): on
 * a terminal fitted to its width by {@link fitLines}, so no word is cut at
 * the edge; into a pipe as they are.
 */
export function writeLines(text: string | readonly string[], out: NodeJS.WriteStream = process.stdout): void {
  const lines = typeof text === "string" ? text.split("\n") : text;
  // The last column is left free: a terminal that wraps on writing it would add an empty row.
  const width = out.isTTY && out.columns > 1 ? out.columns - 1 : undefined;
  out.write(`${fitLines(lines, width).join("\n")}\n`);
}

/** One piece of a line: a run of text with no break opportunity inside it, or the spaces between two. */
interface Piece {
  /** Text and the escapes inside it. */
  text: string;
  width: number;
  space: boolean;
}

/** Lays out one line of text without `\n` into `out`, carrying the open styles in `sgr` across breaks. */
function layLine(text: string, width: number, cut: boolean, sgr: SgrState, out: string[]): void {
  let line = sgr.open();
  let used = 0;
  /** Spaces seen since the last word, held until the next word decides whether they stay. */
  let spaces = "";
  let spacesWidth = 0;
  /** A line was broken here: spaces at the start of the next line are dropped (those that start the text stay). */
  let broken = false;
  const breakLine = () => {
    broken = true;
    out.push(line.replace(/ +((?:\x1b\[[0-?]*[ -/]*[@-~])*)$/, "$1") + sgr.close());
    line = sgr.open();
    used = 0;
  };
  for (const piece of pieces(text)) {
    if (piece.space) {
      spaces += piece.text;
      spacesWidth += piece.width;
      continue;
    }
    const drop = used === 0 && broken;
    const gap = drop ? 0 : spacesWidth;
    const gapText = drop ? spaces.replace(/ /g, "") : spaces;
    spaces = "";
    spacesWidth = 0;
    if (used + gap + piece.width <= width) {
      line += gapText + piece.text;
      used += gap + piece.width;
      sgr.track(gapText + piece.text);
      continue;
    }
    // The spaces at the break go (an indent too wide for the word with it, too); the styles they carried stay.
    line += gapText.replace(/ /g, "");
    sgr.track(gapText);
    if (used > 0) breakLine();
    if (piece.width <= width || !cut) {
      line += piece.text;
      used = piece.width;
      sgr.track(piece.text);
      continue;
    }
    // A word longer than a line: as much as fits on each line, cluster by cluster.
    for (const part of clusters(piece.text)) {
      if (part.width > 0 && used + part.width > width && used > 0) breakLine();
      line += part.text;
      used += part.width;
      sgr.track(part.text);
    }
  }
  // Trailing spaces are dropped; escapes among them are kept.
  line += spaces.replace(/ /g, "");
  sgr.track(spaces);
  out.push(line + sgr.close());
}

/** Ideographs and kana: a line may break before and after each. */
const IDEOGRAPHIC = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uff60]/u;
/** Marks a line may not start with (、。，．：；！？）」』】〉》〕｝’”・ー〜… and their ASCII kin). */
const NO_BREAK_BEFORE =
  /^[\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff01\uff1f\uff09\u300d\u300f\u3011\u3009\u300b\u3015\uff5d\u2019\u201d\u30fb\u30fc\u301c\u2026,.:;!?)\]}]/u;
/** Marks a line may not end with (（「『【〈《〔｛‘“ and their ASCII kin). */
const NO_BREAK_AFTER = /^[\uff08\u300c\u300e\u3010\u3008\u300a\u3014\uff5b\u2018\u201c([{]/u;

/** Splits a line into words, the spaces between them, and the ideographs each on its own. */
function* pieces(text: string): Generator<Piece> {
  let current: Piece | undefined;
  let prev = "";
  // No ideograph in the text (the common case): no cluster needs the Unicode tests below.
  const plain = SIMPLE.test(text.includes("\x1b") ? text.replace(CSI, "") : text);
  for (const part of clusters(text, true)) {
    if (part.width === 0 && part.text.startsWith("\x1b")) {
      // An escape goes with the text after it (a colour opens the word it paints).
      if (current === undefined || current.space) {
        if (current) yield current;
        current = { text: part.text, width: 0, space: false };
      } else current.text += part.text;
      continue;
    }
    const space = part.text.charCodeAt(0) === 0x20;
    const ideo = !plain && (IDEOGRAPHIC.test(part.text) || IDEOGRAPHIC.test(prev));
    const breakHere =
      current === undefined ||
      current.space !== space ||
      (!space && current.width > 0 && ideo && !NO_BREAK_BEFORE.test(part.text) && !NO_BREAK_AFTER.test(prev));
    if (breakHere) {
      if (current) yield current;
      current = { text: part.text, width: part.width, space };
    } else {
      current!.text += part.text;
      current!.width += part.width;
    }
    prev = part.text.length > 1 && part.width === part.text.length ? part.text.slice(-1) : part.text;
  }
  if (current) yield current;
}

/**
 * The escapes and grapheme clusters of `text` with their widths; with
 * `words`, runs of one-column characters come whole (a word, or spaces),
 * which is all a line break needs to know of them.
 */
function* clusters(text: string, words = false): Generator<{ text: string; width: number }> {
  for (let i = 0; i < text.length; ) {
    if (text.charCodeAt(i) === 0x1b) {
      CSI_AT.lastIndex = i;
      const ansi = CSI_AT.exec(text);
      // Any other escape: its one character, no columns (string-width agrees).
      const seq = ansi ? ansi[0] : "\x1b";
      yield { text: seq, width: 0 };
      i += seq.length;
      continue;
    }
    const next = text.indexOf("\x1b", i);
    const run = text.slice(i, next === -1 ? undefined : next);
    if (SIMPLE.test(run)) {
      // One column a character: with `words`, a run of them between spaces (or of spaces) at once.
      if (words) for (const m of run.matchAll(/ +|[^ ]+/g)) yield { text: m[0], width: m[0].length };
      else for (const ch of run) yield { text: ch, width: 1 };
    } else for (const { segment } of graphemes(run)) yield { text: segment, width: visibleWidth(segment) };
    i += run.length;
  }
}

/** SGR parameters that end an attribute, and which attributes each ends. */
const SGR_CLOSES: Record<string, readonly string[]> = {
  "22": ["1", "2"],
  "23": ["3"],
  "24": ["4"],
  "25": ["5"],
  "27": ["7"],
  "28": ["8"],
  "29": ["9"],
  "39": ["fg"],
  "49": ["bg"],
};

/**
 * The text attributes (SGR) open at a point of a line: fed every escape as
 * the line is laid out, it can close them at a line's end and open them
 * again at the next line's start.
 */
class SgrState {
  /** Attribute → the escape that set it. */
  readonly #open = new Map<string, string>();

  track(text: string): void {
    if (!text.includes("\x1b[")) return;
    for (const m of text.matchAll(/\x1b\[([0-9;]*)m/g)) this.#apply(m[1] ?? "", m[0]);
  }

  #apply(params: string, seq: string): void {
    const codes = params === "" ? ["0"] : params.split(";");
    for (let i = 0; i < codes.length; i++) {
      const code = codes[i]!;
      const n = Number(code);
      if (n === 0) this.#open.clear();
      else if (SGR_CLOSES[code]) for (const key of SGR_CLOSES[code]) this.#open.delete(key);
      else if (n === 38 || n === 48) {
        // 38;5;n or 38;2;r;g;b: one attribute, several parameters.
        const take = codes[i + 1] === "5" ? 2 : codes[i + 1] === "2" ? 4 : 0;
        this.#open.set(n === 38 ? "fg" : "bg", `\x1b[${codes.slice(i, i + 1 + take).join(";")}m`);
        i += take;
      } else if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) this.#open.set("fg", `\x1b[${code}m`);
      else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) this.#open.set("bg", `\x1b[${code}m`);
      else this.#open.set(code, codes.length === 1 ? seq : `\x1b[${code}m`);
    }
  }

  /** The escapes that open what is open now. */
  open(): string {
    return [...this.#open.values()].join("");
  }

  /** A reset when anything is open (the state is kept for {@link open}). */
  close(): string {
    return this.#open.size > 0 ? "\x1b[0m" : "";
  }
}
