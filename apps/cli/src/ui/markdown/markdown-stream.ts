/**
 * Markdown while it streams. The block splitter finds the stable prefix
 * of what came (closed paragraphs and fences, lists ended by a blank line,
 * tables); each such piece is lexed and rendered once, when it is complete,
 * and written for good, so what is on screen never has to be redrawn. Only
 * the block still open is lexed again, for its live preview, and only when
 * its text or the layout changed. What is left goes out at the end of the
 * message.
 */
import type { Token } from "markdown-it";
import { BlockSplitter } from "./block-splitter.ts";
import type { MarkdownOptions } from "./render-markdown.ts";

/** What the lazily loaded renderer offers (render-markdown.ts). */
export interface MarkdownModule {
  lexMarkdown(source: string): Token[];
  renderTokens(tokens: readonly Token[], options: MarkdownOptions): string;
}

export class MarkdownStream {
  readonly #md: MarkdownModule;
  readonly #options: () => MarkdownOptions;
  readonly #write: (text: string) => void;
  #splitter = new BlockSplitter();
  #pending = "";
  /** The last preview, with the text and layout it was rendered from. */
  #preview: { source: string; key: string; text: string } | undefined;

  readonly #failed: ((error: unknown) => void) | undefined;

  /** `failed` hears of a block that could not be rendered (it is then shown as the text it is). */
  constructor(
    md: MarkdownModule,
    options: () => MarkdownOptions,
    write: (text: string) => void,
    failed?: (error: unknown) => void,
  ) {
    this.#md = md;
    this.#options = options;
    this.#write = write;
    this.#failed = failed;
  }

  /** Text not rendered yet. */
  get pending(): string {
    return this.#pending;
  }

  /**
   * The pending text rendered as it would be if it ended now (a live preview
   * of the block being written), but for code, shown without colours until
   * its block is written: highlighting a growing block again at every frame
   * would cost more the longer it gets, and the colours would shift as it
   * grew (an unclosed string colours all that follows).
   */
  preview(): string {
    if (this.#pending.trim() === "") return "";
    const { highlight: _, ...options } = this.#options();
    const key = `${options.width} ${options.style.theme}`;
    // Drawn again on every frame: rendered again only when the text or the layout changed.
    if (this.#preview?.source !== this.#pending || this.#preview.key !== key) {
      const text = this.#render(this.#pending, options).replace(/\n+$/, "");
      this.#preview = { source: this.#pending, key, text };
    }
    return this.#preview.text;
  }

  push(delta: string): void {
    this.#pending += delta;
    if (!delta.includes("\n")) return;
    const stable = this.#splitter.scan(this.#pending);
    if (stable === 0) return;
    const done = this.#pending.slice(0, stable);
    this.#splitter.drop(stable);
    // `pending` first: a writer that shows what is pending (a live preview) must not show this piece twice.
    this.#pending = this.#pending.slice(stable);
    this.#write(this.#render(done, this.#options()));
  }

  /** The message ended: render what is left. */
  end(): void {
    const rest = this.#pending;
    this.#pending = "";
    this.#splitter = new BlockSplitter();
    if (rest.trim() !== "") this.#write(this.#render(rest, this.#options()));
  }

  /** The block rendered; should that fail, the text as it came, which loses nothing of the answer. */
  #render(source: string, options: MarkdownOptions): string {
    try {
      return this.#md.renderTokens(this.#md.lexMarkdown(source), options);
    } catch (error) {
      this.#failed?.(error);
      return source.endsWith("\n") ? source : `${source}\n`;
    }
  }
}
