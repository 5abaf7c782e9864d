/**
 * Plain text while it streams (thinking, or an answer that arrives before
 * the Markdown renderer is loaded): held until a line is complete, then
 * laid out (word-wrapped to the width of the moment) and written; the
 * unfinished line stays `pending` for a live preview, laid out the same way.
 */
export class PlainStream {
  readonly #layout: (text: string) => string;
  readonly #write: (text: string) => void;
  #pending = "";

  /** `layout` turns complete lines (no final newline) into the lines to show, joined. */
  constructor(layout: (text: string) => string, write: (text: string) => void) {
    this.#layout = layout;
    this.#write = write;
  }

  /** Text not written yet. */
  get pending(): string {
    return this.#pending;
  }

  /** The pending text laid out as it would be written now. */
  preview(): string {
    return this.#pending === "" ? "" : this.#layout(this.#pending);
  }

  push(delta: string): void {
    this.#pending += delta;
    const cut = delta.includes("\n") ? this.#pending.lastIndexOf("\n") : -1;
    if (cut < 0) return;
    const done = this.#pending.slice(0, cut);
    // `pending` first: a writer that shows what is pending must not show these lines twice.
    this.#pending = this.#pending.slice(cut + 1);
    this.#write(`${this.#layout(done)}\n`);
  }

  /** The text ended: write what is left. */
  end(): void {
    const rest = this.#pending;
    this.#pending = "";
    if (rest !== "") this.#write(`${this.#layout(rest)}\n`);
  }
}
