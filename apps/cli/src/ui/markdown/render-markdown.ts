/**
 * Markdown for the terminal: marked's tokens drawn with ANSI styles.
 * Headings bold (level 1 underlined too), emphasis italic, inline code
 * coloured, links as their text with the address after it, lists with
 * bullets or numbers (nested by indentation, task boxes), block quotes
 * behind a bar, tables boxed and fitted to the width (cells wrap), code
 * blocks highlighted by language through a callback.
 *
 * This module is imported lazily (it pulls in marked): `--version`,
 * `--help` and print mode never load it.
 */

import { styleText } from "node:util";
import { marked, type Token, type Tokens } from "marked";
import { visibleWidth, wrapWords } from "../../text-width.ts";

export interface MarkdownOptions {
  /** Columns available. */
  width: number;
  /** Colours a code block; undefined leaves it plain. */
  highlight?: (code: string, lang: string | undefined) => string | undefined;
}

type Format = Parameters<typeof styleText>[0];
const paint = (format: Format, text: string) => styleText(format, text, { validateStream: false });

/** Splits markdown into top-level tokens (each with its `raw` source). */
export function lexMarkdown(source: string): Token[] {
  return marked.lexer(source, { gfm: true });
}

/** Renders top-level tokens as terminal lines (joined, ending with a newline when non-empty). */
export function renderTokens(tokens: readonly Token[], options: MarkdownOptions): string {
  const lines: string[] = [];
  for (const token of tokens) lines.push(...block(token, options));
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function block(token: Token, o: MarkdownOptions): string[] {
  switch (token.type) {
    case "space":
      // Blocks end with their own blank line.
      return [];
    case "heading": {
      const t = token as Tokens.Heading;
      const text = inline(t.tokens);
      return [t.depth === 1 ? paint(["bold", "underline"], text) : paint("bold", text), ""];
    }
    case "paragraph":
      return [...inline((token as Tokens.Paragraph).tokens).split("\n"), ""];
    case "text": {
      const t = token as Tokens.Text;
      return (t.tokens ? inline(t.tokens) : t.text).split("\n");
    }
    case "code":
      return [...code(token as Tokens.Code, o), ""];
    case "blockquote": {
      const inner = (token as Tokens.Blockquote).tokens.flatMap((t) =>
        block(t, { ...o, width: o.width - 2 }),
      );
      while (inner.at(-1) === "") inner.pop();
      return [...inner.map((l) => `${paint("dim", "│")} ${paint("italic", l)}`), ""];
    }
    case "list":
      return [...list(token as Tokens.List, o), ""];
    case "table":
      return [...table(token as Tokens.Table, o), ""];
    case "hr":
      return [paint("dim", "─".repeat(Math.max(3, Math.min(o.width, 60)))), ""];
    case "html":
    case "def":
      return token.raw.replace(/\n+$/, "").split("\n");
    default:
      return "raw" in token && typeof token.raw === "string" ? token.raw.replace(/\n+$/, "").split("\n") : [];
  }
}

function code(token: Tokens.Code, o: MarkdownOptions): string[] {
  const lang = token.lang?.trim().split(/\s+/)[0] || undefined;
  const body = token.text.replace(/\n+$/, "");
  const coloured = o.highlight?.(body, lang) ?? body;
  const bar = paint("dim", "│");
  const label = lang ? [paint("dim", `╭ ${lang}`)] : [];
  return [...label, ...coloured.split("\n").map((line) => `${bar} ${line}`)];
}

function list(token: Tokens.List, o: MarkdownOptions): string[] {
  const out: string[] = [];
  const start = typeof token.start === "number" ? token.start : 1;
  token.items.forEach((item, i) => {
    const marker = token.ordered ? `${start + i}.` : "•";
    const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    const head = `${paint("dim", marker)} ${box}`;
    const pad = " ".repeat(visibleWidth(marker) + 1);
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
  const header = token.header.map((c) => inline(c.tokens));
  const rows = token.rows.map((r) => r.map((c) => inline(c.tokens)));
  const n = header.length;
  const natural = Array.from({ length: n }, (_, i) =>
    Math.max(3, visibleWidth(header[i] ?? ""), ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  // Borders and padding take 3 columns per cell plus 1.
  const room = Math.max(n * 3, o.width - (3 * n + 1));
  const widths = fit(natural, room);
  const line = (l: string, m: string, r: string) =>
    paint("dim", `${l}${widths.map((w) => "─".repeat(w + 2)).join(m)}${r}`);
  const row = (cells: string[], bold: boolean) => {
    const wrapped = cells.map((c, i) => wrapWords(c, widths[i] ?? 3));
    const height = Math.max(1, ...wrapped.map((w) => w.length));
    const lines: string[] = [];
    for (let k = 0; k < height; k++) {
      const parts = wrapped.map((w, i) => {
        const text = w[k] ?? "";
        const cell = align(text, widths[i] ?? 3, token.align[i] ?? null);
        return bold ? paint("bold", cell) : cell;
      });
      lines.push(`${paint("dim", "│")} ${parts.join(` ${paint("dim", "│")} `)} ${paint("dim", "│")}`);
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

/** Shrinks the widest columns until the widths fit in `room`. */
function fit(natural: number[], room: number): number[] {
  const widths = [...natural];
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > room) {
    const widest = widths.indexOf(Math.max(...widths));
    if ((widths[widest] ?? 0) <= 3) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
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

function inline(tokens: readonly Token[] | undefined): string {
  let out = "";
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "strong":
        out += paint("bold", inline((token as Tokens.Strong).tokens));
        break;
      case "em":
        out += paint("italic", inline((token as Tokens.Em).tokens));
        break;
      case "del":
        out += paint("strikethrough", inline((token as Tokens.Del).tokens));
        break;
      case "codespan":
        out += paint("cyan", decode((token as Tokens.Codespan).text));
        break;
      case "br":
        out += "\n";
        break;
      case "link": {
        const t = token as Tokens.Link;
        const text = inline(t.tokens);
        const plain = decode(t.text);
        out +=
          plain === t.href || t.autolink
            ? paint(["underline", "blue"], t.href)
            : `${paint("underline", text)} ${paint("dim", `(${t.href})`)}`;
        break;
      }
      case "image": {
        const t = token as Tokens.Image;
        out += paint("dim", `[image: ${t.text || t.href}] (${t.href})`);
        break;
      }
      case "text": {
        const t = token as Tokens.Text;
        out += t.tokens ? inline(t.tokens) : decode(t.text);
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
