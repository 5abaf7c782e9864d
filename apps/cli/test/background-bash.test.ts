/**
 * Live and background bash through the shipped CLI in print mode
 * (stream-json) against the scripted server: a dev server that keeps
 * printing while the model does other work, bash_output read twice,
 * an unknown id, a wait_ms out of range, kill_bash, and the end of the
 * session killing what is still running (no orphan survives); and in a
 * terminal, the live lines under the spinner and /bashes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld, toolResults } from "./helpers.ts";
import { yoiCommand as command, TmuxSession, waitForFile } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const sessions: TmuxSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const s of servers.splice(0)) await s.close();
});

type Body = { messages: { role: string; content: unknown }[] };

const turns = (body: unknown) => (body as Body).messages.filter((m) => m.role === "assistant").length;

function call(id: string, name: string, args: Record<string, unknown>): ScriptStep {
  return { type: "reply", toolCalls: [{ id, name, arguments: args }] };
}

/**
 * Host pids of the processes whose command line holds `marker` (in the
 * sandbox a command sees its own PID namespace, so its `$$` says nothing here).
 */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue; // it ended meanwhile
    }
    if (cmdline.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/** Whether every process holding `marker` is gone (waiting a little for the kill's grace). */
async function allGone(marker: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (processesWith(marker).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const MARK = `yoi-bg-${process.pid}-${Date.now()}`;
/** A server that keeps printing, and a process of its own in the background, both marked. */
const devServer = (mark: string) =>
  `(exec -a sleeper-${mark} sleep 299) & i=0; while true; do i=$((i+1)); echo serving request $i; sleep 0.2; done # ${mark}`;

describe("background bash in print mode", () => {
  // In the sandbox and without it (where only yoi's own kill stops the process group).
  it.each([
    ["in the sandbox", []],
    ["without a sandbox", ["--no-sandbox"]],
  ])(
    "%s: a dev server keeps printing while the model works; bash_output sees new output each time; the session's end kills it",
    async (_how, flags) => {
      const seen: string[][] = [];
      let runningMeanwhile: number[] = [];
      const mark = `${MARK}-server${flags.length}`;
      const server = await startScriptedServer({
        provider: "anthropic",
        validate: true,
        script: (_index, body) => {
          seen.push(toolResults(body));
          switch (turns(body)) {
            case 0:
              return call("toolu_1", "bash", { command: devServer(mark), run_in_background: true });
            case 1:
              return call("toolu_2", "bash_output", { id: "bash_1", wait_ms: 10_000 });
            case 2:
              // Other work meanwhile, with live output of its own.
              return call("toolu_3", "bash", { command: "echo building; sleep 0.6; echo built" });
            case 3:
              runningMeanwhile = processesWith(mark);
              return call("toolu_4", "bash_output", { id: "bash_1", wait_ms: 10_000 });
            case 4:
              return call("toolu_5", "bash_output", { id: "bash_7" });
            case 5:
              return call("toolu_6", "bash_output", { id: "bash_1", wait_ms: 3_600_000 });
            default:
              return { type: "reply", text: "The server is up." };
          }
        },
      });
      servers.push(server);
      const { home, project } = await tempWorld();
      const result = await runYoi(
        [
          "-p",
          "--output",
          "stream-json",
          "--model",
          "anthropic/claude-haiku-4-5",
          "--allow-tool",
          "bash",
          ...flags,
          "start the dev server",
        ],
        {
          cwd: project,
          env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
        },
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(server.rejections).toEqual([]);

      const [started] = seen[1]!;
      expect(started).toMatch(/^Started in the background with id: bash_1\n/);
      const [first] = seen[2]!;
      expect(first).toMatch(/serving request 1\n/);
      expect(first).toMatch(/\[bash_1: running for \d+ s\]$/);
      const [built] = seen[3]!;
      expect(built).toBe("building\nbuilt\n[exit code: 0]");
      const [second] = seen[4]!;
      // Only what is new: the first lines were read already, and it is still running.
      expect(second).not.toMatch(/serving request 1\n/);
      expect(second).toMatch(/serving request \d+\n/);
      expect(second).toMatch(/\[bash_1: running for \d+ s\]$/);
      const [unknown] = seen[5]!;
      expect(unknown).toMatch(
        /No background command has the id "bash_7"\. The ids of this session: bash_1\./,
      );
      const [outOfRange] = seen[6]!;
      expect(outOfRange).toMatch(/Invalid arguments for bash_output:\n- wait_ms: .*60000/);

      // The foreground command's output streamed as tool_output_delta lines before its tool_end.
      const lines = jsonLines(result.stdout);
      const deltas = lines.filter((l) => l.type === "tool_output_delta" && l.id === "toolu_3");
      expect(deltas.map((l) => l.text).join("")).toBe("building\nbuilt\n");
      const endAt = lines.findIndex((l) => l.type === "tool_end" && l.id === "toolu_3");
      expect(lines.indexOf(deltas.at(-1)!)).toBeLessThan(endAt);
      expect(deltas[0]).toEqual({
        type: "tool_output_delta",
        id: "toolu_3",
        name: "bash",
        text: expect.any(String),
      });

      // It ran while the model worked; the session ended and nothing of it is left.
      expect(runningMeanwhile.length).toBeGreaterThan(0);
      expect(await allGone(mark)).toBe(true);
    },
  );

  it("a key split over two chunks of live output is masked in the tool_output_delta lines, as in the result", async () => {
    const key = "sk-ant-api03-Zq8Wd3Lm5Np7Rt9Vx2Bc4Fg6Hj";
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        // The key's first half, a pause (a chunk of its own), then the rest.
        call("toolu_k", "bash", { command: "head -c 30 key.txt; sleep 0.4; tail -c +31 key.txt" }),
        { type: "reply", text: "Printed it." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "key.txt": `the key is ${key} ok\n` });
    const result = await runYoi(
      [
        "-p",
        "--output",
        "stream-json",
        "--model",
        "anthropic/claude-haiku-4-5",
        "--allow-tool",
        "bash",
        "show it",
      ],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(result.code).toBe(0);
    const deltas = jsonLines(result.stdout).filter((l) => l.type === "tool_output_delta");
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(deltas.map((l) => l.text).join("")).toBe("the key is <redacted> ok\n");
    expect(result.stdout).not.toContain("Zq8Wd3Lm5");
    expect(result.stdout).not.toContain("Np7Rt9Vx2");
  });

  it("kill_bash stops it and what it started; the result says so", async () => {
    const seen: string[][] = [];
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (_index, body) => {
        seen.push(toolResults(body));
        switch (turns(body)) {
          case 0:
            return call("toolu_1", "bash", {
              command: `sleep 300 & echo started; wait # ${MARK}-kill`,
              run_in_background: true,
            });
          case 1:
            return call("toolu_2", "bash_output", { id: "bash_1", wait_ms: 10_000 });
          case 2:
            return call("toolu_3", "kill_bash", { id: "bash_1" });
          case 3:
            return call("toolu_4", "bash_output", { id: "bash_1" });
          default:
            return { type: "reply", text: "Stopped." };
        }
      },
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const result = await runYoi(
      ["-p", "--model", "anthropic/claude-haiku-4-5", "--allow-tool", "bash", "start and stop it"],
      {
        cwd: project,
        env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL }),
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Stopped.\n");
    expect(seen[2]![0]).toMatch(/started\n/);
    expect(seen[3]![0]).toMatch(/^bash_1 stopped \(sleep 300 & echo started/);
    expect(seen[4]![0]).toMatch(/\[bash_1: ended: killed \(killed with kill_bash\)\]$/);
    expect(await allGone(`${MARK}-kill`)).toBe(true);
  });
});

describe.skipIf(!TmuxSession.available())("live and background bash in a real terminal (tmux)", () => {
  it("a running command's last lines show under its spinner; /bashes lists and kills; /exit leaves nothing running", async () => {
    const mark = `${MARK}-tty`;
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_live",
              name: "bash",
              // Prints, then waits until the test has seen the line on screen (the file appears).
              arguments: {
                command:
                  "echo compiling step 1; echo compiling step 2; while [ ! -e seen ]; do sleep 0.1; done; echo linked",
              },
            },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_bg",
              name: "bash",
              arguments: { command: devServer(mark), run_in_background: true, description: "dev server" },
            },
          ],
        },
        { type: "reply", text: "Started the dev server." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      command({ project, home, baseURL: server.baseURL, args: ["--allow-tool", "bash"], out }),
    );
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("build it and start the server");
    tty.keys("Enter");
    const live = await tty.waitFor("│ compiling step 2");
    expect(live).toContain("│ compiling step 1");
    expect(live).toMatch(/bash echo compiling step 1/);
    await writeFile(path.join(project, "seen"), "");
    const done = await tty.waitFor("Started the dev server.");
    // The live lines were the spinner's: the finished call shows its summary instead.
    expect(done).not.toContain("│ compiling step 2");
    await tty.waitFor(/^⏵? ?›\s*$/m);

    tty.type("/bashes");
    tty.keys("Enter");
    let screen = await tty.waitFor("stops one (all stop when the session ends)");
    expect(screen).toMatch(/bash_1 running for \d+ s · dev server/);
    expect(processesWith(mark).length).toBeGreaterThan(0);
    tty.type("/bashes kill bash_9");
    tty.keys("Enter");
    await tty.waitFor("no background command has the id bash_9 (this session's: bash_1)");
    tty.type("/bashes kill bash_1");
    tty.keys("Enter");
    screen = await tty.waitFor("bash_1 stopped · ended: killed (killed by the user (/bashes))");
    expect(await allGone(mark)).toBe(true);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  });

  it("/exit stops a background command that is still running", async () => {
    const mark = `${MARK}-exit`;
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [
            {
              id: "toolu_bg",
              name: "bash",
              arguments: { command: devServer(mark), run_in_background: true },
            },
          ],
        },
        { type: "reply", text: "Running." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      command({ project, home, baseURL: server.baseURL, args: ["--allow-tool", "bash"], out }),
    );
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("start it");
    tty.keys("Enter");
    await tty.waitFor("Running.");
    expect(processesWith(mark).length).toBeGreaterThan(0);
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
    expect(await allGone(mark)).toBe(true);
  });
});
