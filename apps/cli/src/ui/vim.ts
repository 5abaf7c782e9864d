/**
 * Vim keys for the prompt editor: an insert mode (the editor's ordinary
 * keys, Esc leaves it) and a normal mode with the common motions (h j k l
 * w b e 0 ^ $ f F t T ; , gg G), operators on them (d c y, doubled for
 * whole lines), the commands x X D C s S p P u r ~, the ways into insert
 * mode (i a A I o O), and
 * counts in front of any of them (`3w`, `2dd`, `d2w`). Pure: it edits an
 * EditBuffer and says what the editor should do; the terminal is the
 * editor's business.
 */
import type { EditBuffer } from "./edit-buffer.ts";
import type { Key } from "./keys.ts";

export type VimMode = "normal" | "insert";

/** What the editor does after a key in vim mode. */
export interface VimOutcome {
  /** false: the key was not vim's (the editor's own keys handle it). */
  handled: boolean;
  /** Enter in normal mode: send the input. */
  submit?: boolean;
  /** j / k at the last / first line: walk the history. */
  history?: -1 | 1;
}

/** Undo snapshots kept. */
const UNDO_LIMIT = 100;

type CharClass = 0 | 1 | 2;
/** Whitespace, word characters, other (punctuation): vim's word boundaries. */
function classOf(ch: string | undefined): CharClass {
  if (ch === undefined || /\s/.test(ch)) return 0;
  return /\w/.test(ch) ? 1 : 2;
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf("\n", at);
  return end === -1 ? text.length : end;
}

/** `w`: the start of the next word (or the end of the text). */
export function nextWordStart(text: string, at: number): number {
  let i = at;
  const cls = classOf(text[i]);
  if (cls !== 0) while (i < text.length && classOf(text[i]) === cls) i++;
  while (i < text.length && classOf(text[i]) === 0) i++;
  return i;
}

/** `b`: the start of this word, or of the one before. */
export function prevWordStart(text: string, at: number): number {
  let i = at - 1;
  while (i > 0 && classOf(text[i]) === 0) i--;
  const cls = classOf(text[i]);
  while (i > 0 && classOf(text[i - 1]) === cls) i--;
  return Math.max(0, i);
}

/** `e`: the last character of this word, or of the next. */
export function wordEnd(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length && classOf(text[i]) === 0) i++;
  const cls = classOf(text[i]);
  while (i + 1 < text.length && classOf(text[i + 1]) === cls) i++;
  return Math.min(i, Math.max(0, text.length - 1));
}

interface Register {
  text: string;
  /** Whole lines (dd, yy): put on a line of their own. */
  linewise: boolean;
}

export class VimKeys {
  #mode: VimMode = "insert";
  /** Keys of a command not complete yet: counts and an operator (`2d`, `d3`). */
  #pending = "";
  #register: Register = { text: "", linewise: false };
  /** The last f / F / t / T and its character, for ; and ,. */
  #lastFind: string | undefined;
  readonly #undo: { text: string; cursor: number }[] = [];

  get mode(): VimMode {
    return this.#mode;
  }

  /** Back to insert mode with nothing pending (a new prompt). */
  reset(): void {
    this.#mode = "insert";
    this.#pending = "";
  }

  /** Forgets the undo history (the input was replaced from outside). */
  clearUndo(): void {
    this.#undo.length = 0;
  }

  handle(key: Key, buffer: EditBuffer): VimOutcome {
    if (this.#mode === "insert") {
      if (key.name === "escape" && !key.ctrl && !key.meta) {
        this.#mode = "normal";
        // Vim leaves insert mode one character to the left.
        if (buffer.cursor > lineStart(buffer.text, buffer.cursor)) buffer.left();
        return { handled: true };
      }
      // Esc and a key in one burst arrive as Alt+key: vim reads them as Esc, then the key.
      if (key.meta && !key.ctrl && key.text.length === 1) {
        this.handle({ ...key, name: "escape", meta: false, text: "" }, buffer);
        return this.#chars(key.text, buffer);
      }
      return { handled: false };
    }
    if (key.ctrl || key.meta) return { handled: false };
    switch (key.name) {
      case "text":
        return this.#chars(key.text, buffer);
      case "escape":
        if (this.#pending !== "") {
          this.#pending = "";
          return { handled: true };
        }
        return { handled: false };
      case "enter":
        this.#pending = "";
        return { handled: true, submit: true };
      case "left":
      case "backspace":
        return this.#chars("h", buffer);
      case "right":
        return this.#chars("l", buffer);
      case "up":
        return this.#chars("k", buffer);
      case "down":
        return this.#chars("j", buffer);
      case "home":
        return this.#chars("0", buffer);
      case "end":
        return this.#chars("$", buffer);
      case "paste":
        // Pasted text goes in as it is, in either mode (collapsed by the editor when long).
        return { handled: false };
      default:
        return { handled: false };
    }
  }

  #chars(chars: string, buffer: EditBuffer): VimOutcome {
    let outcome: VimOutcome = { handled: true };
    for (let i = 0; i < chars.length; i++) {
      if (this.#mode === "insert") {
        // Typed in one go ("ihello"): the rest is text.
        buffer.insert(chars.slice(i));
        break;
      }
      this.#pending += chars[i];
      const result = this.#run(buffer);
      if (result === "pending") continue;
      this.#pending = "";
      if (result !== undefined) outcome = { ...outcome, ...result };
      if (this.#mode === "normal") this.#clampNormal(buffer);
    }
    return outcome;
  }

  /** Runs the pending command if complete: "pending" when it needs more keys. */
  #run(buffer: EditBuffer): VimOutcome | "pending" | undefined {
    // A count never starts with 0: a 0 there is the motion.
    const match = /^([1-9]\d*)?([dcy])?([1-9]\d*)?(.*)$/.exec(this.#pending);
    if (!match) return undefined;
    const [, count1 = "1", op = "", count2 = "1", rest = ""] = match;
    // Keys that take one more: a character to find or to replace with, the second g of gg.
    if (rest === "" || /^[fFtTrg]$/.test(rest)) return "pending";
    return this.#runParts(buffer, op, Number(count1) * Number(count2), rest);
  }

  #runParts(buffer: EditBuffer, op: string, count: number, rest: string): VimOutcome | undefined {
    const text = buffer.text;
    const cursor = buffer.cursor;
    if (op !== "") {
      // Doubled operator: whole lines.
      if (rest === op) {
        this.#linewise(buffer, op, count);
        return undefined;
      }
      // dG / dgg: whole lines, from this one to the last / the first.
      if (rest === "G" || rest === "gg") {
        const lineOf = (at: number) => text.slice(0, at).split("\n").length - 1;
        const here = lineOf(cursor);
        const last = lineOf(text.length);
        if (rest === "gg") buffer.moveTo(0);
        this.#linewise(buffer, op, rest === "G" ? last - here + 1 : here + 1);
        return undefined;
      }
      if (op === "c" && (rest === "w" || rest === "W") && classOf(text[cursor]) !== 0) rest = "e";
      const target = this.#motion(rest, text, cursor, count, true);
      if (target === undefined) return undefined;
      let [from, to] = target.at < cursor ? [target.at, cursor] : [cursor, target.at];
      if (target.inclusive) to = Math.min(text.length, to + 1);
      // dw at the last word of a line stops at the line's end.
      if (rest === "w" && op !== "c") to = Math.min(to, Math.max(lineEnd(text, cursor), from));
      this.#apply(buffer, op, from, to);
      return undefined;
    }
    const motion = this.#motion(rest, text, cursor, count, false);
    if (motion !== undefined) {
      if (motion.history !== undefined) return { handled: true, history: motion.history };
      buffer.moveTo(motion.at);
      return undefined;
    }
    return this.#command(rest, buffer, count);
  }

  /** Where a motion goes; undefined for a key that is not one. */
  #motion(
    key: string,
    text: string,
    cursor: number,
    count: number,
    forOperator: boolean,
  ): { at: number; inclusive?: boolean; history?: -1 | 1 } | undefined {
    const start = lineStart(text, cursor);
    const end = lineEnd(text, cursor);
    let at = cursor;
    switch (key) {
      case "h":
        return { at: Math.max(start, cursor - count) };
      case "l":
        return { at: Math.min(forOperator ? end : Math.max(start, end - 1), cursor + count) };
      case "0":
        return { at: start };
      case "^":
        at = start;
        while (at < end && classOf(text[at]) === 0) at++;
        return { at };
      case "$":
        return forOperator ? { at: end } : { at: Math.max(start, end - 1) };
      case "w":
      case "W":
        for (let i = 0; i < count; i++) at = nextWordStart(text, at);
        return { at };
      case "b":
      case "B":
        for (let i = 0; i < count; i++) at = prevWordStart(text, at);
        return { at };
      case "e":
      case "E":
        for (let i = 0; i < count; i++) at = wordEnd(text, at);
        return { at, inclusive: true };
      case "gg":
        return { at: 0 };
      case "G":
        return { at: lineStart(text, text.length) };
      case ";":
      case ",": {
        const last = this.#lastFind;
        if (last === undefined) return undefined;
        const kind = last[0] ?? "f";
        const reversed = key === "," ? ({ f: "F", F: "f", t: "T", T: "t" }[kind] ?? kind) : kind;
        return this.#find(reversed, last.slice(1), text, cursor, count, true);
      }
      case "j":
      case "k": {
        const down = key === "j";
        const column = cursor - start;
        let lineAt = start;
        for (let i = 0; i < count; i++) {
          if (down) {
            const next = lineEnd(text, lineAt);
            if (next >= text.length) return i === 0 && !forOperator ? { at: cursor, history: 1 } : undefined;
            lineAt = next + 1;
          } else {
            if (lineAt === 0) return i === 0 && !forOperator ? { at: cursor, history: -1 } : undefined;
            lineAt = lineStart(text, lineAt - 1);
          }
        }
        return { at: Math.min(lineAt + column, lineEnd(text, lineAt)) };
      }
      default:
        if (/^[fFtT].$/su.test(key)) {
          this.#lastFind = key;
          return this.#find(key[0] ?? "f", key.slice(1), text, cursor, count, false);
        }
        return undefined;
    }
  }

  /** f / F / t / T: the `count`th `ch` on the line, forwards or backwards; undefined when there is none. */
  #find(
    kind: string,
    ch: string,
    text: string,
    cursor: number,
    count: number,
    repeat: boolean,
  ): { at: number; inclusive?: boolean } | undefined {
    const start = lineStart(text, cursor);
    const end = lineEnd(text, cursor);
    let at = cursor;
    for (let i = 0; i < count; i++) {
      // t / T repeated must skip the character it stopped next to.
      const from =
        repeat && i === 0 && (kind === "t" || kind === "T") ? (kind === "t" ? at + 1 : at - 1) : at;
      const forwards = kind === "f" || kind === "t";
      const found = forwards ? text.indexOf(ch, from + 1) : from < 1 ? -1 : text.lastIndexOf(ch, from - 1);
      if (found === -1 || found >= end || found < start) return undefined;
      at = found;
    }
    if (kind === "t") return { at: at - 1, inclusive: true };
    if (kind === "T") return { at: at + 1 };
    if (kind === "f") return { at, inclusive: true };
    return { at };
  }

  #snapshot(buffer: EditBuffer): void {
    this.#undo.push({ text: buffer.text, cursor: buffer.cursor });
    if (this.#undo.length > UNDO_LIMIT) this.#undo.shift();
  }

  /** d / c / y over `[from, to)`. */
  #apply(buffer: EditBuffer, op: string, from: number, to: number): void {
    const text = buffer.text;
    this.#register = { text: text.slice(from, to), linewise: false };
    if (op === "y") {
      buffer.moveTo(from);
      return;
    }
    this.#snapshot(buffer);
    buffer.splice(from, to, "");
    if (op === "c") this.#mode = "insert";
  }

  /** dd / cc / yy over `count` lines from the cursor's. */
  #linewise(buffer: EditBuffer, op: string, count: number): void {
    const text = buffer.text;
    const from = lineStart(text, buffer.cursor);
    let to = lineEnd(text, buffer.cursor);
    for (let i = 1; i < count && to < text.length; i++) to = lineEnd(text, to + 1);
    this.#register = { text: text.slice(from, to), linewise: true };
    if (op === "y") return;
    this.#snapshot(buffer);
    if (op === "c") {
      buffer.splice(from, to, "");
      this.#mode = "insert";
      return;
    }
    // The line goes with one of its newlines: the one after it, or before it for the last line.
    if (to < text.length) buffer.splice(from, to + 1, "");
    else buffer.splice(Math.max(0, from - 1), to, "");
    const after = buffer.text;
    const at = Math.min(from, after.length);
    buffer.moveTo(lineStart(after, at));
  }

  #command(key: string, buffer: EditBuffer, count: number): VimOutcome | undefined {
    const text = buffer.text;
    const cursor = buffer.cursor;
    const start = lineStart(text, cursor);
    const end = lineEnd(text, cursor);
    const insertAt = (at: number) => {
      this.#snapshot(buffer);
      buffer.moveTo(at);
      this.#mode = "insert";
    };
    switch (key) {
      case "i":
        insertAt(cursor);
        return undefined;
      case "a":
        insertAt(Math.min(end, cursor + (cursor < end ? 1 : 0)));
        return undefined;
      case "A":
        insertAt(end);
        return undefined;
      case "I": {
        let at = start;
        while (at < end && classOf(text[at]) === 0) at++;
        insertAt(at);
        return undefined;
      }
      case "o":
        this.#snapshot(buffer);
        buffer.splice(end, end, "\n");
        this.#mode = "insert";
        return undefined;
      case "O":
        this.#snapshot(buffer);
        buffer.splice(start, start, "\n");
        buffer.moveTo(start);
        this.#mode = "insert";
        return undefined;
      case "x":
        if (cursor < end) this.#apply(buffer, "d", cursor, Math.min(end, cursor + count));
        return undefined;
      case "X":
        if (cursor > start) this.#apply(buffer, "d", Math.max(start, cursor - count), cursor);
        return undefined;
      case "s":
        this.#apply(buffer, "c", cursor, Math.min(end, cursor + count));
        return undefined;
      case "S":
        this.#linewise(buffer, "c", count);
        return undefined;
      case "D":
        this.#apply(buffer, "d", cursor, end);
        return undefined;
      case "C":
        this.#apply(buffer, "c", cursor, end);
        return undefined;
      case "p":
      case "P":
        this.#put(buffer, key === "p", count);
        return undefined;
      case "~": {
        const to = Math.min(end, cursor + count);
        const flipped = [...text.slice(cursor, to)]
          .map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()))
          .join("");
        this.#snapshot(buffer);
        buffer.splice(cursor, to, flipped);
        return undefined;
      }
      case "u":
        for (let i = 0; i < count; i++) {
          const last = this.#undo.pop();
          if (last === undefined) break;
          buffer.set(last.text, last.cursor);
        }
        return undefined;
      default:
        if (/^r.$/su.test(key) && cursor + count <= end) {
          // r<ch>: the characters under the cursor replaced, the cursor on the last one.
          this.#snapshot(buffer);
          buffer.splice(cursor, cursor + count, key.slice(1).repeat(count));
          buffer.moveTo(cursor + count - 1);
        }
        // Otherwise not a vim key we know: dropped, as vim would beep.
        return undefined;
    }
  }

  #put(buffer: EditBuffer, after: boolean, count: number): void {
    const { text: reg, linewise } = this.#register;
    if (reg === "") return;
    this.#snapshot(buffer);
    const text = buffer.text;
    const cursor = buffer.cursor;
    if (linewise) {
      const lines = Array.from({ length: count }, () => reg).join("\n");
      if (after) {
        const end = lineEnd(text, cursor);
        buffer.splice(end, end, `\n${lines}`);
        buffer.moveTo(end + 1);
      } else {
        const start = lineStart(text, cursor);
        buffer.splice(start, start, `${lines}\n`);
        buffer.moveTo(start);
      }
      return;
    }
    const chunk = reg.repeat(count);
    const at = after && cursor < lineEnd(text, cursor) ? cursor + 1 : cursor;
    buffer.splice(at, at, chunk);
    buffer.moveTo(at + chunk.length - 1);
  }

  /** In normal mode the cursor sits on a character, never past the line's last one. */
  #clampNormal(buffer: EditBuffer): void {
    const text = buffer.text;
    const cursor = buffer.cursor;
    if (cursor > lineStart(text, cursor) && cursor === lineEnd(text, cursor)) buffer.left();
  }
}
