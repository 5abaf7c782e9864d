/**
 * The prompt editor in a real terminal (tmux), on the shipped bundle: the
 * `/` menu and the `@` file finder filtering as you type, a 200-line paste
 * shown collapsed and sent whole, and vim keys editing the line.
 */
import { mkdir, writeFile } from "node:fs/promises";
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

interface Block {
  type: string;
  text?: string;
}
interface Body {
  messages: { role: string; content: string | Block[] }[];
}

/** The text of the last user message of a request. */
function typed(body: unknown): string {
  const content = (body as Body).messages.filter((m) => m.role === "user").at(-1)?.content;
  return typeof content === "string"
    ? content
    : (content ?? []).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
}

async function replyingServer(said: string[]): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: (index, body) => {
      said.push(typed(body));
      return { type: "reply", text: `reply ${index}` };
    },
  });
  servers.push(server);
  return server;
}

const PROMPT = /›\s*$/m;

describe.skipIf(!TmuxSession.available())("the prompt editor in a real terminal (tmux)", () => {
  it("the / menu and the @ finder filter as you type; a 200-line paste is one unit, sent whole", async () => {
    const said: string[] = [];
    const server = await replyingServer(said);
    const { home, project } = await tempWorld({
      "src/math.ts": "export const add = (a: number, b: number) => a + b;\n",
      "src/util/strings.ts": "export const x = 1;\n",
      "build/math-out.js": "ignored\n",
      ".gitignore": "build/\n",
      "README.md": "# demo\n",
    });
    await mkdir(path.join(project, ".yoi", "commands"), { recursive: true });
    await writeFile(
      path.join(project, ".yoi", "commands", "release-notes.md"),
      "---\ndescription: draft the release notes\n---\nDraft release notes.\n",
    );
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 100,
    });
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);

    // Typing / opens the menu of every command, with descriptions: built-in and the project's own.
    tty.type("/");
    let screen = await tty.waitFor(/❯ \/help\s+this list/);
    // A window of the list, and where in it the choice is.
    expect(screen).toMatch(/^\s+1\/\d{2,}$/m);
    // More letters filter it.
    tty.type("re");
    screen = await tty.waitFor((s) => !s.includes("❯ /help") && s.includes("❯ /resume"));
    expect(screen).not.toContain("/compact");
    expect(screen).toContain("/rewind");
    expect(screen).toContain("/release-notes");
    tty.type("l");
    screen = await tty.waitFor((s) => !s.includes("/resume") && s.includes("/release-notes"));
    expect(screen).toContain("draft the release notes (project)");
    // Enter runs the highlighted command: the custom command's text is sent.
    tty.keys("Enter");
    await tty.waitFor("reply 0");
    expect(said[0]).toContain("Draft release notes.");
    await tty.waitFor(PROMPT);
    // A command whose arguments are optional runs on Enter too (as typed in part), rather than waiting for them.
    tty.type("/rewi");
    await tty.waitFor(/❯ \/rewind \[N\]/);
    tty.keys("Enter");
    await tty.waitFor(/rewind to which\?/);
    tty.keys("Enter");
    await tty.waitFor(PROMPT);

    // @ opens the file finder: fuzzy, gitignore-aware; Tab takes the highlighted file.
    tty.type("look at @math");
    screen = await tty.waitFor(/❯ src\/math\.ts/);
    expect(screen).not.toContain("build/math-out.js");
    tty.type("x");
    await tty.waitFor((s) => !/❯ src\/math\.ts/.test(s));
    tty.keys("BSpace");
    await tty.waitFor(/❯ src\/math\.ts/);
    tty.type("\x1b[B"); // Down: the next match, or back to the first when there is one
    tty.keys("Tab");
    await tty.waitFor(/› look at @src\/math\.ts\s*$/m);
    // Esc closes a menu without touching the input.
    tty.type("@str");
    await tty.waitFor(/❯ src\/util\/strings\.ts/);
    tty.keys("Escape");
    await tty.waitFor((s) => !s.includes("❯ src/util/strings.ts"));
    tty.keys("BSpace", "BSpace", "BSpace", "BSpace");
    tty.type("please");
    tty.keys("Enter");
    await tty.waitFor("reply 1");
    // The ref as the pod writes it in the message, the file attached after it.
    expect(said[1]).toContain("look at [unresolved file ref: src/math.ts] please");
    expect(said[1]).toContain("[File: src/math.ts]");
    await tty.waitFor(PROMPT);

    // A paste of 200 lines: one unit in the editor, sent whole.
    const lines = Array.from({ length: 200 }, (_, i) => `pasted line ${i + 1}`);
    tty.type("before ");
    tty.paste(lines.join("\n"));
    await tty.waitFor("› before [Pasted text #1 +200 lines]");
    tty.type(" after");
    screen = await tty.waitFor("[Pasted text #1 +200 lines] after");
    expect(screen).not.toContain("pasted line 200");
    // Backspace takes a paste as a whole; a second one gets the next number.
    tty.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace");
    await tty.waitFor(/› before\s*$/m);
    tty.paste(lines.join("\n"));
    await tty.waitFor("› before [Pasted text #2 +200 lines]");
    tty.type(" after");
    tty.keys("Enter");
    await tty.waitFor("reply 2");
    expect(said[2]).toBe(`before ${lines.join("\n")} after`);
    await tty.waitFor(PROMPT);
    // Up brings it back as it was typed, collapsed, and it is sent whole again.
    tty.keys("Up");
    await tty.waitFor(/› before \[Pasted text #2 \+200 lines\] after\s*$/m);
    tty.keys("Enter");
    await tty.waitFor("reply 3");
    expect(said[3]).toBe(said[2]);
    await tty.waitFor(PROMPT);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("at 40 columns the menus, the status line and the vim prompt stay within the width", async () => {
    const said: string[] = [];
    const server = await replyingServer(said);
    const { home, project } = await tempWorld({
      "src/components/navigation/very-long-component-name-that-overflows.tsx": "x\n",
    });
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    const long = "status ".repeat(20);
    await writeFile(
      path.join(home, ".yoi", "config.jsonc"),
      JSON.stringify({ editorMode: "vim", statusLine: { type: "command", command: `echo '${long}'` } }),
    );
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
      width: 40,
    });
    sessions.push(tty);
    // Lines the terminal wrapped are joined again (-J): none may be wider than the screen.
    const joinedFit = () => {
      const joined = tty.query("capture-pane", "-p", "-J", "-t", tty.name);
      const wide = joined.split("\n").filter((line) => [...line].length > 40);
      expect(wide).toEqual([]);
    };
    await tty.waitFor("status status");
    joinedFit();
    tty.type("/");
    await tty.waitFor("❯ /help");
    joinedFit();
    tty.keys("BSpace");
    tty.type("@very");
    await tty.waitFor("❯ src/components/");
    joinedFit();
    tty.keys("Escape");
    await tty.waitFor(/^NORMAL /m);
    joinedFit();
    tty.type("dd");
    tty.type("i/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("vim keys: motions and operators edit the line, counts, undo, /vim toggles", async () => {
    const said: string[] = [];
    const server = await replyingServer(said);
    const { home, project } = await tempWorld();
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    await writeFile(path.join(home, ".yoi", "config.jsonc"), '{ "editorMode": "vim" }');
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(/^INSERT .*›\s*$/m);
    tty.type("one two three four");
    tty.keys("Escape");
    await tty.waitFor(/^NORMAL .*› one two three four\s*$/m);
    // 0 to the start, dw deletes a word, 2w moves two words, D deletes to the end.
    tty.type("0dw");
    await tty.waitFor(/› two three four\s*$/m);
    tty.type("wD");
    await tty.waitFor(/› two\s*$/m);
    // u undoes, x deletes under the cursor, $ and A append.
    tty.type("u");
    await tty.waitFor(/› two three four\s*$/m);
    tty.type("0x");
    await tty.waitFor(/› wo three four\s*$/m);
    tty.type("cwtwo");
    await tty.waitFor(/^INSERT .*› two three four\s*$/m);
    tty.keys("Escape");
    tty.type("A five");
    await tty.waitFor(/› two three four five\s*$/m);
    // o opens a line below: multi-line input; k goes up a line, dd deletes it.
    tty.keys("Escape");
    tty.type("oscratch");
    await tty.waitFor(/five\n\s+scratch\s*$/m);
    tty.keys("Escape");
    tty.type("kddp");
    await tty.waitFor(/› scratch\n\s+two three four five\s*$/m);
    tty.type("ddu");
    await tty.waitFor(/› scratch\n\s+two three four five\s*$/m);
    tty.type("kdd");
    await tty.waitFor(/› two three four five\s*$/m);
    // Enter in normal mode sends.
    tty.keys("Enter");
    await tty.waitFor("reply 0");
    expect(said[0]).toBe("two three four five");
    // Back at the prompt in insert mode; history still walks with k in normal mode.
    await tty.waitFor(/^INSERT .*›\s*$/m);
    tty.keys("Escape");
    tty.type("k");
    await tty.waitFor(/^NORMAL .*› two three four five\s*$/m);
    tty.type("0dwi");
    tty.keys("Escape");
    tty.type("dd");
    await tty.waitFor(/^NORMAL .*›\s*$/m);
    tty.type("i/vim");
    tty.keys("Enter");
    await tty.waitFor("vim keys off");
    await tty.waitFor(/^›\s*$/m);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);
});
