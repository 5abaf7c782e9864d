/**
 * Where a streamed Markdown answer can be cut: the end of its stable
 * prefix, the blocks that nothing after them can change any more. It reads
 * complete lines only, each once, and knows just enough Markdown for that:
 *
 * - A blank line ends the block before it (a paragraph, a heading, a quote,
 *   a table, a rule), except inside a fenced code block.
 * - A fenced code block (``` or ~~~, also in a list item or a quote) ends
 *   at its closing fence, one of the same character at least as long; one
 *   never closed holds everything after it until the answer ends.
 * - A list, and indented code, go on after a blank line when the next line
 *   is indented or is another item: they end only at the first line after
 *   a blank one that is neither.
 *
 * Two blocks with no blank line between them (a heading and its paragraph,
 * a paragraph and a fence) stay one piece: cutting there would need the
 * rules for which block may interrupt which, and waiting costs nothing
 * but a longer live preview. The rule is that a cut never changes how the
 * answer is laid out: rendering the pieces one after the other gives what
 * rendering the whole answer gives.
 */

/** An item's marker: `-`, `+`, `*`, or a number with `.` or `)`, then a space (or nothing). */
const LIST_ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;
/** What may stand before a fence on its line: quote marks and a list item's marker. */
const FENCE = /^(?:[ \t]*>)*[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})(.*)$/;
const BLANK = /^[ \t]*$/;
/** Four columns of indentation: indented code. */
const INDENTED = /^(?: {4}|[ \t]*\t)/;

/** Columns of indentation (a tab to the next multiple of 4). */
function indentOf(line: string): number {
  let column = 0;
  for (const c of line) {
    if (c === " ") column++;
    else if (c === "\t") column += 4 - (column % 4);
    else break;
  }
  return column;
}

export class BlockSplitter {
  /** Offset of the first line not read yet. */
  #scanned = 0;
  /** The end of the stable prefix so far. */
  #stable = 0;
  /**
   * The open fence: its character and length, whether it is in a quote
   * (a line without `>` ends the quote and the fence with it), and the
   * column its container's content starts at (a list item's; a line
   * indented less ends the item and the fence with it).
   */
  #fence: { char: string; length: number; quoted: boolean; column: number } | undefined;
  /** The open block has a non-blank line. */
  #started = false;
  /** The open block is a list or indented code: a blank line may not end it. */
  #continues = false;
  /** A blank line came after such a block: the next non-blank line decides. */
  #blankAfter = false;
  /** Where the blocks are is no longer known for sure: the rest is one piece. */
  #lost = false;

  /**
   * Reads the complete lines of `text` not read yet (`text` only grows
   * between calls, but for what {@link drop} took off its start) and
   * returns the length of its stable prefix.
   */
  scan(text: string): number {
    for (;;) {
      const newline = text.indexOf("\n", this.#scanned);
      if (newline < 0) break;
      const start = this.#scanned;
      this.#scanned = newline + 1;
      const raw = text.slice(start, newline);
      this.#line(raw.endsWith("\r") ? raw.slice(0, -1) : raw, start, newline + 1);
    }
    return this.#stable;
  }

  /** The first `length` characters were taken (at most the stable prefix): offsets move with them. */
  drop(length: number): void {
    this.#scanned -= length;
    this.#stable -= length;
  }

  #line(line: string, start: number, end: number): void {
    const fence = this.#fence;
    if (fence !== undefined) {
      const ended = fence.quoted
        ? !/^[ \t]*>/.test(line)
        : !BLANK.test(line) && indentOf(line) < fence.column;
      if (!ended) {
        if (this.#closes(line, fence)) {
          this.#fence = undefined;
          // A fence in a quote or a list ends only its own block.
          if (!this.#continues && !fence.quoted && fence.column === 0) this.#cut(end);
        }
        return;
      }
      // Its container ended, and the fence with it: the line is read as any other. Unless that was a
      // quote's, which ends at the first line without `>`, whether the fence ended depends on which
      // list item it was in, which is not followed here: no cut is made in this answer any more.
      this.#fence = undefined;
      if (!fence.quoted) this.#lost = true;
    }
    if (BLANK.test(line)) {
      if (!this.#started) return;
      if (this.#continues) this.#blankAfter = true;
      else this.#cut(end);
      return;
    }
    if (this.#blankAfter) {
      this.#blankAfter = false;
      // Not indented and not an item: the list (or indented code) ended with the blank line(s) before.
      if (!/^[ \t]/.test(line) && !LIST_ITEM.test(line)) this.#cut(start);
    }
    this.#started = true;
    const item = LIST_ITEM.test(line);
    // A line indented 4 may start indented code (after a quote, say), which a blank line does not end.
    if (item || INDENTED.test(line)) this.#continues = true;
    const open = FENCE.exec(line);
    // A backtick fence's info string has no backtick (``` a ``` is inline code).
    const quoted = /^[ \t]*>/.test(line);
    // Indented 4 or more, outside a list, it is a paragraph's line or indented code.
    const fenceAt = open && (quoted || item || this.#continues || indentOf(line) <= 3);
    if (fenceAt && !(open[1]!.startsWith("`") && open[2]!.includes("`"))) {
      const marks = open[1]!;
      // In a list item (after its marker, or indented under it) the item's content starts where the fence does.
      const nested = !quoted && (item || (this.#continues && indentOf(line) > 0));
      const column = nested ? line.indexOf(marks) : 0;
      this.#fence = { char: marks[0]!, length: marks.length, quoted, column };
    }
  }

  /** A closing fence: the same character, at least as many, indented at most 3 past its container's column. */
  #closes(line: string, fence: { char: string; length: number; quoted: boolean; column: number }): boolean {
    const inner = fence.quoted ? line.replace(/^(?:[ \t]*>)+ ?/, "") : line;
    if (indentOf(inner) > fence.column + 3) return false;
    const body = inner.trim();
    return body.length >= fence.length && body === fence.char.repeat(body.length);
  }

  /** The stable prefix now ends at `at`, and a new block starts there. */
  #cut(at: number): void {
    if (this.#lost) return;
    this.#stable = at;
    this.#started = false;
    this.#continues = false;
    this.#blankAfter = false;
  }
}
