/**
 * The prompt's input in a real terminal (tmux): bracketed paste, newlines
 * inside a prompt, a paste of many lines without bracketed paste (the busy
 * race), Esc and Ctrl-C with queued lines, history across runs, `!cmd` (no question), and
 * "no, and tell the model why".
 */
import { readFile } from "node:fs/promises";
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
  content?: string | Block[];
}
interface Body {
  messages: { role: string; content: string | Block[] }[];
}

const text = (content: string | Block[] | undefined): string =>
  typeof content === "string"
    ? content
    : (content ?? []).map((b) => (b.type === "text" ? (b.text ?? "") : text(b.content))).join("\n");

/** Text of the last user message of a request (tool results included). */
function lastUser(body: unknown): string {
  const messages = (body as Body).messages.filter((m) => m.role === "user");
  return text(messages.at(-1)?.content);
}

/** The first user message's text (what the user typed for that run). */
function typed(body: unknown): string {
  const first = (body as Body).messages.filter((m) => m.role === "user").at(-1);
  return text(first?.content);
}

const PROMPT = /^›\s*$/m;

describe.skipIf(!TmuxSession.available())("the prompt's input in a real terminal (tmux)", () => {
  it("paste, newlines, 50 raw lines, Esc, Ctrl-C with queued lines, history, Ctrl-R", async () => {
    const replies: string[] = [];
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (index, body) => {
        const said = typed(body);
        replies.push(said);
        // Turns that must be cancelled: the server answers nothing.
        if (said.startsWith("wait forever")) return { type: "silence" };
        return { type: "reply", text: `reply ${index}` };
      },
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run1");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);

    // 1. A bracketed paste is one prompt: its newlines stay in the input, nothing is sent yet.
    tty.paste("line one\nline two\nline three");
    await tty.waitFor(/› line one\n\s+line two\n\s+line three/);
    // Alt+Enter and a trailing backslash insert newlines too; Enter sends.
    tty.keys("M-Enter");
    tty.type("fourth\\");
    tty.keys("Enter");
    tty.type("fifth");
    await tty.waitFor(/line three\n\s+fourth\n\s+fifth/);
    // Shift+Enter as terminals with the kitty keyboard protocol (CSI u) send it.
    tty.type("\x1b[13;2u");
    tty.type("sixth");
    await tty.waitFor(/fifth\n\s+sixth/);
    expect(server.requests).toHaveLength(0);
    tty.keys("Enter");
    await tty.waitFor("reply 0");
    expect(replies[0]).toBe("line one\nline two\nline three\nfourth\nfifth\nsixth");

    // 2. A bracketed paste of 50 lines: one prompt (shown collapsed), one request with all of it.
    const fifty = Array.from({ length: 50 }, (_, i) => `pasted ${i + 1}`).join("\n");
    await tty.waitFor(PROMPT);
    tty.paste(fifty);
    await tty.waitFor("› [Pasted text #1 +50 lines]");
    tty.keys("Enter");
    await tty.waitFor("reply 1");
    expect(replies[1]).toBe(fifty);

    // 3. The same 50 lines from a terminal without bracketed paste: 50 Enter presses in one burst.
    // The first runs, the others queue; none starts a second run beside it.
    await tty.waitFor(PROMPT);
    const burst = Array.from({ length: 50 }, (_, i) => `burst ${i + 1}`);
    tty.paste(burst.join("\n"), { bracketed: false });
    tty.keys("Enter");
    const screen = await tty.waitFor("reply 51", 120_000);
    expect(screen).not.toContain("in progress");
    expect(screen).not.toContain("internal error");
    expect(replies.slice(2)).toEqual(burst);

    // 4. Esc interrupts a turn waiting on the model.
    await tty.waitFor(PROMPT);
    tty.type("wait forever 1");
    tty.keys("Enter");
    await tty.waitFor(() => replies.length === 53);
    tty.keys("Escape");
    await tty.waitFor("⊘ cancelled");
    await tty.waitFor(PROMPT);

    // 5. Lines typed during a turn queue; Ctrl-C cancels it and puts them back in the input.
    tty.type("wait forever 2");
    tty.keys("Enter");
    await tty.waitFor(() => replies.length === 54);
    tty.type("queued one");
    // What is typed during a turn is shown on a line of its own until Enter queues it.
    await tty.waitFor("› queued one▏");
    tty.keys("Enter");
    tty.type("queued two");
    tty.keys("Enter");
    await tty.waitFor("▸ queued: queued two");
    tty.keys("C-c");
    await tty.waitFor("2 queued line(s) put back in the input");
    await tty.waitFor(/› queued one\n\s+queued two\s*$/m);
    tty.keys("Enter");
    await tty.waitFor("reply 54");
    expect(replies[54]).toBe("queued one\nqueued two");
    await tty.waitFor(PROMPT);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    tty.kill();

    // 6. History is kept per project in ~/.yoi/history: Up brings back the last prompt of a new run.
    const file = await readFile(path.join(home, ".yoi", "history"), "utf8");
    const entries = file
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { project: string; text: string });
    expect(entries.every((e) => e.project === project)).toBe(true);
    expect(entries.map((e) => e.text)).toContain("line one\nline two\nline three\nfourth\nfifth\nsixth");
    const out2 = path.join(home, "run2");
    const tty2 = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: [], out: out2 }),
    );
    sessions.push(tty2);
    await tty2.waitFor(PROMPT);
    tty2.keys("Up");
    await tty2.waitFor(/^› \/exit\s*$/m);
    tty2.keys("Up");
    await tty2.waitFor(/› queued one\n\s+queued two/);
    // Ctrl-R finds an older prompt by a piece of it; Enter takes it into the input.
    tty2.keys("C-u", "C-u", "C-r");
    tty2.type("burst 17");
    await tty2.waitFor("reverse-i-search) 'burst 17': burst 17");
    tty2.keys("Enter");
    await tty2.waitFor(/^› burst 17\s*$/m);
    tty2.keys("C-u");
    tty2.type("/exit");
    tty2.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
    // A history that belongs to another project is not offered here.
    const other = await tempWorld();
    const out3 = path.join(home, "run3");
    const tty3 = TmuxSession.start(
      yoiCommand({ project: other.project, home, baseURL: server.baseURL, args: [], out: out3 }),
    );
    sessions.push(tty3);
    await tty3.waitFor(PROMPT);
    tty3.keys("Up");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(tty3.screen()).toMatch(PROMPT);
    // Ctrl-D at an empty prompt leaves.
    tty3.keys("C-d");
    expect(await waitForFile(`${out3}.exit`)).toBe("EXIT=0\n");
  }, 300_000);

  it("!cmd runs without a question (the user's own) and its output reaches the model; a no can say why", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", text: "I see the marker." },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_npm", name: "bash", arguments: { command: "npm install" } }],
        },
        { type: "reply", text: "Understood, using pnpm." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "marker.txt": "shell-marker-42\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("!cat marker.txt");
    tty.keys("Enter");
    // The user's own command: bash asks the model's calls by default, never this one.
    await tty.waitFor("the output goes to the model with your next message");
    expect(tty.screen()).not.toContain("allow bash");
    expect(tty.screen()).toContain("  shell-marker-42");
    expect(server.requests).toHaveLength(0);
    tty.type("what did it print?");
    tty.keys("Enter");
    await tty.waitFor("I see the marker.");
    const sent = lastUser(server.requests[0]);
    expect(sent).toContain("$ cat marker.txt");
    expect(sent).toContain("shell-marker-42");
    expect(sent).toContain("what did it print?");

    // "no, and tell the model why": the reason is the tool's result.
    await tty.waitFor(PROMPT);
    tty.type("install the deps");
    tty.keys("Enter");
    await tty.waitFor("[t]ell the model why not");
    tty.type("t");
    await tty.waitFor("tell the model why ›");
    tty.type("use pnpm here");
    tty.keys("Enter");
    await tty.waitFor("Understood, using pnpm.");
    expect(tty.screen()).toContain("→ denied: use pnpm here");
    expect(lastUser(server.requests[2])).toContain(
      "the user declined bash (npm install) and said: use pnpm here",
    );
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it('"always" for bash grants the command\'s prefix rule, not more', async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", toolCalls: [{ id: "toolu_1", name: "bash", arguments: { command: "ls -a" } }] },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_2", name: "bash", arguments: { command: "ls -l && ls -a" } }],
        },
        {
          type: "reply",
          toolCalls: [{ id: "toolu_3", name: "bash", arguments: { command: "ls -a > out.txt" } }],
        },
        { type: "reply", text: "Finished." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("list things");
    tty.keys("Enter");
    await tty.waitFor('[a]lways "ls *" this session');
    tty.type("a");
    await tty.waitFor('→ allowed: "ls *", for the rest of this session');
    // The next line is only ls commands: no question.
    await tty.waitFor(/✓ bash ls -l && ls -a/);
    // A write through a redirection is not covered by the prefix: asked again.
    await tty.waitFor("allow bash: ls -a > out.txt");
    tty.type("n");
    await tty.waitFor("Finished.");
    expect(tty.screen().match(/\? allow bash/g)).toHaveLength(2);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("Ctrl-C during an answer: the cancel shows on a live line, and the answer's paragraph is not cut by a note", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        // Part of a paragraph, then nothing more: the turn is cancelled while the answer is open.
        {
          type: "reply",
          text: "The first words of a paragraph that never ends because the user stops it here and now.",
          options: { chunkSize: 8 },
          truncateBytes: 1500,
          end: "hang",
        },
        { type: "reply", text: "after" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("start");
    tty.keys("Enter");
    await tty.waitFor("The first words");
    tty.keys("C-c");
    const screen = await tty.waitFor("⊘ cancelled");
    // The words that came stay one paragraph, right above the result: no "cancelling" note was printed into it.
    expect(screen).toMatch(/^The first words[^\n]*\n\n?⊘ cancelled/m);
    await tty.waitFor(PROMPT);
    expect(tty.screen()).not.toContain("cancelling");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 60_000);
});
