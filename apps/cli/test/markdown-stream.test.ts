/**
 * The streamed Markdown: where the block splitter cuts an answer, and that
 * the pieces, rendered as they are cut, give what rendering the whole
 * answer at once gives, however the answer is split into deltas.
 */
import { describe, expect, it } from "vitest";
import { createStyle } from "../src/style.ts";
import { BlockSplitter } from "../src/ui/markdown/block-splitter.ts";
import { MarkdownStream } from "../src/ui/markdown/markdown-stream.ts";
import * as rich from "../src/ui/rich-output.ts";

const style = createStyle(true, "dark");
const options = () => ({ width: 40, style, highlight: rich.highlightCode });
const whole = (source: string) => rich.renderTokens(rich.lexMarkdown(source), options());

/** The pieces the splitter cuts `source` into when it arrives in `size`-character deltas (the rest last). */
function pieces(source: string, size = 1): string[] {
  const splitter = new BlockSplitter();
  const out: string[] = [];
  let pending = "";
  for (let i = 0; i < source.length; i += size) {
    pending += source.slice(i, i + size);
    const stable = splitter.scan(pending);
    if (stable > 0) {
      out.push(pending.slice(0, stable));
      pending = pending.slice(stable);
      splitter.drop(stable);
    }
  }
  if (pending !== "") out.push(pending);
  return out;
}

/** What the stream writes for `source` in `size`-character deltas, and what of it it wrote before the end. */
function streamed(source: string, size: number): { text: string; early: string } {
  let text = "";
  const md = new MarkdownStream(rich, options, (t) => (text += t));
  for (let i = 0; i < source.length; i += size) md.push(source.slice(i, i + size));
  const early = text;
  md.end();
  return { text, early };
}

/** Streamed in deltas of every size from 1 to 7 characters, the output is the whole answer's. */
function expectSameAsWhole(source: string): void {
  const expected = whole(source);
  for (let size = 1; size <= 7; size++)
    expect(streamed(source, size).text, `deltas of ${size}`).toBe(expected);
}

describe("the block splitter", () => {
  it("cuts after a paragraph's blank line and after a closing fence", () => {
    expect(pieces("# Title\n\nSome text\nmore\n\n```js\nconst a = 1;\n```\nAfter.\n")).toEqual([
      "# Title\n\n",
      "Some text\nmore\n\n",
      "```js\nconst a = 1;\n```\n",
      "After.\n",
    ]);
  });

  it("does not cut at a blank line inside a fence, `~~~` or backticks, or at a shorter fence", () => {
    const source = "~~~py\nx = 1\n\n```\ny = 2\n~~~\n\n````\na\n\n```\nb\n````\n\nend\n";
    expect(pieces(source)).toEqual([
      "~~~py\nx = 1\n\n```\ny = 2\n~~~\n",
      "\n````\na\n\n```\nb\n````\n",
      "\nend\n",
    ]);
    expectSameAsWhole(source);
  });

  it("keeps a fence never closed open to the end", () => {
    const source = "Intro.\n\n```sh\necho one\n\necho two\n";
    expect(pieces(source)).toEqual(["Intro.\n\n", "```sh\necho one\n\necho two\n"]);
    expectSameAsWhole(source);
  });

  it("keeps a list whole across blank lines, a fence inside an item with a blank line in it too", () => {
    const source = [
      "- one",
      "",
      "- two",
      "  ```js",
      "  let a;",
      "",
      "  let b;",
      "  ```",
      "",
      "  still two",
      "1. a new list",
      "",
      "After the list.",
      "",
    ].join("\n");
    expect(pieces(source)).toEqual([
      "- one\n\n- two\n  ```js\n  let a;\n\n  let b;\n  ```\n\n  still two\n1. a new list\n\n",
      "After the list.\n",
    ]);
    expectSameAsWhole(source);
  });

  it("keeps indented code whole across a blank line", () => {
    const source = "Code:\n\n    a = 1\n\n    b = 2\n\nDone.\n";
    expect(pieces(source)).toEqual(["Code:\n\n", "    a = 1\n\n    b = 2\n\n", "Done.\n"]);
    expectSameAsWhole(source);
  });

  it("keeps a paragraph and the line of `===` or `---` under it (a setext heading) together", () => {
    const source = "Title\n=====\n\nOther\n---\n\ntext\n";
    expect(pieces(source)).toEqual(["Title\n=====\n\n", "Other\n---\n\n", "text\n"]);
    expectSameAsWhole(source);
  });

  it("reads CRLF line ends as line ends", () => {
    const source = "Para one\r\n\r\n```\r\ncode\r\n\r\nmore\r\n```\r\nlast\r\n";
    expect(pieces(source)).toEqual(["Para one\r\n\r\n", "```\r\ncode\r\n\r\nmore\r\n```\r\n", "last\r\n"]);
    expectSameAsWhole(source);
  });

  it("judges only complete lines: a table whose header arrives in pieces is one block", () => {
    const source = "| name | role |\n|---|---|\n| a | lead |\n\nAfter.\n";
    for (let size = 1; size <= 9; size++)
      expect(pieces(source, size)).toEqual(["| name | role |\n|---|---|\n| a | lead |\n\n", "After.\n"]);
    expectSameAsWhole(source);
  });

  it("takes ``` with a backtick after it for inline code, not a fence", () => {
    const source = "```a``` is code\n\nnext\n";
    expect(pieces(source)).toEqual(["```a``` is code\n\n", "next\n"]);
    expectSameAsWhole(source);
  });

  it("keeps a fence in a quote whole", () => {
    const source = "> ```\n> a\n>\n> b\n> ```\n\nafter\n";
    expect(pieces(source)).toEqual(["> ```\n> a\n>\n> b\n> ```\n\n", "after\n"]);
    expectSameAsWhole(source);
  });
});

describe("the block splitter on mixed answers", () => {
  /** Lines an answer is made of, the awkward ones too. */
  const LINES = [
    "",
    "",
    "",
    "Some prose that runs on for a while.",
    "more prose",
    "# A heading",
    "## Another",
    "- an item",
    "* a star item",
    "1. numbered",
    "2) numbered too",
    "  indented continuation",
    "    four spaces in",
    "\tcode behind a tab",
    "> quoted",
    ">",
    "> - quoted item",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "```",
    "```js",
    "~~~",
    "````",
    "  ```",
    "- ```",
    "> ```",
    "   ```",
    "    ```",
    "      ```",
    "  - nested item",
    "1.  wide item",
    "> > deeper",
    "---",
    "===",
    "***",
    "Title",
    "[ref]: https://example.com",
    "a [ref] link",
  ];

  it("renders 300 random answers, in random deltas, as the whole answer renders", () => {
    let seed = 35;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < Number(process.env.FUZZ ?? 300); n++) {
      const count = 2 + Math.floor(random() * 25);
      const lines = Array.from({ length: count }, () => LINES[Math.floor(random() * LINES.length)]!);
      const eol = random() < 0.2 ? "\r\n" : "\n";
      const source = lines.join(eol) + (random() < 0.5 ? eol : "");
      // A link reference defined after its use cannot be streamed: the link is written before the definition comes.
      if (source.includes("[ref]:")) continue;
      const size = 1 + Math.floor(random() * 12);
      expect(streamed(source, size).text, JSON.stringify(source)).toBe(whole(source));
    }
  });
});

describe("MarkdownStream", () => {
  it("writes each complete block while the answer streams, and the same as the whole answer in the end", () => {
    const source = [
      "## Part 1",
      "",
      "Prose with **bold**, `code` and a [link](https://example.com) long enough to wrap at forty columns.",
      "",
      "- an item",
      "- another",
      "  1. nested",
      "",
      "> a quote",
      "",
      "| a | b |",
      "|---|---|",
      "| 1 | 2 |",
      "",
      "```ts",
      "const x = 1;",
      "```",
      "",
      "Done.",
    ].join("\n");
    for (const size of [1, 3, 4, 11]) {
      const { text, early } = streamed(source, size);
      expect(text).toBe(whole(source));
      // All but the last paragraph was written before the end.
      expect(early).toBe(whole(source.slice(0, source.indexOf("Done."))));
    }
  });

  it("previews only the block still open", () => {
    let written = "";
    const md = new MarkdownStream(rich, options, (t) => (written += t));
    md.push("First paragraph.\n\nSecond, still ");
    expect(written).toContain("First paragraph.");
    expect(md.pending).toBe("Second, still ");
    expect(md.preview()).toBe("Second, still");
    md.push("going");
    expect(md.preview()).toBe("Second, still going");
    md.end();
    expect(md.pending).toBe("");
    expect(written).toContain("Second, still going");
  });

  it("previews an open code block plain, and writes it coloured once it closes", () => {
    let written = "";
    const md = new MarkdownStream(rich, options, (t) => (written += t));
    md.push('```ts\nconst a = "x";\n');
    const preview = md.preview();
    expect(preview).toContain(style.codeLine('const a = "x";', true));
    expect(preview).not.toContain(style.magenta("const"));
    md.push("```\n");
    expect(md.pending).toBe("");
    expect(written).toContain(style.magenta("const"));
    expect(written).toBe(whole('```ts\nconst a = "x";\n```\n'));
  });

  it("shows a block it cannot render as the text it is, and says why", () => {
    let written = "";
    const failures: unknown[] = [];
    const broken = {
      lexMarkdown: rich.lexMarkdown,
      renderTokens: (tokens: Parameters<typeof rich.renderTokens>[0]) => {
        if (tokens.some((t) => t.type === "table_open")) throw new Error("no layout for tables");
        return rich.renderTokens(tokens, options());
      },
    };
    const md = new MarkdownStream(
      broken,
      options,
      (t) => (written += t),
      (e) => failures.push(e),
    );
    md.push("Before.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.");
    md.end();
    expect(written).toBe(`${whole("Before.\n\n")}| a | b |\n|---|---|\n| 1 | 2 |\n\n${whole("After.")}`);
    expect(failures.map((e) => (e as Error).message)).toEqual(["no layout for tables"]);
  });
});
