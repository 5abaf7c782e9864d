/**
 * `yoi --worktree [name]`, `yoi worktree list|remove` and resuming a
 * session that ran in a worktree, as the CLI ships, in real repositories.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../src/args.ts";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const GIT_ENV = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();

async function world(script: ScriptStep[]) {
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld({ "a.txt": "a\n" });
  git(project, "init", "-q", "-b", "main");
  git(project, "add", ".");
  git(project, "commit", "-q", "-m", "base");
  const env = cleanEnv(home, {
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: server.baseURL,
    ...GIT_ENV,
  });
  const yoi = (...args: string[]) => runYoi(args, { cwd: project, env });
  return { server, project, home, yoi };
}

describe("--worktree", () => {
  it("runs the session in a new worktree on its own branch; list, remove (refused while dirty), resume goes back", async () => {
    const { server, project, yoi } = await world([
      {
        type: "reply",
        toolCalls: [
          { id: "w1", name: "write_file", arguments: { path: "b.txt", content: "from the worktree\n" } },
        ],
      },
      { type: "reply", text: "Wrote b.txt." },
      { type: "reply", text: "Still here." },
    ]);
    const dir = path.join(project, ".yoi", "worktrees", "fix-1");
    const first = await yoi(
      "-p",
      "--output",
      "json",
      "--permission-mode",
      "acceptEdits",
      "--worktree",
      "fix-1",
      "write b.txt",
    );
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(`yoi: created worktree fix-1 (${dir}, branch yoi/fix-1)`);
    expect(await readFile(path.join(dir, "b.txt"), "utf8")).toBe("from the worktree\n");
    expect(existsSync(path.join(project, "b.txt"))).toBe(false);
    expect(git(project, "status", "--porcelain")).toBe("");
    expect(JSON.stringify(server.requests[0])).toContain(`Project root: ${dir}`);
    const sessionId = jsonLines(first.stdout)[0]?.session_id as string;

    const listed = await yoi("worktree", "list");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`fix-1 yoi/fix-1 · 1 uncommitted change · ${dir}\n`);

    // Resumed from the main checkout, the session goes back to its worktree.
    const resumed = await yoi("-p", "--resume", sessionId, "and now?");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("Still here.\n");
    expect(JSON.stringify(server.requests[2])).toContain(`Project root: ${dir}`);

    const refused = await yoi("worktree", "remove", "fix-1");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'yoi: worktree "fix-1" has uncommitted changes (1 file); commit or stash them there, or add --force to throw them away\n',
    );
    expect(existsSync(dir)).toBe(true);
    const removed = await yoi("worktree", "remove", "fix-1", "--force");
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(
      "removed worktree fix-1; its branch yoi/fix-1 is kept (git branch -D yoi/fix-1 deletes it)\n",
    );
    expect(existsSync(dir)).toBe(false);
    expect((await yoi("worktree", "list")).stdout).toBe(
      "no worktrees (yoi --worktree [name] starts a session in a new one)\n",
    );
    const gone = await yoi("-p", "--resume", sessionId, "again");
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`ran in the worktree ${dir}, which no longer exists`);
  }, 90_000);

  it("says what is wrong: no repository, a bad name, an unknown worktree", async () => {
    const { home, project } = await tempWorld({ "a.txt": "a\n" });
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ...GIT_ENV });
    const none = await runYoi(["-p", "--worktree", "x", "hi"], { cwd: project, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--worktree: ");
    expect(none.stderr).toContain("is not in a git repository; --worktree needs one");
    git(project, "init", "-q", "-b", "main");
    const empty = await runYoi(["-p", "--worktree", "x", "hi"], { cwd: project, env });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      "yoi: --worktree: this repository has no commit yet, and a worktree starts from one; commit once (git commit --allow-empty -m init) and try again\n",
    );
    const bad = await runYoi(["worktree", "remove", "../x"], { cwd: project, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"../x" cannot name a worktree');
    const unknown = await runYoi(["worktree", "remove", "nope"], { cwd: project, env });
    expect(unknown.stderr).toBe('yoi: no worktree "nope" (yoi worktree list shows them)\n');
    const usage = await runYoi(["worktree", "prune"], { cwd: project, env });
    expect(usage.stderr).toBe(
      'yoi: yoi worktree takes one subcommand: list or remove <name> (got "prune")\n',
    );
  }, 60_000);
});

describe("--worktree parsing", () => {
  it("takes a name when one follows, else generates one and leaves the prompt alone", () => {
    expect(parseCommand(["--worktree", "fix-1", "-p", "go"])).toMatchObject({
      worktree: { name: "fix-1" },
      prompt: "go",
    });
    expect(parseCommand(["-w", "-p", "go"])).toMatchObject({ worktree: {}, prompt: "go" });
    expect(parseCommand(["-p", "-w", "fix the bug"])).toMatchObject({ worktree: {}, prompt: "fix the bug" });
    expect(parseCommand(["-p", "go", "-w"])).toMatchObject({ worktree: {}, prompt: "go" });
    expect(parseCommand(["--worktree=named", "hi"])).toMatchObject({
      worktree: { name: "named" },
      prompt: "hi",
    });
  });
});
