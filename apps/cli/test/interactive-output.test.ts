/**
 * What the interactive session shows (tmux): Markdown rendered while it
 * streams, code highlighted, tables fitted to the width, plain text when
 * colour is off; the waiting indicator; diffs after edits and writes; bash
 * output's first and last lines; the expand key.
 */
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^›\s*$/m;

const ANSWER = [
  "## The plan",
  "",
  "Some **bold**, *emphasis*, `code` and a [link](https://x.dev).",
  "",
  "- first item",
  "- second item",
  "  1. nested one",
  "",
  "> quoted advice",
  "",
  "| name | role | notes |",
  "|---|:-:|---|",
  "| alpha | lead | a long note that has to wrap inside a narrow terminal column to fit |",
  "| beta | dev | short |",
  "",
  "```ts",
  "const answer: number = 42;",
  "```",
  "",
  "Done.",
].join("\n");

describe.skipIf(!TmuxSession.available())("what the interactive session shows (tmux)", () => {
  it("renders Markdown while streaming, fits tables to the width, and stays plain without colour", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      // Small writes with pauses: the answer arrives as many deltas.
      script: () => ({ type: "reply", text: ANSWER, splitAt: [120, 240, 360, 480] }),
      splitPauseMs: 30,
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 60,
      height: 60,
    });
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("plan it");
    tty.keys("Enter");
    const screen = await tty.waitFor("─ 1 call");
    // Markdown markers are gone; the structure stays.
    expect(screen).toMatch(/^The plan\s*$/m);
    expect(screen).not.toContain("## The plan");
    expect(screen).not.toContain("**bold**");
    expect(screen).toContain("Some bold, emphasis, code and a link (https://x.dev).");
    expect(screen).toMatch(/^• first item$/m);
    expect(screen).toMatch(/^\s+1\. nested one$/m);
    expect(screen).toMatch(/^│ quoted advice$/m);
    // Code has nothing in front of it (a mouse copy gets the code); its language is above it.
    expect(screen).toMatch(/^ts\s*\nconst answer: number = 42;$/m);
    // The table is boxed and no row is wider than the terminal.
    const rows = screen.split("\n").filter((l) => /^[┌├└│]/.test(l) && /[┐┤┘│]\s*$/.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const row of rows) expect(row.trimEnd().length).toBeLessThanOrEqual(60);
    expect(screen).toMatch(/│ alpha │ lead │ a long note/);
    // Colours: the screen with escapes shows bold and the highlighted keyword.
    const coloured = tty.screen({ escapes: true });
    expect(coloured).toMatch(/\x1b\[1m(\x1b\[[0-9;]*m)*Some|\x1b\[1mbold/);
    // The dark theme (tmux's background is black): 256-colour keyword, code on its background.
    expect(coloured).toMatch(/\x1b\[38;5;176m(\x1b\[[0-9;]*m)*const/);
    expect(coloured).toMatch(/\x1b\[48;5;236m/);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    tty.kill();

    // NO_COLOR: laid out the same, not one escape; the marks that colour would have shown stay.
    const out2 = path.join(home, "run2");
    const plain = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: [], out: out2, env: ["NO_COLOR=1"] }),
      { width: 60, height: 60 },
    );
    sessions.push(plain);
    await plain.waitFor(PROMPT);
    plain.type("plan it");
    plain.keys("Enter");
    const raw = await plain.waitFor("─ 1 call");
    expect(raw).toMatch(/^## The plan$/m);
    expect(raw).toContain("Some bold, emphasis, `code` and a link (https://x.dev).");
    expect(raw).toMatch(/│ alpha │ lead │ a long note/);
    expect(raw).toMatch(/^```ts\nconst answer: number = 42;\n```$/m);
    expect(plain.screen({ escapes: true })).not.toMatch(/\x1b\[[0-9;]*m/);
    plain.type("/exit");
    plain.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("waits visibly, shows diffs of edits and writes, bash's first and last lines, and expands output", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `row ${i + 1}`).join("\n");
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        // The first answer comes after a pause, so the waiting indicator is on screen.
        { type: "reply", text: "Slow answer.", splitAt: [0], end: "complete" },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_r", name: "read_file", arguments: { path: "app.txt" } }],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_e",
              name: "edit_file",
              arguments: { path: "app.txt", old_string: "color = red", new_string: "color = blue" },
            },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            { id: "toolu_w", name: "write_file", arguments: { path: "new.txt", content: "fresh\nfile\n" } },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_e2",
              name: "edit_file",
              arguments: { path: "app.txt", old_string: "size = 3", new_string: "size = 4" },
            },
          ],
        },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_b", name: "bash", arguments: { command: "seq 1 40 | sed 's/^/row /'" } }],
        },
        { type: "reply", text: "All done." },
      ],
      splitPauseMs: 3000,
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "app.txt": "name = app\ncolor = red\nsize = 3\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      yoiCommand({
        project,
        home,
        baseURL: server.baseURL,
        args: [],
        out,
        env: [],
      }),
      { width: 100, height: 80 },
    );
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("first");
    tty.keys("Enter");
    await tty.waitFor(/waiting for the model · \d/);
    await tty.waitFor("Slow answer.");
    expect(tty.screen()).not.toContain("waiting for the model");
    await tty.waitFor(PROMPT);

    tty.type("change it");
    tty.keys("Enter");
    await tty.waitFor("[a]lways edit_file");
    // The edit's question shows the diff it would make, with line numbers and context.
    expect(tty.screen()).toMatch(/edit: \+1 -1\n\s+1\s+name = app\n\s+2 - color = red\n\s+2 \+ color = blue/);
    tty.type("a");
    await tty.waitFor("[a]lways write_file");
    // The write's question shows the content.
    expect(tty.screen()).toMatch(/\+ fresh/);
    tty.type("y");
    await tty.waitFor("[a]lways this command");
    tty.type("y");
    const screen = await tty.waitFor("All done.");
    // The edit's diff, coloured, with line numbers.
    expect(screen).toMatch(/\+1 -1/);
    expect(screen).toMatch(/2 - color = red/);
    expect(screen).toMatch(/2 \+ color = blue/);
    // Approved at a question that showed the diff: after it lands, the counts only.
    expect(screen).toMatch(/new file, \+2 -0 \(as shown in the question/);
    // Allowed by the session's "always": no question, so the diff is shown after it lands.
    expect(screen).toMatch(
      /✓ edit_file app\.txt .*\n\s+\+1 -1\n\s+1\s+name = app\n\s+2\s+color = blue\n\s+3 - size = 3\n\s+3 \+ size = 4/,
    );
    expect(screen).toMatch(/1 \+ fresh/);
    // read_file: one line of preview; bash: first and last lines.
    expect(screen).toMatch(/⎿ .*name = app/);
    expect(screen).toMatch(/^\s+row 1$/m);
    expect(screen).toMatch(/^\s+… 3\d more lines$/m);
    expect(screen).toMatch(/^\s+row 40$/m);
    expect(screen).not.toMatch(/^\s+row 20$/m);
    // Ctrl-O prints the last tool's whole output.
    await tty.waitFor(PROMPT);
    tty.keys("C-o");
    const expanded = await tty.waitFor(/^row 20$/m);
    expect(expanded).toMatch(/── bash seq 1 40/);
    expect(lines.split("\n").every((l) => expanded.includes(l))).toBe(true);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
  it("wraps its own lines at spaces in an 80-column terminal, descriptions kept in their column", async () => {
    const server = await startScriptedServer({ provider: "anthropic", script: [] });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 80,
      height: 50,
    });
    sessions.push(tty);
    let screen = await tty.waitFor(PROMPT);
    // The banner's last line is wider than 80 columns: it goes on at a word, not mid-word.
    const banner = "/help · @path attaches a file · !cmd runs a command · Esc cancels · Ctrl-C twice exits";
    const lines = screen.split("\n").map((l) => l.trimEnd());
    const at = lines.findIndex((l) => l.startsWith("/help ·"));
    expect(lines.slice(at, at + 2).join(" ")).toBe(banner);
    tty.type("/help");
    tty.keys("Enter");
    screen = await tty.waitFor("cancels the running turn");
    // A long summary goes on under its own column.
    expect(screen).toMatch(
      /^\/init \[focus\] {5}ask the model to write AGENTS\.md \(project instructions read$/m,
    );
    expect(screen).toMatch(/^ {18}by every session\)$/m);
    expect(screen).toMatch(/^@path \+ Tab {8}attach a file .* Ctrl-C$/m);
    expect(screen).toMatch(/^ {19}cancels the running turn$/m);
    for (const line of screen.split("\n")) expect(line.trimEnd().length).toBeLessThan(80);
  }, 60_000);
});
