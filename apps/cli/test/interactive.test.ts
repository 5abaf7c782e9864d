import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { yoiCommand as command, TmuxSession, waitForFile } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

describe.skipIf(!TmuxSession.available())("interactive yoi in a real terminal (tmux)", () => {
  it("@file with Tab, parallel tools, a permission ask, Ctrl-C cancel, /compact, /exit, then yoi -c", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          text: "Reading it.",
          options: { thinking: "Read the note and grep for greetings." },
          toolCalls: [
            { id: "toolu_read", name: "read_file", arguments: { path: "notes/a.txt" } },
            { id: "toolu_grep", name: "grep", arguments: { pattern: "hello" } },
          ],
        },
        {
          type: "reply",
          text: "The note says hello.",
          options: { usage: { inputTokens: 2000, outputTokens: 20 } },
        },
        {
          // Long enough to still run through the resizes below on a loaded machine, and under the
          // 120 s tool timeout: only Ctrl-C may end it.
          type: "reply",
          toolCalls: [{ id: "toolu_sleep", name: "bash", arguments: { command: "sleep 90" } }],
        },
        {
          type: "reply",
          text: "<summary>The user read notes/a.txt (it says hello) and cancelled a slow command.</summary>",
        },
        { type: "reply", text: "Continuing where we left off." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
    const out = path.join(home, "run1");

    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor("Ctrl-C twice exits");
    await tty.waitFor(/^›\s*$/m);

    // @ + Tab completes inside the scope
    tty.type("summarize @notes/a");
    tty.keys("Tab");
    await tty.waitFor("summarize @notes/a.txt");
    tty.keys("Enter");
    let screen = await tty.waitFor("─ 2 calls");
    expect(screen).toContain("✻ thinking");
    expect(screen).toContain("Reading it.");
    expect(screen).toMatch(/✓ read_file notes\/a\.txt \d+ms · \d+ B/);
    expect(screen).toMatch(/✓ grep \/hello\//);
    expect(screen).toContain("The note says hello.");
    expect(screen).toMatch(/context 1\.0% of 200k/);
    expect(JSON.stringify(server.requests[0])).toContain("[File: notes/a.txt]");

    // a permission ask answered at the prompt, then Ctrl-C cancels the running tool
    tty.type("now run the slow one");
    tty.keys("Enter");
    await tty.waitFor("[y]es · [n]o · [a]lways");
    // One key answers: no Enter.
    tty.type("y");
    await tty.waitFor(/bash sleep 90 \d/);
    // A resize while the spinner runs redraws it in place for the new width, leaving no stale copy:
    // at 16 columns the line is cut to 15 ("⠋ bash sleep 9…"), back at 120 it is whole again.
    const spinners = (s: string) => s.split("\n").filter((row) => /^[\u2800-\u28ff] bash/.test(row));
    tty.resize(16, 30);
    await tty.waitFor((s) => {
      const rows = spinners(s);
      return rows.length === 1 && /^\S bash sleep 9…\s*$/.test(rows[0] ?? "");
    });
    tty.resize(120, 40);
    screen = await tty.waitFor((s) => {
      const rows = spinners(s);
      return rows.length === 1 && /^\S bash sleep 90 \d/.test(rows[0] ?? "");
    });
    expect(spinners(screen)).toHaveLength(1);
    tty.keys("C-c");
    screen = await tty.waitFor("⊘ cancelled");
    expect(screen).toContain("→ allowed");
    expect(screen).toMatch(/✗ bash sleep 90/);
    await tty.waitFor(/^›\s*$/m);

    tty.type("/compact");
    tty.keys("Enter");
    await tty.waitFor("⟳ compacted the conversation");
    await tty.waitFor(/^›\s*$/m);

    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    const stty = await waitForFile(`${out}.stty`);
    // the terminal is back in cooked mode with echo
    expect(stty).toMatch(/(^|\s)icanon(\s|$)/);
    expect(stty).toMatch(/(^|\s)echo(\s|$)/);
    tty.kill();

    // yoi -c continues the same session: the compacted history goes to the model
    const out2 = path.join(home, "run2");
    const tty2 = TmuxSession.start(
      command({ project, home, baseURL: server.baseURL, args: ["-c"], out: out2 }),
    );
    sessions.push(tty2);
    await tty2.waitFor("resumed session");
    await tty2.waitFor(/^›\s*$/m);
    tty2.type("where were we?");
    tty2.keys("Enter");
    await tty2.waitFor("Continuing where we left off.");
    await tty2.waitFor(/^›\s*$/m);
    expect(JSON.stringify(server.requests.at(-1))).toContain("cancelled a slow command");
    // One Ctrl-C at the empty prompt only warns: yoi still takes input (and a Ctrl-C on text clears it).
    tty2.keys("C-c");
    await tty2.waitFor("press Ctrl-C again to exit");
    tty2.type("still here");
    await tty2.waitFor(/^› still here/m);
    tty2.keys("C-c");
    await tty2.waitFor((screen) => !screen.includes("still here") && /^›\s*$/m.test(screen));
    // Ctrl-C twice leaves. Both go in one send-keys: the second must come within 2 s of the first,
    // and the test's own screen polling on a loaded machine could take longer than that.
    tty2.keys("C-c", "C-c");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
    expect(server.rejections).toEqual([]);
  }, 360_000);

  it("attached files that do not fit the window are refused before anything is sent, and the line comes back for editing", async () => {
    const server = await startScriptedServer({ provider: "anthropic", script: [] });
    servers.push(server);
    // A missing ref no longer blocks (file-refs.test.ts); only what cannot fit the model's window does.
    const { home, project } = await tempWorld({ "a.txt": "a".repeat(450_000), "b.txt": "b".repeat(450_000) });
    await mkdir(path.join(home, ".yoi"));
    await writeFile(path.join(home, ".yoi", "config.jsonc"), '{ "toolOutput": { "maxBytes": 1000000 } }');
    const out = path.join(home, "run");
    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("compare @a.txt and @b.txt");
    tty.keys("Enter");
    const screen = await tty.waitFor("edit the line and press Enter");
    expect(screen).toContain("✗ the prompt with its attached files is");
    await tty.waitFor(/› compare @a\.txt and @b\.txt$/m);
    expect(server.requests).toHaveLength(0);
    tty.keys("C-c");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);

  it("asks once whether to trust a project whose config allows more, and remembers the answer", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "toolu_e", name: "bash", arguments: { command: "echo trusted-run" } }],
        },
        { type: "reply", text: "It printed trusted-run." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({
      ".yoi/config.jsonc":
        '{ "permissions": { "rules": [{ "tool": "bash", "match": "echo *", "action": "allow" }] } }',
    });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor('permissions: allow bash "echo *"');
    await tty.waitFor("trust this project's settings?");
    tty.type("y");
    tty.keys("Enter");
    await tty.waitFor(/^›\s*$/m);
    tty.type("say it");
    tty.keys("Enter");
    const screen = await tty.waitFor("It printed trusted-run.");
    // the project's rule allowed it: no question
    expect(screen).not.toContain("[y]es · [n]o");
    expect(screen).toMatch(/✓ bash echo trusted-run/);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    tty.kill();

    const out2 = path.join(home, "run2");
    const tty2 = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out: out2 }));
    sessions.push(tty2);
    const again = await tty2.waitFor(/^›\s*$/m);
    expect(again).not.toContain("trust this project");
    tty2.type("/exit");
    tty2.keys("Enter");
    expect(await waitForFile(`${out2}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("starting and quitting leaves no session; /model switches in place and the session list shows it", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "toolu_w", name: "write_file", arguments: { path: "b.txt", content: "bee\n" } }],
        },
        { type: "reply", text: "Answer from haiku." },
        { type: "reply", text: "Answer from opus." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const sessionsDir = path.join(home, ".yoi", "sessions");
    const logs = async () => (await readdir(sessionsDir).catch(() => [])).filter((f) => f.endsWith(".jsonl"));

    // Opened and left: nothing on disk, nothing to list or continue.
    const out0 = path.join(home, "run0");
    const tty0 = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out: out0 }));
    sessions.push(tty0);
    await tty0.waitFor(/^›\s*$/m);
    // A wrong /resume id leaves the (still empty) session as it was.
    tty0.type("/resume nope");
    tty0.keys("Enter");
    await tty0.waitFor('✗ no session "nope" (/sessions lists them)');
    await tty0.waitFor(/^›\s*$/m);
    tty0.type("/exit");
    tty0.keys("Enter");
    expect(await waitForFile(`${out0}.exit`)).toBe("EXIT=0\n");
    expect(await logs()).toEqual([]);

    const out = path.join(home, "run");
    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("first question");
    tty.keys("Enter");
    // The question shows what will be written, says what "always" grants, and so does the answer.
    await tty.waitFor(/new file: \+1 -0\n\s+1 \+ bee/);
    await tty.waitFor("[y]es · [n]o · [a]lways write_file this session");
    tty.type("a");
    await tty.waitFor("→ allowed: every write_file call, for the rest of this session");
    await tty.waitFor("Answer from haiku.");
    await tty.waitFor(/^›\s*$/m);
    tty.type("/model anthropic/claude-opus-4-5");
    tty.keys("Enter");
    await tty.waitFor("now on anthropic/claude-opus-4-5 (4 items in history kept)");
    tty.type("second question");
    tty.keys("Enter");
    await tty.waitFor("Answer from opus.");
    await tty.waitFor(/^›\s*$/m);
    tty.type("/sessions");
    tty.keys("Enter");
    const listed = await tty.waitFor(/first question\s+\S+ ago\s+claude-opus-4-5/);
    expect(listed).not.toContain("(no prompt yet)");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    // One session; the second request went to the new model with the whole conversation.
    const files = await logs();
    expect(files).toHaveLength(1);
    const second = server.requests[2] as { model: string; messages: unknown[] };
    expect(second.model).toBe("claude-opus-4-5");
    expect(JSON.stringify(second.messages)).toContain("Answer from haiku.");
    const id = (files[0] as string).replace(/\.jsonl$/, "");
    const loaded = await loadSession({ dir: path.join(home, ".yoi"), id });
    expect(loaded.records.find((r) => r.type === "config_change")).toMatchObject({
      model: "claude-opus-4-5",
      changes: { model: "anthropic/claude-opus-4-5", previous: "anthropic/claude-haiku-4-5" },
    });
    const listing = await runYoi(["sessions"], { cwd: project, env: cleanEnv(home) });
    // listed by the short prefix that tells it apart (the only session here: 8 characters)
    expect(listing.stdout).toMatch(
      new RegExp(`^${id.slice(0, 8)}\\s+first question\\s+\\S+ ago\\s+claude-opus-4-5`, "m"),
    );
  }, 240_000);

  it("/init asks the model to write AGENTS.md, and the next turn's system prompt carries it", async () => {
    const agents = "# Agents\n\nRun the tests with make check (marker init-5c1d).\n";
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            { id: "toolu_i", name: "write_file", arguments: { path: "AGENTS.md", content: agents } },
          ],
        },
        { type: "reply", text: "Wrote AGENTS.md with the test command." },
        { type: "reply", text: "Following the rules." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "README.md": "# demo\n" });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("/init mention make check");
    tty.keys("Enter");
    await tty.waitFor("[y]es · [n]o · [a]lways write_file this session");
    tty.type("y");
    await tty.waitFor("Wrote AGENTS.md with the test command.");
    await tty.waitFor(/^›\s*$/m);
    tty.type("go on");
    tty.keys("Enter");
    await tty.waitFor("Following the rules.");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");

    const first = JSON.stringify((server.requests[0] as { messages: unknown[] }).messages);
    expect(first).toContain("Write an AGENTS.md file at the project root");
    expect(first).toContain("The user also asked: mention make check");
    expect(await readFile(path.join(project, "AGENTS.md"), "utf8")).toBe(agents);
    // The file the model wrote is read before the next turn and sent with its path.
    const third = JSON.stringify((server.requests[2] as { system: unknown }).system);
    expect(third).toContain("## AGENTS.md");
    expect(third).toContain("marker init-5c1d");
  }, 240_000);
});
