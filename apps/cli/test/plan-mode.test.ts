/**
 * Plan mode hands over, through the shipped CLI: Shift+Tab cycles
 * default → acceptEdits → plan → default; in plan mode the model presents
 * its plan with exit_plan_mode, the user rejects it with feedback (the
 * model gets it, plan mode stays), then approves the revised plan choosing
 * acceptEdits, and the plan is carried out. In print mode nobody can
 * approve: the call is denied with a message and the plan is the answer.
 */
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld, toolResults } from "./helpers.ts";
import { yoiCommand as command, TmuxSession, waitForFile } from "./tmux.ts";

const sessions: TmuxSession[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

type Body = { messages: { role: string; content: unknown }[]; tools?: { name: string }[] };

const toolNames = (body: unknown) => ((body as Body).tools ?? []).map((t) => t.name);

describe.skipIf(!TmuxSession.available())("plan mode in a real terminal (tmux)", () => {
  it("Shift+Tab cycles the modes; a plan rejected with feedback, then approved and carried out", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_p1",
              name: "exit_plan_mode",
              arguments: { plan: "1. Write hello.txt\n2. Report back" },
            },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_p2",
              name: "exit_plan_mode",
              arguments: { plan: "1. Write hello.txt saying hi there\n2. Report back" },
            },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            { id: "toolu_w", name: "write_file", arguments: { path: "hello.txt", content: "hi there\n" } },
          ],
        },
        { type: "reply", text: "Wrote hello.txt." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(command({ project, home, baseURL: server.baseURL, args: [], out }));
    sessions.push(tty);
    await tty.waitFor("Ctrl-C twice exits");
    await tty.waitFor(/^›\s*$/m);

    // default → acceptEdits → plan → default: bypassPermissions is not in the cycle of this session.
    tty.keys("BTab");
    await tty.waitFor(/^⏵ accept edits ›/m);
    tty.keys("BTab");
    await tty.waitFor(/^⏸ plan ›/m);
    tty.keys("BTab");
    await tty.waitFor((s) => /^›\s*$/m.test(s) && !/bypass/.test(s));
    tty.keys("BTab");
    tty.keys("BTab");
    await tty.waitFor(/^⏸ plan ›/m);

    tty.type("add a greeting file");
    tty.keys("Enter");
    let screen = await tty.waitFor("[n]o, keep planning");
    expect(screen).toContain("the plan");
    expect(screen).toContain("1. Write hello.txt");
    expect(screen).toContain("[a]pprove, accept edits");
    tty.type("t");
    await tty.waitFor("what should change");
    tty.type("say hi there in it");
    tty.keys("Enter");
    await tty.waitFor("1. Write hello.txt saying hi there");
    await tty.waitFor(
      (s) => (s.match(/\[n\]o, keep planning/g) ?? []).length >= 1 && s.includes("saying hi there"),
    );
    tty.type("a");
    screen = await tty.waitFor("Wrote hello.txt.");
    expect(screen).toContain("plan rejected: say hi there in it");
    expect(screen).toContain("plan approved: accept edits");
    await tty.waitFor(/^⏵ accept edits ›/m);

    expect(await readFile(path.join(project, "hello.txt"), "utf8")).toBe("hi there\n");
    // Offered only in plan mode: the request after the approval no longer lists it.
    expect(toolNames(server.requests[0])).toContain("exit_plan_mode");
    expect(toolNames(server.requests[2])).not.toContain("exit_plan_mode");
    expect(toolResults(server.requests[1])[0]).toBe(
      "The user rejected the plan and said: say hi there in it\nYou are still in plan mode. Revise the plan with this in mind and present it again with exit_plan_mode.",
    );
    expect(toolResults(server.requests[2])[0]).toMatch(
      /^The user approved the plan\. The session is now in acceptEdits mode/,
    );
    // acceptEdits: the write ran without a question.
    expect(toolResults(server.requests[3])[0]).not.toMatch(/denied/i);

    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  });
});

describe("plan mode in print mode", () => {
  it("nobody can approve the plan: the call is denied with a message, plan mode stays and the plan is the answer", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "toolu_p", name: "exit_plan_mode", arguments: { plan: "1. Edit a.txt" } }],
        },
        { type: "reply", text: "Plan: 1. Edit a.txt" },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const result = await runYoi(
      ["-p", "--permission-mode", "plan", "--model", "anthropic/claude-haiku-4-5", "plan an edit of a.txt"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Plan: 1. Edit a.txt\n");
    expect(result.stderr).toContain("plan mode: the plan cannot be approved here (no one can be asked)");
    expect(result.stderr).not.toContain("--allow-tool");
    expect(toolResults(server.requests[1])[0]).toMatch(
      /^The plan cannot be approved in this session: no one can be asked .*End your turn with the plan as your answer\.$/,
    );
    expect(toolNames(server.requests[0])).toContain("exit_plan_mode");
    expect(toolNames(server.requests[1])).toContain("exit_plan_mode");
  });

  it("outside plan mode the tool is not offered", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(["-p", "--model", "anthropic/claude-haiku-4-5", "hi"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.code).toBe(0);
    expect(toolNames(server.requests[0])).not.toContain("exit_plan_mode");
    expect(toolNames(server.requests[0])).toEqual(
      expect.arrayContaining(["bash", "bash_output", "kill_bash"]),
    );
  });
});
