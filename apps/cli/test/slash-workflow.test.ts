/**
 * /cost, /status, /compact <focus> and /clear on the shipped bundle in a
 * real terminal (tmux), against a scripted server.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

const PROMPT = /^(?:\S+ )?›\s*$/m;

interface Body {
  system?: unknown;
  messages: { role: string; content: unknown }[];
}

describe.skipIf(!TmuxSession.available())("slash commands people expect (tmux)", () => {
  it("/cost by model, /status, /compact with a focus, /clear into a new session with the old one kept", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          // Long enough that a summary is smaller than the turn it folds.
          text: `Hi there. ${"Here is everything about the endpoints, one by one. ".repeat(80)}`,
          options: { usage: { inputTokens: 1_000, outputTokens: 100 } },
        },
        {
          type: "reply",
          text: "The config sets retries to 3.",
          options: { usage: { inputTokens: 2_000, outputTokens: 200 } },
        },
        { type: "reply", text: "<summary>Talked about the config: retries are 3.</summary>" },
        { type: "reply", text: "A fresh start." },
        { type: "reply", text: "Back in the old one." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);

    tty.type("/cost");
    tty.keys("Enter");
    await tty.waitFor("no model calls in this session yet: $0");

    tty.type("hello");
    tty.keys("Enter");
    await tty.waitFor("Hi there.");
    await tty.waitFor(PROMPT);
    tty.type("what does the config say?");
    tty.keys("Enter");
    await tty.waitFor("The config sets retries to 3.");
    await tty.waitFor(PROMPT);

    // 3k in at $1/M + 300 out at $5/M = $0.0045
    tty.type("/cost");
    tty.keys("Enter");
    let screen = await tty.waitFor(/total\s+\$0\.0045 at list prices/);
    expect(screen).toMatch(/anthropic\/claude-haiku-4-5\s+2 calls · 3\.0k in · 300 out\s+\$0\.0045/);

    tty.type("/status");
    tty.keys("Enter");
    screen = await tty.waitFor(/versions\s+yoi \S+ · node \d+/);
    expect(screen).toMatch(/model\s+anthropic\/claude-haiku-4-5 at http:\/\/127\.0\.0\.1/);
    expect(screen).toMatch(/mode\s+default/);
    expect(screen).toMatch(/sandbox\s+(active|unavailable|off)/);
    expect(screen).toMatch(/mcp\s+none configured/);
    // The last call: 2,000 in + 200 out of a 200k window.
    expect(screen).toMatch(/context\s+2\.2k of 200k \(1\.1%\)/);

    tty.type("/compact keep the config details");
    tty.keys("Enter");
    await tty.waitFor("compacting, focused on: keep the config details");
    await tty.waitFor("⟳ compacted the conversation");
    await tty.waitFor(PROMPT);
    expect(JSON.stringify(server.requests[2])).toContain(
      "The user asked this summary to focus on: keep the config details.",
    );

    tty.type("/clear");
    tty.keys("Enter");
    const cleared = /fresh conversation in a new session \((\S+)\); \/resume (\S+) goes back to the last one/;
    screen = await tty.waitFor(cleared);
    const match = cleared.exec(screen);
    const [, fresh, old] = match ?? [];
    tty.type("anything new?");
    tty.keys("Enter");
    await tty.waitFor("A fresh start.");
    // The running cost after the turn starts again with the new session.
    await tty.waitFor(/─ 1 call .* \$0\.0000 \(session \$0\.0000\)/);
    await tty.waitFor(PROMPT);
    // The new session's request holds only the new message.
    const last = server.requests[3] as Body;
    expect(last.messages).toHaveLength(1);
    expect(JSON.stringify(last.messages)).not.toContain("retries");
    // /cost now counts only the new session.
    tty.type("/cost");
    tty.keys("Enter");
    await tty.waitFor(/anthropic\/claude-haiku-4-5\s+1 call ·/);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    // The old session was kept: it resumes with its compacted history.
    expect(fresh).not.toBe(old);
    const back = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "-r", String(old), "and now?"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(back).toMatchObject({ code: 0, stdout: "Back in the old one.\n" });
    expect(JSON.stringify(server.requests[4])).toContain("retries are 3");
  }, 240_000);

  it("a model without known prices: $? with a pointer to the config entry, once, and in /cost", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "Priced? No.", options: { usage: { inputTokens: 10, outputTokens: 5 } } },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    await mkdir(path.join(home, ".yoi"), { recursive: true });
    await writeFile(
      path.join(home, ".yoi", "config.jsonc"),
      '{ "models": { "house-model": { "provider": "anthropic", "contextWindow": 100000, "maxOutputTokens": 4000 } } }',
    );
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: [], out, model: "anthropic/house-model" }),
    );
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    expect(tty.screen()).toContain("cost shows as $?: no prices known for anthropic/house-model");
    tty.type("hi");
    tty.keys("Enter");
    await tty.waitFor(/\$\? \(session \$\?\)/);
    await tty.waitFor(PROMPT);
    tty.type("/cost");
    tty.keys("Enter");
    const screen = await tty.waitFor(/total\s+\$\? at list prices/);
    expect(screen).toContain('"models": { "house-model": { "provider": "anthropic", "pricing"');
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("/export writes the conversation as Markdown and never replaces a file; a mistyped or foreign command is pointed to ours", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          text: "Let me look.",
          toolCalls: [
            { id: "r1", name: "read_file", arguments: { path: "notes.txt" } },
            { id: "r2", name: "read_file", arguments: { path: "missing.txt" } },
          ],
        },
        // An escape sequence in the answer: shown in the file, never obeyed by a terminal that prints it.
        { type: "reply", text: "The note says **hello**.\u001b[2J" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "notes.txt": "hello\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(PROMPT);
    tty.type("/export");
    tty.keys("Enter");
    await tty.waitFor("nothing to export yet: the conversation is empty");
    tty.type("what is in @notes.txt?");
    tty.keys("Enter");
    await tty.waitFor("The note says");
    await tty.waitFor(PROMPT);
    tty.type("/export chat.md");
    tty.keys("Enter");
    await tty.waitFor("exported 1 prompt and its answer to chat.md");
    const markdown = await readFile(path.join(project, "chat.md"), "utf8");
    expect(markdown).toMatch(/^# yoi session [0-9a-f-]{36}\n\n- model: anthropic\/claude-haiku-4-5\n/);
    expect(markdown).toContain(
      "## You\n\n> what is in @notes.txt?\n\n## yoi\n\nLet me look.\n\n- `read_file` notes.txt\n- `read_file` missing.txt (failed)\n\nThe note says **hello**.␛[2J\n",
    );
    expect(markdown).not.toContain("\u001b");
    // An existing file is left as it is.
    await writeFile(path.join(project, "mine.md"), "my notes\n");
    tty.type("/export mine.md");
    tty.keys("Enter");
    await tty.waitFor("/export: mine.md exists; give /export another name, or remove it first");
    expect(await readFile(path.join(project, "mine.md"), "utf8")).toBe("my notes\n");
    tty.type("/export");
    tty.keys("Enter");
    const written = await tty.waitFor(/exported 1 prompt and its answer to yoi-[0-9a-f-]{36}\.md/);
    const name = /yoi-[0-9a-f-]{36}\.md/.exec(written)?.[0] ?? "";
    expect(await readFile(path.join(project, name), "utf8")).toContain("> what is in @notes.txt?");

    tty.type("/sesions");
    tty.keys("Enter");
    await tty.waitFor("unknown command /sesions; did you mean /sessions? (try /help)");
    tty.type("/login");
    tty.keys("Enter");
    await tty.waitFor("unknown command /login; run yoi setup in a shell to save a key");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
