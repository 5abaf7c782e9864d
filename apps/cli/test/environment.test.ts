/**
 * The environment the shipped yoi (dist/bin.js) puts in front of the model,
 * and the branch in its header: a real git repository, a scripted server
 * that records the requests, and a real terminal (tmux).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const terminals: TmuxSession[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  for (const s of servers.splice(0)) await s.close();
});

/** A project that is a git repository on `branch`, one commit in, one file changed. */
async function repository(branch: string) {
  const world = await tempWorld({ "a.txt": "one\n" });
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: world.project,
      stdio: "pipe",
      env: {
        ...cleanEnv(world.home),
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@example.invalid",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@example.invalid",
      },
    });
  git("init", "-q", "-b", branch);
  git("add", "a.txt");
  git("commit", "-q", "-m", "the first commit of the test repository");
  writeFileSync(path.join(world.project, "a.txt"), "two\n");
  return world;
}

async function server(): Promise<ScriptedServer> {
  const s = await startScriptedServer({ provider: "anthropic", script: [{ type: "reply", text: "ok" }] });
  servers.push(s);
  return s;
}

describe("the environment in context (bundle)", () => {
  it("print mode: the request's system prompt carries the date, the branch, the status and the commits", async () => {
    const { home, project } = await repository("feature/env");
    const s = await server();
    const r = await runYoi(["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", s.baseURL], {
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key" }),
      cwd: project,
    });
    expect(r.code, r.stderr).toBe(0);
    const system = JSON.stringify((s.requests[0] as { system: unknown }).system);
    expect(system).toContain("# Environment");
    expect(system).toMatch(/Today's date: \d{4}-\d{2}-\d{2}/);
    expect(system).toContain(`Project root: ${project}`);
    expect(system).toContain("Branch: feature/env");
    expect(system).toContain(" M a.txt");
    expect(system).toContain("the first commit of the test repository");
  }, 60_000);

  it.runIf(TmuxSession.available())(
    "the interactive header names the branch, also in a narrow terminal",
    async () => {
      const { home, project } = await repository("topic-42");
      const s = await server();
      for (const width of [160, 72]) {
        const out = path.join(home, `run-${width}`);
        const tty = TmuxSession.start(yoiCommand({ project, home, baseURL: s.baseURL, args: [], out }), {
          width,
          height: 30,
        });
        terminals.push(tty);
        const screen = await tty.waitFor(/^›\s*$/m);
        const header = screen.split("\n").find((l) => l.startsWith("yoi "));
        expect(header, screen).toBeDefined();
        expect(header).toMatch(/ · topic-42\s*$/);
        expect(header!.trimEnd().length).toBeLessThanOrEqual(width);
        if (width === 160) expect(header).toContain(` · ${project} · topic-42`);
        else expect(header).toContain(" · …");
        tty.type("/exit");
        tty.keys("Enter");
        expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
      }
    },
    120_000,
  );
});
