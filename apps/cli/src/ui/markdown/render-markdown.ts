/**
 * Markdown for the terminal: markdown-it's tokens laid out at the
 * terminal's width and painted by the theme. Prose, headings, list items
 * (their further lines under the item's text), quotes (behind a bar) and
 * table cells are wrapped at word boundaries; only a word longer than a
 * line is broken. Headings bold (level 1 underlined too), emphasis italic,
 * inline code in the accent colour, links as their text with the address
 * after it, lists with bullets or numbers (nested, task boxes), tables boxed
 * and fitted to the width (or, when their columns cannot fit, each row as
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
 * Why markdown-it: an answer is rendered by a process that has never run
 * the parser before. On that first run marked (the parser used before)
 * took some 16 ms of CPU to lex a 24 KB answer, most of it first-run work
 * (its large regular expressions compiled, the same lex again took 5 ms);
 * markdown-it, which reads by character codes, took 5 ms
 * (docs/cli-render-cost.md#why-markdown-it).
 *
 * This module is imported lazily (it pulls in markdown-it): `--version`,
 * `--help` and print mode never load it.
 */

import MarkdownIt, { type Token } from "markdown-it";
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
 * The parser: CommonMark with GitHub's tables, strikethrough and bare
 * addresses as links (`https://...`, e-mail), without
 * HTML, setext headings (`Title` over a line of `===` or `---`) and link
 * reference definitions. Models write none of them, and what they would
 * have been still shows: HTML as the text it is, a setext heading as its
 * line and a rule under it, a definition as its line (an answer is
 * rendered block by block as it streams, where a definition could not
 * reach the links before it anyway). Task boxes (`- [ ] item`) are
 * GitHub's too; they are read here, from the item's first text.
 */
const markdown = new MarkdownIt("default", { html: false, linkify: true, typographer: false }).disable([
  "lheading",
  "reference",
]);
// Only addresses with a scheme (and e-mail addresses), as GitHub does: a bare `AGENTS.md` or `setup.py`
// is a file name, not the domain of Moldova or Paraguay.
markdown.linkify.set({ fuzzyLink: false });

/** GitHub's task box at the start of an item's text: `[ ] ` or `[x] `. */
const TASK = /^\[([ xX])\][ \t]+/;

// A list item whose text starts with a task box: the item is marked (`meta.task`, true when checked)
// and the box is taken off its text.
markdown.core.ruler.push("task_box", (state) => {
  const tokens = state.tokens;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [item, paragraph, text] = [tokens[i]!, tokens[i + 1]!, tokens[i + 2]!];
    if (item.type !== "list_item_open" || paragraph.type !== "paragraph_open" || text.type !== "inline")
      continue;
    const first = text.children?.[0];
    const box = first?.type === "text" ? TASK.exec(first.content) : null;
    if (!first || !box) continue;
    first.content = first.content.slice(box[0].length);
    item.meta = { ...item.meta, task: box[1] !== " " };
  }
  return false;
});

/** Splits markdown into tokens (markdown-it's flat stream of opening, closing and leaf tokens). */
export function lexMarkdown(source: string): Token[] {
  return markdown.parse(source, {});
}

/** A token with what lies between it and its closing token. */
interface Node {
  token: Token;
  children: Node[];
}

/** markdown-it's flat stream as a tree: each opening token holds what comes before its closing one. */
function tree(tokens: readonly Token[]): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  for (const token of tokens) {
    if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
      continue;
    }
    const node: Node = { token, children: [] };
    stack.at(-1)?.push(node);
    if (token.nesting === 1) stack.push(node.children);
  }
  return root;
}

/** Renders tokens as terminal lines (joined, ending with a newline when non-empty). */
export function renderTokens(tokens: readonly Token[], options: MarkdownOptions): string {
  const lines = tree(tokens).flatMap((node) => block(node, options));
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** A whole Markdown text (a resumed answer, a plan) as terminal lines, without a trailing empty one. */
export function markdownLines(source: string, options: MarkdownOptions): string[] {
  const text = renderTokens(lexMarkdown(source), options).replace(/\n+$/, "");
  return text === "" ? [] : text.split("\n");
}

/** Text wrapped to the width, each of its own lines (a hard break) wrapped on its own. */
const wrap = (text: string, width: number): string[] => wrapWords(text, Math.max(1, width));

/** An attribute of a token (`href`, `start`, `style`). */
const attr = (token: Token, name: string): string | undefined => token.attrs?.find(([n]) => n === name)?.[1];

/** The inline tokens of a block that holds text (a paragraph, a heading, a table cell). */
const inlineOf = (node: Node): readonly Token[] =>
  node.children.find((c) => c.token.type === "inline")?.token.children ?? [];

function block(node: Node, o: MarkdownOptions): string[] {
  const s = o.style;
  const { token } = node;
  switch (token.type) {
    case "heading_open": {
      const text = inline(inlineOf(node), s);
      // Without colour the marks say it is a heading.
      const shown = s.enabled ? text : `${"#".repeat(Number(token.tag.slice(1)))} ${text}`;
      return [...wrap(token.tag === "h1" ? s.bold(s.underline(shown)) : s.bold(shown), o.width), ""];
    }
    case "paragraph_open": {
      const lines = wrap(inline(inlineOf(node), s), o.width);
      // A tight list's item text: no blank line after it.
      return token.hidden ? lines : [...lines, ""];
    }
    case "fence":
    case "code_block":
      return [...code(token, o), ""];
    case "blockquote_open": {
      const inner = node.children.flatMap((c) => block(c, { ...o, width: o.width - 2 }));
      while (inner.at(-1) === "") inner.pop();
      const bar = s.enabled ? s.dim("│") : ">";
      return [...inner.map((l) => (l === "" ? bar : `${bar} ${s.italic(l)}`)), ""];
    }
    case "bullet_list_open":
    case "ordered_list_open":
      return [...list(node, o), ""];
    case "table_open":
      return [...table(node, o), ""];
    case "hr":
      return [s.dim("─".repeat(Math.max(3, Math.min(o.width, 60)))), ""];
    default:
      return token.content === "" ? [] : token.content.replace(/\n+$/, "").split("\n");
  }
}

function code(token: Token, o: MarkdownOptions): string[] {
  const s = o.style;
  const lang = token.info.trim().split(/\s+/)[0] || undefined;
  const body = token.content.replace(/\n+$/, "");
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

function list(node: Node, o: MarkdownOptions): string[] {
  const s = o.style;
  const out: string[] = [];
  const ordered = node.token.type === "ordered_list_open";
  const start = Number(attr(node.token, "start") ?? 1);
  const items = node.children.filter((c) => c.token.type === "list_item_open");
  // markdown-it hides the paragraphs of a tight list: its items' lines stay together.
  const tight = items.some((item) =>
    item.children.some((c) => c.token.type === "paragraph_open" && c.token.hidden),
  );
  items.forEach((item, i) => {
    const marker = ordered ? `${start + i}.` : s.enabled ? "•" : "-";
    const task = (item.token.meta as { task?: boolean } | null)?.task;
    const box = task === undefined ? "" : task ? "☑ " : "☐ ";
    const head = `${s.dim(marker)} ${box}`;
    // Every line of the item starts under its first word: a hanging indent.
    const pad = " ".repeat(visibleWidth(marker) + 1 + visibleWidth(box));
    let inner = item.children.flatMap((c) => block(c, { ...o, width: o.width - pad.length }));
    if (tight) inner = inner.filter((l) => l !== "");
    while (inner.at(-1) === "") inner.pop();
    const [first = "", ...rest] = inner;
    out.push(`${head}${first}`, ...rest.map((l) => (l === "" ? "" : `${pad}${l}`)));
  });
  return out;
}

function table(node: Node, o: MarkdownOptions): string[] {
  const s = o.style;
  const rowsOf = (type: string) =>
    node.children
      .filter((c) => c.token.type === type)
      .flatMap((section) => section.children.filter((c) => c.token.type === "tr_open"))
      .map((tr) => tr.children.filter((c) => c.token.type === "th_open" || c.token.type === "td_open"));
  const [head = []] = rowsOf("thead_open");
  const header = head.map((c) => inline(inlineOf(c), s));
  const alignment = head.map((c) => /text-align:(left|center|right)/.exec(attr(c.token, "style") ?? "")?.[1]);
  const rows = rowsOf("tbody_open").map((r) => r.map((c) => inline(inlineOf(c), s)));
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
        const cell = align(w[k] ?? "", widths[i] ?? 1, alignment[i]);
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

function align(text: string, width: number, how: string | undefined): string {
  const gap = Math.max(0, width - visibleWidth(text));
  if (how === "right") return " ".repeat(gap) + text;
  if (how === "center") return " ".repeat(Math.floor(gap / 2)) + text + " ".repeat(Math.ceil(gap / 2));
  return text + " ".repeat(gap);
}

function inline(tokens: readonly Token[], s: Style): string {
  return tree(tokens)
    .map((node) => span(node, s))
    .join("");
}

function span(node: Node, s: Style): string {
  const { token } = node;
  const inner = () => node.children.map((c) => span(c, s)).join("");
  switch (token.type) {
    case "strong_open":
      return s.bold(inner());
    case "em_open":
      return s.italic(inner());
    case "s_open":
      return s.strikethrough(inner());
    case "code_inline":
      // Without colour the backticks say it is code.
      return s.enabled ? s.cyan(token.content) : `\`${token.content}\``;
    case "softbreak":
    case "hardbreak":
      return "\n";
    case "link_open": {
      const href = attr(token, "href") ?? "";
      // `<https://...>`: the address is the text.
      if (token.markup === "autolink" || token.markup === "linkify") return s.underline(s.blue(href));
      const plain = node.children.map((c) => c.token.content).join("");
      return plain === href ? s.underline(s.blue(href)) : `${s.underline(inner())} ${s.dim(`(${href})`)}`;
    }
    case "image": {
      const src = attr(token, "src") ?? "";
      return s.dim(`[image: ${token.content || src}] (${src})`);
    }
    default:
      return token.content;
  }
}
