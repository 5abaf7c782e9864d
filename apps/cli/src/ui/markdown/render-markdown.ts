/**
 * Markdown for the terminal: marked's tokens laid out at the terminal's
 * width and painted by the theme. Prose, headings, list items (their
 * further lines under the item's text), quotes (behind a bar) and table
 * cells are wrapped at word boundaries; only a word longer than a line is
 * broken. Headings bold (level 1 underlined too), emphasis italic, inline
 * code in the accent colour, links as their text with the address after
 * it, lists with bullets or numbers (nested, task boxes), tables boxed and
 * fitted to the width (or, when their columns cannot fit, each row as
 * `header: value` lines).
 *
 * Code blocks have nothing in front of their lines, so a mouse copy gets
 * the code as it is: the language above them, and each line on the theme's
 * code background. A long code line is not wrapped by us: the terminal
 * soft-wraps it, and terminals (and tmux) join a soft-wrapped line again
 * when it is copied, where a line we broke would be pasted as two and
 * a cut one would lose its end. Without colour the block is between
 * its fences (```), the only way to set it apart then.
 *
 * This module is imported lazily (it pulls in marked): `--version`,
 * `--help` and print mode never load it.
 */

import { Marked, type Token, type Tokens } from "marked";
import type { Style } from "../../style.ts";
import { visibleWidth, wrapWords } from "../../text-width.ts";

export interface MarkdownOptions {
  /** Columns available. */
  width: number;
  /** Colours and attributes (and whether there are any). */
  style: Style;
  /** Colours a code block; undefined leaves it plain. */
  highlight?: (code: string, lang: string | undefined, style: Style) => string | undefined;
}

/**
 * The lexer: GitHub-flavoured, without HTML blocks and setext headings
 * (`Title` over a line of `===` or `---`). Those two rules were most of
 * the lexer's time on a streamed answer (each is tried at every block, the
 * second with a look-ahead that grows with the paragraph); models write
 * neither, and what they would have been still shows: HTML as the text it
 * is, a setext heading as its line and a rule under it.
 */
const markdown = new Marked({ gfm: true, tokenizer: { html: () => undefined, lheading: () => undefined } });

/** Splits markdown into top-level tokens (each with its `raw` source). */
export function lexMarkdown(source: string): Token[] {
  return markdown.lexer(source);
}

/** Renders top-level tokens as terminal lines (joined, ending with a newline when non-empty). */
export function renderTokens(tokens: readonly Token[], options: MarkdownOptions): string {
  const lines: string[] = [];
  for (const token of tokens) lines.push(...block(token, options));
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Text wrapped to the width, each of its own lines (a hard break) wrapped on its own. */
const wrap = (text: string, width: number): string[] => wrapWords(text, Math.max(1, width));

function block(token: Token, o: MarkdownOptions): string[] {
  const s = o.style;
  switch (token.type) {
    case "space":
      // Blocks end with their own blank line.
      return [];
    case "heading": {
      const t = token as Tokens.Heading;
      // Without colour the marks say it is a heading.
      const text = s.enabled ? inline(t.tokens, s) : `${"#".repeat(t.depth)} ${inline(t.tokens, s)}`;
      return [...wrap(t.depth === 1 ? s.bold(s.underline(text)) : s.bold(text), o.width), ""];
    }
    case "paragraph":
      return [...wrap(inline((token as Tokens.Paragraph).tokens, s), o.width), ""];
    case "text": {
      const t = token as Tokens.Text;
      return wrap(t.tokens ? inline(t.tokens, s) : t.text, o.width);
    }
    case "code":
      return [...code(token as Tokens.Code, o), ""];
    case "blockquote": {
      const inner = (token as Tokens.Blockquote).tokens.flatMap((t) =>
        block(t, { ...o, width: o.width - 2 }),
      );
      while (inner.at(-1) === "") inner.pop();
      const bar = s.enabled ? s.dim("│") : ">";
      return [...inner.map((l) => (l === "" ? bar : `${bar} ${s.italic(l)}`)), ""];
    }
    case "list":
      return [...list(token as Tokens.List, o), ""];
    case "table":
      return [...table(token as Tokens.Table, o), ""];
    case "hr":
      return [s.dim("─".repeat(Math.max(3, Math.min(o.width, 60)))), ""];
    case "html":
    case "def":
      return token.raw.replace(/\n+$/, "").split("\n");
    default:
      return "raw" in token && typeof token.raw === "string" ? token.raw.replace(/\n+$/, "").split("\n") : [];
  }
}

function code(token: Tokens.Code, o: MarkdownOptions): string[] {
  const s = o.style;
  const lang = token.lang?.trim().split(/\s+/)[0] || undefined;
  const body = token.text.replace(/\n+$/, "");
  if (!s.enabled) return [`\`\`\`${lang ?? ""}`, ...body.split("\n"), "```"];
  const coloured = o.highlight?.(body, lang, s) ?? body;
  const label = lang ? [s.dim(lang)] : [];
  // The background goes to the line's end by an erase, which a line that reaches the edge must not
  // get (the cursor waits on its last column, and the erase would take that character).
  return [
    ...label,
    ...coloured.split("\n").map((line) => s.codeLine(line, visibleWidth(line) % (o.width + 1) !== 0)),
  ];
}

function list(token: Tokens.List, o: MarkdownOptions): string[] {
  const s = o.style;
  const out: string[] = [];
  const start = typeof token.start === "number" ? token.start : 1;
  token.items.forEach((item, i) => {
    const marker = token.ordered ? `${start + i}.` : s.enabled ? "•" : "-";
    const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    const head = `${s.dim(marker)} ${box}`;
    // Every line of the item starts under its first word: a hanging indent.
    const pad = " ".repeat(visibleWidth(marker) + 1 + visibleWidth(box));
    let inner = item.tokens.flatMap((t) => block(t, { ...o, width: o.width - pad.length }));
    // A tight list keeps its items' lines together.
    if (!token.loose) inner = inner.filter((l) => l !== "");
    while (inner.at(-1) === "") inner.pop();
    const [first = "", ...rest] = inner;
    out.push(`${head}${first}`, ...rest.map((l) => (l === "" ? "" : `${pad}${l}`)));
  });
  return out;
}

function table(token: Tokens.Table, o: MarkdownOptions): string[] {
  const s = o.style;
  const header = token.header.map((c) => inline(c.tokens, s));
  const rows = token.rows.map((r) => r.map((c) => inline(c.tokens, s)));
  const n = header.length;
  const cells = (i: number) => [header[i] ?? "", ...rows.map((r) => r[i] ?? "")];
  const natural = Array.from({ length: n }, (_, i) => Math.max(1, ...cells(i).map((c) => visibleWidth(c))));
  // A column is never narrower than its longest word: words stay whole.
  const least = Array.from({ length: n }, (_, i) =>
    Math.max(1, ...cells(i).flatMap((c) => c.split(/\s+/).map((w) => visibleWidth(w)))),
  );
  // Borders and padding take 3 columns per cell plus 1.
  const widths = fit(natural, least, o.width - (3 * n + 1));
  if (widths === undefined) return records(header, rows, o);
  const bar = s.dim("│");
  const line = (l: string, m: string, r: string) =>
    s.dim(`${l}${widths.map((w) => "─".repeat(w + 2)).join(m)}${r}`);
  const row = (cells: string[], bold: boolean) => {
    const wrapped = cells.map((c, i) => wrap(c, widths[i] ?? 1));
    const height = Math.max(1, ...wrapped.map((w) => w.length));
    const lines: string[] = [];
    for (let k = 0; k < height; k++) {
      const parts = wrapped.map((w, i) => {
        const cell = align(w[k] ?? "", widths[i] ?? 1, token.align[i] ?? null);
        return bold ? s.bold(cell) : cell;
      });
      lines.push(`${bar} ${parts.join(` ${bar} `)} ${bar}`);
    }
    return lines;
  };
  return [
    line("┌", "┬", "┐"),
    ...row(header, true),
    line("├", "┼", "┤"),
    ...rows.flatMap((r) => row(r, false)),
    line("└", "┴", "┘"),
  ];
}

/** A table too wide for the terminal: each row as `header: value` lines, rows apart. */
function records(header: readonly string[], rows: readonly string[][], o: MarkdownOptions): string[] {
  const s = o.style;
  const out: string[] = [];
  rows.forEach((row, r) => {
    if (r > 0) out.push(s.dim("─".repeat(Math.min(o.width, 20))));
    header.forEach((name, i) => {
      out.push(...wrap(`${s.bold(`${name}:`)} ${row[i] ?? ""}`, o.width));
    });
  });
  return out;
}

/**
 * Column widths that fit in `room`: the widest columns give way first, none
 * below its least width; undefined when even the least widths do not fit.
 */
function fit(natural: readonly number[], least: readonly number[], room: number): number[] | undefined {
  const widths = natural.map((w, i) => Math.max(w, least[i] ?? 1));
  let total = widths.reduce((a, b) => a + b, 0);
  if (least.reduce((a, b) => a + b, 0) > room) return undefined;
  while (total > room) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++)
      if ((widths[i] ?? 0) > (least[i] ?? 1) && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0)))
        widest = i;
    widths[widest] = (widths[widest] ?? 1) - 1;
    total -= 1;
  }
  return widths;
}

function align(text: string, width: number, how: "center" | "left" | "right" | null): string {
  const gap = Math.max(0, width - visibleWidth(text));
  if (how === "right") return " ".repeat(gap) + text;
  if (how === "center") return " ".repeat(Math.floor(gap / 2)) + text + " ".repeat(Math.ceil(gap / 2));
  return text + " ".repeat(gap);
}

function inline(tokens: readonly Token[] | undefined, s: Style): string {
  let out = "";
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "strong":
        out += s.bold(inline((token as Tokens.Strong).tokens, s));
        break;
      case "em":
        out += s.italic(inline((token as Tokens.Em).tokens, s));
        break;
      case "del":
        out += s.strikethrough(inline((token as Tokens.Del).tokens, s));
        break;
      case "codespan": {
        const text = decode((token as Tokens.Codespan).text);
        // Without colour the backticks say it is code.
        out += s.enabled ? s.cyan(text) : `\`${text}\``;
        break;
      }
      case "br":
        out += "\n";
        break;
      case "link": {
        const t = token as Tokens.Link;
        const text = inline(t.tokens, s);
        const plain = decode(t.text);
        out +=
          plain === t.href || t.autolink
            ? s.underline(s.blue(t.href))
            : `${s.underline(text)} ${s.dim(`(${t.href})`)}`;
        break;
      }
      case "image": {
        const t = token as Tokens.Image;
        out += s.dim(`[image: ${t.text || t.href}] (${t.href})`);
        break;
      }
      case "text": {
        const t = token as Tokens.Text;
        out += t.tokens ? inline(t.tokens, s) : decode(t.text);
        break;
      }
      case "escape":
        out += decode((token as Tokens.Escape).text);
        break;
      default:
        out += "raw" in token && typeof token.raw === "string" ? token.raw : "";
    }
  }
  return out;
}

/** marked escapes `&<>"'` in text; the terminal wants the characters. */
function decode(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}
