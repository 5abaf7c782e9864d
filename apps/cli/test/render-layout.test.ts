/**
 * The answer laid out at the terminal's width (tmux, the shipped bundle):
 * at 40, 80 and 120 columns no line a mouse copy gets (`capture-pane -J`)
 * is wider than the terminal, except a code line the terminal soft-wraps;
 * every word of the answer (list items, quotes, table cells, CJK, emoji)
 * stays whole; code copies back without a gutter; the block still being
 * written is re-flowed when the terminal is resized; `/theme` lists and
 * switches themes and remembers the choice in the user's config for the
 * next session; the `theme` config is used.
 */
import { readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { visibleWidth } from "../src/text-width.ts";
import { tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^›\s*$/m;
const LONG_CODE =
  "def a_rather_long_function_name(argument_one, argument_two, argument_three, argument_four, five): return argument_one";
const CJK = "日本語の段落です。端末の幅に合わせて折り返されますが、文字の途中で切れることはありません。";

const ANSWER = [
  "# Layout at every width",
  "",
  "Prose comes first: a paragraph long enough to wrap several times at forty columns, with **bold words**, *emphasis*, `inline code` and a [link](https://example.com/docs) inside it, so the wrapping has styles to carry.",
  "",
  "- A list item that is long enough to need a hanging indent when the terminal is narrow, as it is at forty columns",
  "- Second item",
  "  - A nested item that also runs on long enough to wrap onto another line at forty columns",
  "",
  "> A quoted remark that goes on long enough to wrap inside the quote bar at forty and at eighty columns.",
  "",
  "| name | what it does | notes |",
  "|---|---|---|",
  "| renderer | lays out prose | wraps at word boundaries, never inside words |",
  "| theme | paints | dark light colourblind ansi |",
  "",
  CJK,
  "",
  "Emoji stay whole too: 👨‍👩‍👧 family, 👍🏽 thumbs, 🇯🇵 flag.",
  "",
  "```python",
  LONG_CODE,
  "print('short')",
  "```",
  "",
  "The end.",
].join("\n");

/** The words of the answer outside code, Markdown marks taken away. */
function answerWords(): string[] {
  const prose = ANSWER.split("```python")[0] + (ANSWER.split("```\n")[1] ?? "");
  return tokens(prose.replace(CJK, "")).filter((w) => !/^-+$/.test(w));
}

/** Words of a text: split at spaces and at the marks Markdown or the renderer put between words. */
function tokens(text: string): string[] {
  return text
    .split(/[\s│•#*>|[\]()`─┌┐└┘├┤┬┴┼,.:;]+/u)
    .map((w) => w.trim())
    .filter((w) => w !== "");
}

async function run(width: number, env: string[] = []) {
  const server = await startScriptedServer({
    provider: "anthropic",
    script: () => ({ type: "reply", text: ANSWER, splitAt: [200, 600, 1200, 1800] }),
    splitPauseMs: 20,
  });
  servers.push(server);
  const { home, project } = await tempWorld();
  const out = path.join(home, "run");
  const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out, env }), {
    width,
    height: 60,
  });
  sessions.push(tty);
  await tty.waitFor(PROMPT);
  tty.type("lay it out");
  tty.keys("Enter");
  await tty.waitFor("─ 1 call");
  return { tty, out };
}

describe.skipIf(!TmuxSession.available())("the answer laid out at the terminal's width (tmux)", () => {
  it.each([40, 80, 120])(
    "at %i columns: no copied line wider than the terminal but code, every word whole, code without a gutter",
    async (width) => {
      const { tty, out } = await run(width);
      const joined = tty.screen({ joined: true }).split("\n");
      const lines = joined.map((l) => l.trimEnd());
      // What a mouse copy gets: the code lines exactly, nothing in front of them.
      expect(lines).toContain(LONG_CODE);
      expect(lines).toContain("print('short')");
      for (const line of lines) {
        if (line === LONG_CODE) continue;
        expect(visibleWidth(line), `wider than ${width}: ${line}`).toBeLessThanOrEqual(width);
      }
      // Every word of the answer is on one line, whole.
      const seen = new Set(lines.flatMap((l) => tokens(l)));
      const broken = answerWords().filter((w) => !seen.has(w));
      expect(broken, `broken or missing words at ${width} columns`).toEqual([]);
      // The CJK paragraph breaks only between characters, never before a closing mark.
      const cjkLines = lines.filter((l) => /[\u3040-\u30ff\u4e00-\u9fff]/u.test(l));
      expect(cjkLines.join("")).toContain(CJK);
      for (const line of cjkLines) expect(line).not.toMatch(/^[。、]/u);
      // A list item's further lines hang under its text.
      if (width === 40) {
        const item = lines.findIndex((l) => l.startsWith("• A list item"));
        expect(lines[item + 1]).toMatch(/^ {2}\S/);
      }
      tty.type("/exit");
      tty.keys("Enter");
      expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    },
    120_000,
  );

  it("at 40 columns a resumed conversation is rendered as it was shown, and yoi's own messages and the picker break between words", async () => {
    const answer = [
      "Here is a **summary** of the change, long enough to wrap several times at forty columns.",
      "",
      "- the first point, which also runs on past the edge of a narrow terminal",
      "- second",
      "",
      "```python",
      "print('kept as written')",
      "```",
    ].join("\n");
    const prompt = "please explain what changed in this project since yesterday, in a few words";
    const server = await startScriptedServer({
      provider: "anthropic",
      script: () => ({ type: "reply", text: answer }),
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const first = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 40,
      height: 40,
    });
    sessions.push(first);
    await first.waitFor(PROMPT);
    first.type(prompt);
    first.keys("Enter");
    await first.waitFor("─ 1 call");
    first.type("/exit");
    first.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    const out2 = path.join(home, "run2");
    const tty = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: ["-r"], out: out2 }),
      { width: 40, height: 40 },
    );
    sessions.push(tty);
    // Copied lines no wider than the terminal (but the code, which a terminal soft-wraps), every word whole.
    // A word wider than the room beside its label (a session id, a path) is left whole, for the terminal to wrap.
    const fits = (words: string[], unbroken?: RegExp) => {
      const lines = tty
        .screen({ joined: true })
        .split("\n")
        .map((l) => l.trimEnd());
      for (const line of lines) {
        if (unbroken?.test(line)) continue;
        expect(visibleWidth(line), `wider than 40: ${line}`).toBeLessThanOrEqual(40);
      }
      const seen = new Set(lines.flatMap((l) => tokens(l)));
      expect(words.filter((w) => !seen.has(w))).toEqual([]);
      return lines;
    };
    // The picker's keys do not fit beside its title: they go on rows of their own, whole words.
    await tty.waitFor("Esc leaves");
    fits(["Resume", "which", "session?", "move", "type", "to", "filter", "Enter", "picks", "Esc", "leaves"]);
    tty.keys("Enter");
    await tty.waitFor(PROMPT);
    const lines = fits([...tokens(prompt), ...tokens(answer.split("```")[0] ?? "").filter((w) => w !== "-")]);
    // Rendered as the live session showed it: no Markdown marks, the list as bullets, the code without fences.
    expect(lines.join("\n")).not.toMatch(/\*\*|```|^- /m);
    expect(lines).toContain("print('kept as written')");
    expect(lines.some((l) => l.startsWith("• the first point"))).toBe(true);
    // The prompt's further rows hang under its text.
    const asked = lines.findIndex((l) => l.startsWith("› please"));
    expect(lines[asked + 1]).toMatch(/^ {2}\S/);
    tty.type("/vim");
    tty.keys("Enter");
    await tty.waitFor("vim keys on");
    fits(["vim", "keys", "on", "Esc", "normal", "mode", "i", "insert"]);
    tty.type("/model nosuch/thing");
    tty.keys("Enter");
    await tty.waitFor(/found\s+"nosuch\/thing"/);
    fits(["expected", "provider", "declared", "providers"]);
    tty.type("/status");
    tty.keys("Enter");
    await tty.waitFor(/versions\s+yoi/);
    fits(
      ["directory", "mode", "default", "context", "window", "200k", "versions"],
      /^(session|directory) +\S+$/,
    );
    // /cost: a model name too wide to have the figures beside it has them below.
    tty.type("/cost");
    tty.keys("Enter");
    await tty.waitFor(/at list prices/);
    fits(
      ["anthropic/claude-haiku-4-5", "call", "in", "out", "total", "at", "list", "prices"],
      /^(session|directory) +\S+$/,
    );
    // A question asked at the prompt wraps between its words too, the answer after its last row.
    tty.type("/rewind");
    tty.keys("Enter");
    await tty.waitFor(/Enter: none ›/);
    fits(
      [
        "rewind",
        "to",
        "which?",
        "number",
        "then",
        "files",
        "conversation",
        "default",
        "both",
        "Enter",
        "none",
      ],
      /^(session|directory) +\S+$/,
    );
    tty.keys("Escape");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("re-flows the block still being written when the terminal is resized", async () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
    const paragraph = `${words.join(" ")} finale.`;
    const server = await startScriptedServer({
      provider: "anthropic",
      // The paragraph arrives over a few seconds, with no blank line: it stays live until the end.
      script: () => ({
        type: "reply",
        text: paragraph,
        splitAt: Array.from({ length: 12 }, (_, i) => 400 + i * 150),
      }),
      splitPauseMs: 400,
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 120,
      height: 40,
    });
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("go");
    tty.keys("Enter");
    // Part of the paragraph is on screen, laid out at 120 columns: then the terminal narrows.
    await tty.waitFor("word3 ");
    expect(tty.screen()).not.toContain("finale.");
    tty.resize(40, 40);
    // Still streaming: the live lines are laid out anew at 40 columns, every word whole (a line the
    // terminal re-wrapped would show pieces of words: "wo", "rd12").
    const paragraphLines = (screen: string) =>
      screen.split("\n").filter((l) => /word|^[a-z]{0,3}\d+\b/.test(l) && !l.startsWith("›"));
    const whole = (lines: string[]) =>
      lines.every((l) =>
        l
          .trim()
          .split(" ")
          .every((t) => /^(word\d+|finale\.)$/.test(t)),
      );
    const live = await tty.waitFor((screen) => {
      const lines = paragraphLines(screen);
      return !screen.includes("finale.") && lines.length >= 2 && whole(lines);
    });
    for (const line of paragraphLines(live)) expect(line.trimEnd().length).toBeLessThanOrEqual(40);
    const done = await tty.waitFor("─ 1 call");
    const lines = paragraphLines(done);
    for (const line of lines) expect(line.trimEnd().length).toBeLessThanOrEqual(40);
    expect(whole(lines)).toBe(true);
    // The paragraph is there once, every word in order.
    expect(lines.join(" ").split(/\s+/).filter(Boolean)).toEqual([...words, "finale."]);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("/theme lists the themes with a preview, switches, and says what is wrong with a bad name", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: () => ({ type: "reply", text: "Plain answer." }),
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 100,
      height: 40,
    });
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("/theme");
    tty.keys("Enter");
    const list = await tty.waitFor("/theme <name> switches");
    for (const name of ["dark", "light", "dark-colorblind", "light-colorblind", "ansi"])
      expect(list).toMatch(new RegExp(`^[● ] ${name}\\s+✓.done  ✗.failed  \\+.added  -.removed`, "m"));
    expect(list).toMatch(/^● dark /m);
    // Each preview is painted in its own theme: the colour-blind one's "failed" is orange, not red.
    const painted = tty.screen({ escapes: true });
    expect(painted).toMatch(/\x1b\[38;5;208m(\x1b\[[0-9;]*m)*✗.failed/);
    expect(painted).toMatch(/\x1b\[38;5;39m(\x1b\[[0-9;]*m)*✓.done/);
    expect(painted).toMatch(/\x1b\[31m(\x1b\[[0-9;]*m)*✗.failed/);
    tty.type("/theme solarized");
    tty.keys("Enter");
    await tty.waitFor(
      '✗ unknown theme "solarized": one of auto, dark, light, dark-colorblind, light-colorblind, ansi',
    );
    tty.type("/theme light");
    tty.keys("Enter");
    // Remembered in the user's config, as Claude Code remembers its theme; the project's is not touched.
    await tty.waitFor(/saved as "theme": "light" in ~\/\.yoi\/config\.jsonc for the next sessions\n›/);
    // From now on the light theme paints: its green on the ✓, its cyan on the prompt.
    const light = tty.screen({ escapes: true });
    expect(light).toMatch(/\x1b\[38;5;28m(\x1b\[[0-9;]*m)*✓/);
    expect(light).toMatch(/\x1b\[38;5;30m(\x1b\[[0-9;]*m)*›(\s|$)(?!.*accent)/m);
    const userConfig = path.join(home, ".yoi", "config.jsonc");
    expect(JSON.parse(await readFile(userConfig, "utf8"))).toEqual({ theme: "light" });
    await expect(readFile(path.join(project, ".yoi", "config.jsonc"), "utf8")).rejects.toThrow();
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    // The next session starts in the light theme (at 40 columns).
    const out2 = path.join(home, "run2");
    const again = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: [], out: out2 }),
      { width: 40, height: 30 },
    );
    sessions.push(again);
    await again.waitFor(PROMPT);
    expect(again.screen({ escapes: true })).toMatch(/\x1b\[38;5;30m(\x1b\[[0-9;]*m)*›/);
    // A config that cannot be edited safely is left as it is, and the switch holds for this session only.
    const broken = '{ "theme": "light", oops\n';
    await writeFile(userConfig, broken);
    again.type("/theme dark");
    again.keys("Enter");
    const refused = await again.waitFor(/not\ssaved[\s\S]*›\s*$/);
    // The preview wraps between its samples, never between a mark and its word.
    const preview = refused.slice(refused.indexOf("✓ theme dark"), refused.indexOf("! theme dark"));
    expect(preview).toMatch(/✓.done/);
    expect(preview).not.toMatch(/(^|\s)[✓✗+!›-]$/m);
    expect(refused.replace(/\n/g, " ")).toMatch(
      /theme dark for this session only; not saved: .*config\.jsonc:1:/,
    );
    expect(await readFile(userConfig, "utf8")).toBe(broken);
    again.type("/exit");
    again.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("takes the theme from the config, and under NO_COLOR writes no escape at all, even for /theme", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: () => ({ type: "reply", text: "Some **bold** and `code`.\n\n```ts\nconst a = 1;\n```" }),
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const { mkdir } = await import("node:fs/promises");
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    await writeFile(path.join(home, ".yoi", "config.json"), JSON.stringify({ theme: "dark-colorblind" }));
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 80,
      height: 30,
    });
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    // The colour-blind theme's accent on the prompt.
    expect(tty.screen({ escapes: true })).toMatch(/\x1b\[38;5;117m(\x1b\[[0-9;]*m)*›/);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    const out2 = path.join(home, "run2");
    const plain = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: [], out: out2, env: ["NO_COLOR=1"] }),
      { width: 80, height: 30 },
    );
    sessions.push(plain);
    await plain.waitFor(PROMPT);
    plain.type("show it");
    plain.keys("Enter");
    await plain.waitFor("─ 1 call");
    plain.type("/theme light");
    plain.keys("Enter");
    const screen = await plain.waitFor("colour is off");
    expect(screen).toContain("Some bold and `code`.");
    expect(screen).toMatch(/^```ts\nconst a = 1;\n```$/m);
    expect(plain.screen({ escapes: true })).not.toMatch(/\x1b\[[0-9;]*m/);
    plain.type("/exit");
    plain.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
