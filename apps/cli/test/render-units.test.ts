/**
 * The output renderer's layout and themes, as units: Markdown at a width
 * (tables that fit or fall back to records, code without a gutter, plain
 * marks without colour), themes and how one is chosen, the OSC 11 query
 * against a scripted terminal, and the footer and a question at 40 columns.
 */
import { EventEmitter } from "node:events";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { createStyle, resolveTheme, THEME_NAMES } from "../src/style.ts";
import { visibleWidth } from "../src/text-width.ts";
import * as rich from "../src/ui/rich-output.ts";
import {
  BACKGROUND_QUERY,
  backgroundFromEnv,
  backgroundOf,
  queryBackground,
} from "../src/ui/terminal-background.ts";

const render = (source: string, width: number, colour = true) =>
  rich.renderTokens(rich.lexMarkdown(source), {
    width,
    style: createStyle(colour),
    highlight: rich.highlightCode,
  });
const plainLines = (text: string) => stripVTControlCharacters(text).replace(/\n$/, "").split("\n");

describe("Markdown at a width", () => {
  it("wraps prose, list items under their text, and quotes behind their bar, words whole", () => {
    const text = [
      "A paragraph of several words that must wrap at a narrow width without cutting any word.",
      "",
      "- an item whose text runs over the width of the terminal",
      "  - a nested item that does the same thing again",
      "",
      "> a quote that is long enough to wrap inside its bar",
    ].join("\n");
    const lines = plainLines(render(text, 24));
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(24);
    expect(lines).toContain("• an item whose text");
    expect(lines).toContain("  runs over the width of");
    expect(lines.some((l) => /^ {2}• a nested item that$/.test(l))).toBe(true);
    expect(lines.some((l) => /^ {4}does the same thing$/.test(l))).toBe(true);
    for (const line of lines.filter((l) => l.startsWith("│"))) expect(line).toMatch(/^│ \S/);
    const words = text.split(/[\s>-]+/).filter(Boolean);
    const seen = new Set(lines.flatMap((l) => l.split(/[\s│•]+/)));
    expect(words.filter((w) => !seen.has(w))).toEqual([]);
  });

  it("shows code with nothing in front of its lines, on the code background, and never wraps it", () => {
    const long = `const x = ${"1 + ".repeat(20)}1;`;
    const out = render(`\`\`\`ts\n${long}\nreturn x;\n\`\`\``, 40);
    const lines = plainLines(out);
    expect(lines).toEqual(["ts", long, "return x;", ""]);
    // The background (dark theme) and the erase that paints it to the edge, which a line
    // reaching the edge does not get.
    expect(out).toContain("\x1b[48;5;236m");
    expect(out.split("\n").find((l) => l.includes("return"))).toContain("\x1b[K");
    const edge = render(`\`\`\`\n${"x".repeat(41)}\n\`\`\``, 40).split("\n")[0] ?? "";
    expect(edge).not.toContain("\x1b[K");
  });

  it("without colour: no escapes, and the marks colour would have shown (fences, backticks, #)", () => {
    const out = render("## Title\n\nSome `code` and **bold**.\n\n```sh\nls -la\n```", 40, false);
    expect(out).not.toContain("\x1b");
    expect(out.split("\n")).toEqual([
      "## Title",
      "",
      "Some `code` and bold.",
      "",
      "```sh",
      "ls -la",
      "```",
      "",
      "",
    ]);
  });

  it("shows task boxes in place of `[ ]` and `[x]`, and the item's text on the same line", () => {
    const out = render("- [ ] write the tests\n- [x] run them\n- a plain item, [ ] not a box", 60, false);
    expect(out.split("\n")).toEqual([
      "- ☐ write the tests",
      "- ☑ run them",
      "- a plain item, [ ] not a box",
      "",
      "",
    ]);
  });

  it("links addresses with a scheme and e-mail addresses, never a file name, and shows entities as characters", () => {
    const s = createStyle(true);
    const out = render(
      "Wrote AGENTS.md and setup.py; see https://example.com/docs or ask a@example.com.",
      80,
    );
    expect(out).toContain(s.underline(s.blue("https://example.com/docs")));
    expect(out).toContain(s.underline(s.blue("mailto:a@example.com")));
    expect(stripVTControlCharacters(out)).toContain("Wrote AGENTS.md and setup.py; see");
    expect(plainLines(render("a &lt;b&gt; &amp; &copy; \\*c\\*", 40, false))).toEqual(["a <b> & © *c*", ""]);
  });

  it("fits a table by narrowing its widest columns, never below a word; too narrow, each row as records", () => {
    const table = [
      "| name | role | notes |",
      "|---|---|---|",
      "| alpha | lead | a note that has to wrap inside the column |",
      "| beta | developer | short |",
    ].join("\n");
    const boxed = plainLines(render(table, 40));
    for (const line of boxed) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
    expect(boxed[0]).toMatch(/^┌/);
    expect(boxed.join("\n")).toContain("developer");
    const narrow = plainLines(render(table, 20));
    for (const line of narrow) expect(visibleWidth(line)).toBeLessThanOrEqual(20);
    expect(narrow).toContain("role: developer");
    expect(narrow.join(" ")).toContain("notes: a note that");
    expect(narrow.some((l) => l.startsWith("┌"))).toBe(false);
  });
});

describe("code highlighting", () => {
  it("paints a known language in the theme's colours, escapes decoded, each line on its own", () => {
    const s = createStyle(true, "dark");
    const out = rich.highlightCode('const a = b < 2 && "x";\n/* one\ntwo */', "ts", s) ?? "";
    expect(stripVTControlCharacters(out)).toBe('const a = b < 2 && "x";\n/* one\ntwo */');
    expect(out).toContain(s.magenta("const"));
    expect(out).toContain(s.green('"x"'));
    // The comment spans two lines: each is painted on its own.
    expect(out.split("\n")[1]).toBe(s.gray("/* one"));
    expect(out.split("\n")[2]).toBe(s.gray("two */"));
    s.theme = "light";
    expect(rich.highlightCode("const a = 1;", "js", s)).toContain(s.magenta("const"));
    expect(rich.highlightCode("x", "no-such-language", s)).toBeUndefined();
    expect(rich.highlightCode("const a = 1;", "ts", createStyle(false))).toBeUndefined();
  });

  it("paints an embedded language in its own colours, and text as it is (no HTML entities)", () => {
    const s = createStyle(true, "dark");
    // HTML's script and style are coloured as JavaScript and CSS, whichever language came before.
    const code =
      '<p class="x">&amp; &lt;</p>\n<script>let a = "<b>" && 1 < 2;</script>\n<style>p { color: red; }</style>';
    const out = rich.highlightCode(code, "html", s) ?? "";
    expect(stripVTControlCharacters(out)).toBe(code);
    expect(out).toContain(s.magenta("let"));
    expect(out).toContain(s.green('"<b>"'));
    expect(out).toContain(s.yellow("1"));
    expect(out).toContain(s.blue("script"));
    expect(out).toContain(s.cyan("color"));
    expect(out).toContain(s.magenta("p"));
  });

  it("colours the languages answers use, by the names fences give them", () => {
    const s = createStyle(true, "dark");
    const cases: [string, string, string][] = [
      ["tsx", "const A = () => <div className={x} />;", s.blue("div")],
      ["py", "def f(x):\n    return None", s.magenta("def")],
      ["sh", 'for f in *; do echo "$f"; done', s.red("$f")],
      ["shell", "export A=1", s.cyan("export")],
      ["diff", "-old\n+new", s.green("new")],
      ["yml", "key: 1", s.cyan("key")],
      ["toml", '[tool]\nname = "x"', s.green('"x"')],
      ["rs", 'fn main() { println!("{}", 1); }', s.magenta("fn")],
      ["Go", 'func main() { fmt.Println("hi") }', s.yellow("Println")],
      ["json", '{"a": [true, 2]}', s.cyan('"a"')],
      ["php", '<?php echo "hi"; ?>', s.green('"hi"')],
      ["c++", "int main() { return 0; }", s.magenta("return")],
    ];
    for (const [lang, code, painted] of cases) {
      const out = rich.highlightCode(code, lang, s) ?? "";
      expect(stripVTControlCharacters(out), lang).toBe(code);
      expect(out, lang).toContain(painted);
    }
  });
});

describe("themes", () => {
  it("paints each role in the theme's colour, switches in place, and paints nothing without colour", () => {
    const s = createStyle(true, "dark");
    expect(s.red("x")).toBe("\x1b[38;5;203mx\x1b[39m");
    s.theme = "dark-colorblind";
    // Blue for success, orange for failure.
    expect(s.green("ok")).toBe("\x1b[38;5;39mok\x1b[39m");
    expect(s.red("no")).toBe("\x1b[38;5;208mno\x1b[39m");
    s.theme = "ansi";
    expect(s.green("ok")).toBe("\x1b[32mok\x1b[39m");
    expect(s.codeLine("x", true)).toBe("x");
    // A nested colour ending gives the outer one back.
    expect(s.red(`a ${s.green("b")} c`)).toBe("\x1b[31ma \x1b[32mb\x1b[39m\x1b[31m c\x1b[39m");
    const off = createStyle(false, "light");
    for (const paint of [off.red, off.bold, off.cyan, off.underline]) expect(paint("t")).toBe("t");
    expect(off.codeLine("t", true)).toBe("t");
  });

  it("chooses the configured theme, the terminal's background under auto, ansi on a 16-colour terminal", () => {
    expect(resolveTheme("auto", undefined, 8)).toBe("dark");
    expect(resolveTheme("auto", "light", 8)).toBe("light");
    expect(resolveTheme("auto", "dark", 24)).toBe("dark");
    expect(resolveTheme("light-colorblind", "dark", 8)).toBe("light-colorblind");
    expect(resolveTheme("light", "light", 4)).toBe("ansi");
    expect(THEME_NAMES).toEqual(["dark", "light", "dark-colorblind", "light-colorblind", "ansi"]);
  });
});

/** A terminal on the other end of the streams: answers the query with `reply` (or not at all). */
function fakeTerminal(reply: string | undefined, typed = "") {
  const input = Object.assign(new EventEmitter(), {
    isTTY: true,
    isRaw: false,
    modes: [] as boolean[],
    unshifted: [] as Buffer[],
    setRawMode(mode: boolean) {
      this.isRaw = mode;
      this.modes.push(mode);
    },
    resume() {},
    pause() {},
    unshift(chunk: Buffer) {
      this.unshifted.push(chunk);
    },
  });
  const written: string[] = [];
  const output = {
    isTTY: true,
    write(text: string) {
      written.push(text);
      if (reply !== undefined) setImmediate(() => input.emit("data", Buffer.from(typed + reply, "utf8")));
    },
  };
  return { input, output, written };
}

describe("the terminal's background (OSC 11)", () => {
  it("reads dark and light from the answer's colour, 1 to 4 hex digits a channel", () => {
    expect(backgroundOf("\x1b]11;rgb:0000/0000/0000\x1b\\")).toBe("dark");
    expect(backgroundOf("\x1b]11;rgb:ffff/ffff/ffff\x07")).toBe("light");
    expect(backgroundOf("\x1b]11;rgb:fd/f6/e3\x1b\\")).toBe("light");
    expect(backgroundOf("\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\")).toBe("dark");
    expect(backgroundOf("\x1b]11;rgba:ffff/ffff/ffff/ffff\x1b\\")).toBe("light");
    expect(backgroundOf("garbage")).toBeUndefined();
    expect(backgroundFromEnv({ COLORFGBG: "0;15" })).toBe("light");
    expect(backgroundFromEnv({ COLORFGBG: "15;default;0" })).toBe("dark");
    expect(backgroundFromEnv({})).toBeUndefined();
  });

  it("asks, reads the answer, gives keys typed meanwhile back, and leaves the mode as it was", async () => {
    const t = fakeTerminal("\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c", "hé");
    expect(await queryBackground(t)).toBe("light");
    expect(t.written).toEqual([BACKGROUND_QUERY]);
    expect(t.input.modes).toEqual([true, false]);
    expect(Buffer.concat(t.input.unshifted).toString("utf8")).toBe("hé");
    expect(t.input.listenerCount("data")).toBe(0);
  });

  it("does not wait for a terminal that answers only the device attributes, or nothing (the timeout)", async () => {
    const da1Only = fakeTerminal("\x1b[?1;2c");
    const started = Date.now();
    expect(await queryBackground(da1Only, 60_000)).toBeUndefined();
    // Far below the timeout: the device-attributes answer said there would be no colour.
    expect(Date.now() - started).toBeLessThan(30_000);
    const silent = fakeTerminal(undefined);
    expect(await queryBackground(silent, 50)).toBeUndefined();
    expect(silent.input.listenerCount("data")).toBe(0);
    // Not a terminal: nothing is written.
    const piped = fakeTerminal("x");
    piped.input.isTTY = false;
    expect(await queryBackground(piped)).toBeUndefined();
    expect(piped.written).toEqual([]);
  });

  it("ends at once when the prompt will not wait, giving the terminal back as it was", async () => {
    const silent = fakeTerminal(undefined);
    const stop = new AbortController();
    const answer = queryBackground(silent, 60_000, stop.signal);
    stop.abort();
    expect(await answer).toBeUndefined();
    expect(silent.input.modes).toEqual([true, false]);
    expect(silent.input.listenerCount("data")).toBe(0);
  });
});

describe("at 40 columns", () => {
  it("the footer keeps each fact whole, its further lines indented", async () => {
    const { Renderer } = await import("../src/ui/renderer.ts");
    let text = "";
    const renderer = new Renderer({
      out: { write: (chunk: string) => (text += chunk), columns: 40 },
      style: createStyle(false),
      animate: false,
      window: 200_000,
      provider: { provider: "anthropic" },
      pricing: { input: 3, output: 15 },
    });
    renderer.handle({
      type: "usage",
      usage: { inputTokens: 12_000, outputTokens: 3_400, cacheReadTokens: 9_000 },
    } as never);
    renderer.finish({
      status: "completed",
      turns: 3,
      usage: { inputTokens: 12_000, outputTokens: 3_400, cacheReadTokens: 9_000 },
    } as never);
    const lines = text.replace(/\n$/, "").split("\n");
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThan(40);
    expect(lines[0]).toMatch(/^─ 3 calls · /);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {2}\S/);
    expect(text).toMatch(/context \d+(\.\d)?% of 200k/);
  });

  it("the answer keys shorten as the terminal narrows, what they do said above them", async () => {
    const { permissionChoices } = await import("../src/ui/permission-question.ts");
    const always = '"git status *"';
    expect(permissionChoices(always, true, 120)).toEqual({
      keys: '[y]es · [n]o · [a]lways "git status *" this session · [p]roject: always, here · [t]ell the model why not',
      note: "",
    });
    expect(permissionChoices(always, true, 80)).toEqual({
      keys: '[y]es · [n]o · [a]lways "git status *" this session · [p]roject · [t]ell',
      note: "p: always, in this project · t: tell the model why not",
    });
    const narrow = permissionChoices(always, false, 40);
    expect(narrow.keys).toBe("[y]es · [n]o · [a]lways · [t]ell");
    expect(narrow.note).toBe('a: always allow "git status *" this session\nt: tell the model why not');
    expect(permissionChoices(always, true, 30)).toEqual({
      keys: "y n a p t",
      note: 'y: yes · n: no\na: always allow "git status *" this session\np: always, in this project\nt: tell the model why not',
    });
    // A note that fits stays one line.
    expect(permissionChoices('"ls *"', false, 60).note).toBe("t: tell the model why not");
    for (const columns of [30, 40, 60, 80, 120])
      expect(visibleWidth(permissionChoices(always, true, columns).keys) + 5).toBeLessThan(columns);
  });

  it("a permission question is word-wrapped to the width", async () => {
    const { permissionQuestion } = await import("../src/ui/permission-question.ts");
    const question = permissionQuestion(
      {
        tool: "bash",
        subject: "git log --oneline --decorate --graph --all | head -n 40",
        args: { command: "git log --oneline --decorate --graph --all | head -n 40" },
        reason: "no rule allows bash commands that pipe into another program",
      } as never,
      createStyle(false),
      undefined,
      "/tmp",
      { columns: 40, rows: 30 },
    );
    const ours = question.lines.filter((l) => !l.startsWith("  $") && !l.startsWith("    "));
    for (const line of ours) expect(visibleWidth(line)).toBeLessThan(40);
    expect(question.lines.join(" ")).toContain("pipe into another program");
  });
});
