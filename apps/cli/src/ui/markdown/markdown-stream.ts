/**
 * Markdown while it streams: text is held until a block is complete (a
 * paragraph ended by a blank line, a closed code fence, the next block
 * starting) and each complete block is rendered then, so what is on screen
 * never has to be redrawn. The last, possibly unfinished block goes out at
 * the end of the message.
 */
import type { Token } from "marked";
import type { MarkdownOptions } from "./render-markdown.ts";

/** What the lazily loaded renderer offers (render-markdown.ts). */
export interface MarkdownModule {
  lexMarkdown(source: string): Token[];
  renderTokens(tokens: readonly Token[], options: MarkdownOptions): string;
}

/** A line that can end a block: blank, or a code fence. */
const BLOCK_END = /(^|\n)[ \t]*(\n|(```|~~~)[^\n]*\n)/;

export class MarkdownStream {
  readonly #md: MarkdownModule;
  readonly #options: () => MarkdownOptions;
  readonly #write: (text: string) => void;
  #pending = "";
  /** The last preview, with the text and layout it was rendered from. */
  #preview: { source: string; key: string; text: string } | undefined;
  /** How far into `pending` the lines were looked at for a block's end. */
  #checked = 0;

  constructor(md: MarkdownModule, options: () => MarkdownOptions, write: (text: string) => void) {
    this.#md = md;
    this.#options = options;
    this.#write = write;
  }

  /** Text not rendered yet. */
  get pending(): string {
    return this.#pending;
  }

  /** The pending text rendered as it would be if it ended now (a live preview of the block being written). */
  preview(): string {
    if (this.#pending.trim() === "") return "";
    const options = this.#options();
    const key = `${options.width} ${options.style.theme}`;
    // Drawn again on every frame: rendered again only when the text or the layout changed.
    if (this.#preview?.source !== this.#pending || this.#preview.key !== key) {
      const text = this.#md.renderTokens(this.#md.lexMarkdown(this.#pending), options).replace(/\n+$/, "");
      this.#preview = { source: this.#pending, key, text };
    }
    return this.#preview.text;
  }

  push(delta: string): void {
    this.#pending += delta;
    if (!delta.includes("\n")) return;
    // Lexing is what costs: it is done only when a line that can end a block came (a blank line, a
    // fence). A block followed directly by another (a heading, then its paragraph) goes out with the
    // next one; until then the live preview shows it.
    const end = this.#pending.lastIndexOf("\n") + 1;
    const lines = this.#pending.slice(this.#checked, end);
    this.#checked = end;
    if (BLOCK_END.test(lines)) {
      this.#drain(false);
      this.#checked = this.#pending.lastIndexOf("\n") + 1;
    }
  }

  /** The message ended: render what is left. */
  end(): void {
    this.#drain(true);
  }

  #drain(final: boolean): void {
    const cut = final ? this.#pending.length : this.#pending.lastIndexOf("\n") + 1;
    if (cut === 0) return;
    const source = this.#pending.slice(0, cut);
    const tokens = this.#md.lexMarkdown(source);
    let take = tokens.length;
    if (!final) {
      let last = tokens.length - 1;
      while (last >= 0 && tokens[last]?.type === "space") last--;
      if (last < 0) return;
      const lastToken = tokens[last];
      // The last block is complete when a blank line follows it (a code fence: when it is closed).
      const closed =
        lastToken?.type === "code"
          ? /^\s*(```|~~~)/.test(lastToken.raw) &&
            /\n\s*(```|~~~)[^\n]*\n?$/.test(lastToken.raw.trimEnd() + "\n")
          : last < tokens.length - 1 && /\n\s*\n$/.test(source);
      take = closed ? last + 1 : last;
    }
    if (take === 0) return;
    const consumed = tokens
      .slice(0, take)
      .map((t) => t.raw)
      .join("");
    // The lexer's raw pieces add up to the source; if they ever do not, wait for the end rather than lose text.
    if (!source.startsWith(consumed)) {
      if (!final) return;
      this.#pending = "";
      this.#write(source);
      return;
    }
    // `pending` first: a writer that shows what is pending (a live preview line) must not show this block twice.
    this.#pending = this.#pending.slice(consumed.length);
    const rest = final ? this.#pending : "";
    if (final) {
      this.#pending = "";
      this.#checked = 0;
    }
    this.#write(this.#md.renderTokens(tokens.slice(0, take), this.#options()));
    if (rest !== "") this.#write(rest.endsWith("\n") ? rest : `${rest}\n`);
  }
}
