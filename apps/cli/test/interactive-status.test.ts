/**
 * The status line and notifications in a real terminal (tmux), on the
 * shipped bundle: the command's first line under the prompt, the JSON it
 * gets (Claude Code's fields), a re-run when the state changes, a failing
 * and a slow command said once; OSC 9 for a finished turn and a waiting
 * permission question, read from the pane's raw output; YOI_NO_NOTIFY.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
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

async function userConfig(home: string, config: unknown): Promise<void> {
  await mkdir(path.join(home, ".yoi"), { recursive: true });
  await writeFile(path.join(home, ".yoi", "config.jsonc"), JSON.stringify(config));
}

async function replying(): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    provider: "anthropic",
    validate: true,
    script: (index) => ({ type: "reply", text: `reply ${index}` }),
  });
  servers.push(server);
  return server;
}

describe.skipIf(!TmuxSession.available())("status line and notifications (tmux)", () => {
  it("shows the command's first line under the prompt and runs it again when the state changes", async () => {
    const server = await replying();
    const { home, project } = await tempWorld();
    const state = path.join(home, "state.json");
    // The script reads the JSON and prints two lines: only the first is shown.
    const command = `cat > ${state}; printf 'SL mode=%s\\nsecond line\\n' "$(grep -o '"permission_mode":"[a-zA-Z]*"' ${state} | cut -d'"' -f4)"`;
    await userConfig(home, { statusLine: { type: "command", command, padding: 2, debounceMs: 50 } });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    let screen = await tty.waitFor(/^ {2}SL mode=default$/m);
    expect(screen).not.toContain("second line");
    // The line sits under the input.
    expect(screen).toMatch(/›\s*\n {2}SL mode=default/);
    const json = JSON.parse(await readFile(state, "utf8"));
    expect(json).toMatchObject({
      session_id: expect.any(String),
      cwd: expect.stringContaining("project"),
      model: { id: "anthropic/claude-haiku-4-5", display_name: "claude-haiku-4-5" },
      workspace: { current_dir: expect.stringContaining("project"), project_dir: expect.any(String) },
      version: expect.any(String),
      cost: { total_cost_usd: 0, total_lines_added: 0, total_lines_removed: 0 },
      context_window: { total_input_tokens: 0, context_window_size: 200000 },
      git: { branch: null },
      permission_mode: "default",
    });
    // Shift+Tab changes the mode: the command runs again.
    tty.keys("BTab");
    await tty.waitFor(/^ {2}SL mode=acceptEdits$/m);
    // A turn changes the tokens and cost.
    tty.type("hello");
    tty.keys("Enter");
    await tty.waitFor("reply 0");
    // The run after the turn (debounced) writes the new state.
    let after: { context_window: Record<string, number>; cost: Record<string, number> } | undefined;
    for (let i = 0; i < 300 && !((after?.context_window.total_input_tokens ?? 0) > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = JSON.parse(await readFile(state, "utf8").catch(() => "null")) ?? undefined;
    }
    expect(after?.context_window.total_input_tokens).toBeGreaterThan(0);
    expect(after?.context_window.used_percentage).toBeGreaterThan(0);
    expect(after?.cost.total_cost_usd).toBeGreaterThan(0);
    screen = await tty.waitFor(/^ {2}SL mode=acceptEdits$/m);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("counts a subagent's calls in its tokens and dollars, the same dollars as /cost", async () => {
    // The task (10 in, 5 out), the subagent's own call on a dearer model (20,000 in, 4,000 out), the answer.
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (index) =>
        index === 0
          ? {
              type: "reply",
              toolCalls: [
                {
                  id: "toolu_task",
                  name: "task",
                  arguments: { description: "look", prompt: "Say hi", agent: "pricier" },
                },
              ],
            }
          : index === 1
            ? {
                type: "reply",
                text: "child says hi",
                options: { usage: { inputTokens: 20_000, outputTokens: 4_000 } },
              }
            : { type: "reply", text: "all done" },
    });
    servers.push(server);
    const { home, project } = await tempWorld({
      ".yoi/agents/pricier.md":
        "---\ndescription: Says hi.\nmodel: anthropic/claude-sonnet-4-5\n---\nSay hi.\n",
    });
    const state = path.join(home, "state.json");
    await userConfig(home, {
      statusLine: { type: "command", command: `cat > ${state}; echo SL`, debounceMs: 0 },
    });
    const out = path.join(home, "run");
    const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor(/^\s*SL$/m);
    tty.type("delegate it");
    tty.keys("Enter");
    await tty.waitFor("all done");
    let after: { context_window: Record<string, number>; cost: Record<string, number> } | undefined;
    for (let i = 0; i < 300 && (after?.context_window.total_input_tokens ?? 0) < 20_020; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = JSON.parse(await readFile(state, "utf8").catch(() => "null")) ?? undefined;
    }
    expect(after?.context_window).toMatchObject({ total_input_tokens: 20_020, total_output_tokens: 4_010 });
    // Priced per model, the same dollars as /cost, which reads the session log (subagents included).
    tty.type("/cost");
    tty.keys("Enter");
    const screen = await tty.waitFor(/total\s+\$[\d.]+/);
    const shown = Number(/total\s+\$([\d.]+)/.exec(screen)?.[1]);
    expect(after?.cost.total_cost_usd).toBeGreaterThan(0);
    expect(after?.cost.total_cost_usd?.toFixed(3)).toBe(shown.toFixed(3));
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 180_000);

  it("a failing or slow command shows nothing and says why once", async () => {
    const server = await replying();
    for (const [command, why] of [
      ["echo broken >&2; exit 3", "status line: the command exited with 3: broken; nothing is shown"],
      [
        "sleep 20; echo late",
        "status line: the command took longer than 300 ms (statusLine.timeoutMs); nothing is shown",
      ],
    ] as const) {
      const { home, project } = await tempWorld();
      await userConfig(home, { statusLine: { type: "command", command, timeoutMs: 300, debounceMs: 0 } });
      const out = path.join(home, "run");
      const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: server.baseURL, args: [], out }), {
        width: 140,
      });
      sessions.push(tty);
      await tty.waitFor(why);
      tty.keys("BTab");
      tty.type("hi");
      tty.keys("Enter");
      const screen = await tty.waitFor(/reply \d/);
      await tty.waitFor(/›\s*$/m);
      // Said once, though the command ran again after the mode change and the turn.
      expect(screen.split(why).length - 1).toBe(1);
      expect(screen).not.toContain("late");
      tty.type("/exit");
      tty.keys("Enter");
      expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    }
  }, 180_000);

  it("notifies with OSC 9 when a turn ends and when a question waits; YOI_NO_NOTIFY turns it off", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", text: "first answer" },
        { type: "reply", toolCalls: [{ id: "toolu_1", name: "bash", arguments: { command: "ls -a" } }] },
        { type: "reply", text: "listed" },
        { type: "reply", text: "quiet answer" },
      ],
    });
    servers.push(server);
    for (const quiet of [false, true]) {
      const { home, project } = await tempWorld();
      await userConfig(home, { notifications: { longTurnSeconds: 0 } });
      const out = path.join(home, "run");
      const raw = path.join(home, "raw.out");
      const env = ["TERM_PROGRAM=iTerm.app", ...(quiet ? ["YOI_NO_NOTIFY=1"] : [])];
      const tty = TmuxSession.start(
        yoiCommand({ project, home, baseURL: server.baseURL, args: [], out, env }),
      );
      sessions.push(tty);
      // Everything the program writes to the terminal, escapes included.
      tty.query("pipe-pane", "-t", tty.name, "-o", `cat >> '${raw}'`);
      await tty.waitFor(/›\s*$/m);
      if (!quiet) {
        tty.type("say something");
        tty.keys("Enter");
        await tty.waitFor("first answer");
        await tty.waitFor(/›\s*$/m);
        tty.type("list the files");
        tty.keys("Enter");
        await tty.waitFor("[y]es · [n]o");
        const asked = await waitForFile(raw);
        tty.type("y");
        await tty.waitFor("listed");
        const bytes = await readFile(raw, "utf8");
        expect(asked.length).toBeGreaterThan(0);
        expect(bytes).toContain("\x1b]9;yoi: turn finished after 0s\x07");
        expect(bytes).toContain("\x1b]9;yoi: waiting for permission: bash ls -a\x07");
      } else {
        tty.type("say something");
        tty.keys("Enter");
        await tty.waitFor("quiet answer");
        await tty.waitFor(/›\s*$/m);
        const bytes = await readFile(raw, "utf8");
        expect(bytes).toContain("quiet answer");
        expect(bytes).not.toContain("\x1b]9;");
      }
      tty.type("/exit");
      tty.keys("Enter");
      expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    }
  }, 180_000);
});
