/**
 * The text being typed at the prompt and the cursor in it: a multi-line
 * string edited the way shells and editors do (grapheme-wise moves, word
 * moves, kill to start/end of the line, up/down between lines). Pure: no
 * terminal here, so it is tested on its own.
 */

import { graphemes } from "../text-width.ts";

/** Offsets (UTF-16) where grapheme clusters start, plus the end. */
function boundaries(text: string): number[] {
  const out: number[] = [];
  for (const { index } of graphemes(text)) out.push(index);
  out.push(text.length);
  return out;
}

export class EditBuffer {
  #text = "";
  #cursor = 0;
  /** Texts edited as one unit (collapsed pastes): a move or a delete takes the whole of one. */
  #atoms: readonly string[] = [];

  get text(): string {
    return this.#text;
  }

  /** Cursor offset in UTF-16 code units, always at a grapheme boundary. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Replaces the text; the cursor goes to its end (or to `cursor`). */
  set(text: string, cursor = text.length): void {
    this.#text = text;
    this.#cursor = this.#snap(Math.max(0, Math.min(cursor, text.length)));
  }

  /** Moves the cursor to `offset` (snapped to a grapheme boundary). */
  moveTo(offset: number): void {
    this.#cursor = this.#snap(Math.max(0, Math.min(offset, this.#text.length)));
  }

  /** Replaces `[start, end)` with `text`; the cursor goes after it. */
  splice(start: number, end: number, text: string): void {
    this.#text = this.#text.slice(0, start) + text + this.#text.slice(end);
    this.#cursor = start + text.length;
  }

  /** Sets the texts that are edited as units (see #atoms). */
  set atoms(list: readonly string[]) {
    this.#atoms = list;
  }

  insert(text: string): void {
    this.#text = this.#text.slice(0, this.#cursor) + text + this.#text.slice(this.#cursor);
    this.#cursor += text.length;
  }

  left(): void {
    this.#cursor = this.#prev();
  }

  right(): void {
    this.#cursor = this.#next();
  }

  backspace(): void {
    const at = this.#prev();
    this.#text = this.#text.slice(0, at) + this.#text.slice(this.#cursor);
    this.#cursor = at;
  }

  deleteForward(): void {
    this.#text = this.#text.slice(0, this.#cursor) + this.#text.slice(this.#next());
  }

  /** The atom that ends at `offset` (for moves and deletes to the left), if any. */
  #atomBefore(offset: number): number | undefined {
    for (const atom of this.#atoms)
      if (atom !== "" && this.#text.slice(offset - atom.length, offset) === atom) return offset - atom.length;
    return undefined;
  }

  /** The end of the atom that starts at `offset`, if any. */
  #atomAfter(offset: number): number | undefined {
    for (const atom of this.#atoms)
      if (atom !== "" && this.#text.startsWith(atom, offset)) return offset + atom.length;
    return undefined;
  }

  /** To the start of the current line. */
  home(): void {
    this.#cursor = this.#lineStart();
  }

  /** To the end of the current line. */
  end(): void {
    this.#cursor = this.#lineEnd();
  }

  wordLeft(): void {
    this.#cursor = this.#wordStart();
  }

  wordRight(): void {
    const rest = this.#text.slice(this.#cursor);
    const match = /^\s*\S+/.exec(rest);
    this.#cursor += match ? match[0].length : rest.length;
  }

  deleteWordLeft(): void {
    const at = this.#wordStart();
    this.#text = this.#text.slice(0, at) + this.#text.slice(this.#cursor);
    this.#cursor = at;
  }

  /** Ctrl-U: deletes back to the start of the line (or the newline before it, at a line's start). */
  killToStart(): void {
    let at = this.#lineStart();
    if (at === this.#cursor && at > 0) at -= 1;
    this.#text = this.#text.slice(0, at) + this.#text.slice(this.#cursor);
    this.#cursor = at;
  }

  /** Ctrl-K: deletes to the end of the line. */
  killToEnd(): void {
    let end = this.#lineEnd();
    if (end === this.#cursor && end < this.#text.length) end += 1;
    this.#text = this.#text.slice(0, this.#cursor) + this.#text.slice(end);
  }

  /** Whether the cursor is on the first / last line (where Up / Down walk the history instead). */
  get onFirstLine(): boolean {
    return !this.#text.slice(0, this.#cursor).includes("\n");
  }

  get onLastLine(): boolean {
    return !this.#text.slice(this.#cursor).includes("\n");
  }

  /** Moves to the line above / below, keeping the column as far as the line allows. */
  lineUp(): void {
    if (this.onFirstLine) return;
    const column = this.#cursor - this.#lineStart();
    const prevEnd = this.#lineStart() - 1;
    const prevStart = this.#text.lastIndexOf("\n", prevEnd - 1) + 1;
    this.#cursor = this.#snap(Math.min(prevStart + column, prevEnd));
  }

  lineDown(): void {
    if (this.onLastLine) return;
    const column = this.#cursor - this.#lineStart();
    const nextStart = this.#lineEnd() + 1;
    const nextEndRaw = this.#text.indexOf("\n", nextStart);
    const nextEnd = nextEndRaw === -1 ? this.#text.length : nextEndRaw;
    this.#cursor = this.#snap(Math.min(nextStart + column, nextEnd));
  }

  #lineStart(): number {
    return this.#text.lastIndexOf("\n", this.#cursor - 1) + 1;
  }

  #lineEnd(): number {
    const end = this.#text.indexOf("\n", this.#cursor);
    return end === -1 ? this.#text.length : end;
  }

  #wordStart(): number {
    const before = this.#text.slice(0, this.#cursor);
    const match = /\S+\s*$/.exec(before);
    return match ? match.index : Math.max(0, before.trimEnd().length);
  }

  #prev(): number {
    const atom = this.#atomBefore(this.#cursor);
    if (atom !== undefined) return atom;
    let prev = 0;
    for (const b of boundaries(this.#text)) {
      if (b >= this.#cursor) break;
      prev = b;
    }
    return prev;
  }

  #next(): number {
    const atom = this.#atomAfter(this.#cursor);
    if (atom !== undefined) return atom;
    for (const b of boundaries(this.#text)) if (b > this.#cursor) return b;
    return this.#text.length;
  }

  /** The nearest grapheme boundary at or before `offset`. */
  #snap(offset: number): number {
    let at = 0;
    for (const b of boundaries(this.#text)) {
      if (b > offset) break;
      at = b;
    }
    return at;
  }
}
