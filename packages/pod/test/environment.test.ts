import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { listSessions } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import type { GitState } from "../src/environment/git-state.ts";
import {
  branchLabel,
  type EnvironmentSnapshot,
  renderEnvironment,
  SessionEnvironment,
} from "../src/environment/session-environment.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

// Real git in real temp repositories; the user's and the system's git config stay out of it.
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: GIT_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function repo(): Promise<string> {
  const root = await tempDir("yoi-env-");
  git(root, "init", "-q", "-b", "main");
  return root;
}

async function commit(root: string, file: string, body: string, subject: string): Promise<void> {
  await writeFile(path.join(root, file), body);
  git(root, "add", file);
  git(root, "commit", "-q", "-m", subject);
}

function environment(root: string, options: ConstructorParameters<typeof SessionEnvironment>[2] = {}) {
  return new SessionEnvironment(root, "/bin/bash", { gitTimeoutMs: 30_000, ...options }, GIT_ENV);
}

function repository(snapshot: EnvironmentSnapshot): GitState {
  expect(snapshot.git).not.toHaveProperty("kind");
  return snapshot.git as GitState;
}

describe("the environment section", () => {
  it("names the date, OS, shell and root, and a fresh commit on a clean main", async () => {
    const root = await repo();
    await commit(root, "a.txt", "one\n", "first commit");
    const env = environment(root, { now: () => new Date(2031, 0, 9, 12) });
    const snapshot = await env.refresh();
    const git = repository(snapshot);
    expect(git.branch).toBe("main");
    expect(git.status).toEqual([]);
    expect(git.commits).toHaveLength(1);
    expect(git.commits[0]).toMatch(/^[0-9a-f]{7,} first commit$/);
    const text = env.render();
    expect(text).toContain("Today's date: 2031-01-09");
    expect(text).toContain("Shell (the bash tool): /bin/bash");
    expect(text).toContain(`Project root: ${root}`);
    expect(text).toContain("Branch: main\n");
    expect(text).toContain("Status: clean");
    expect(text).toContain("first commit");
  });

  it("shows changes, untracked files and the last commits newest first, read again on each refresh", async () => {
    const root = await repo();
    for (let i = 1; i <= 7; i++) await commit(root, "a.txt", `v${i}\n`, `change number ${i}`);
    const env = environment(root);
    expect(repository(await env.refresh()).status).toEqual([]);
    await writeFile(path.join(root, "a.txt"), "edited\n");
    await writeFile(path.join(root, "new.txt"), "new\n");
    const git = repository(await env.refresh());
    expect(git.status).toEqual([" M a.txt", "?? new.txt"]);
    expect(git.commits.map((c) => c.replace(/^\S+ /, ""))).toEqual([
      "change number 7",
      "change number 6",
      "change number 5",
      "change number 4",
      "change number 3",
    ]);
    expect(env.render()).toContain(" M a.txt\n?? new.txt\nRecent commits:");
  });

  it("with the project root in a subdirectory, paths are relative to the root", async () => {
    const root = await repo();
    await mkdir(path.join(root, "pkg"));
    await commit(root, "pkg/a.txt", "a\n", "base");
    await writeFile(path.join(root, "pkg", "a.txt"), "edited\n");
    await writeFile(path.join(root, "top.txt"), "t\n");
    const state = repository(await environment(path.join(root, "pkg")).refresh());
    expect(state.status).toEqual([" M a.txt", "?? ../top.txt"]);
  });

  it("caps the status and counts what it left out", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    for (let i = 0; i < 45; i++)
      await writeFile(path.join(root, `f${String(i).padStart(2, "0")}.txt`), "x\n");
    const env = environment(root);
    const git = repository(await env.refresh());
    expect(git.status).toHaveLength(40);
    expect(git.moreStatus).toBe(5);
    expect(env.render()).toContain("?? f39.txt\n... and 5 more");
    const small = environment(root, { maxStatusLines: 3 });
    expect(repository(await small.refresh()).moreStatus).toBe(42);
  });

  it("follows a branch switch, and names its upstream with ahead and behind", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    git(root, "branch", "upstream-base");
    git(root, "checkout", "-q", "-b", "feature/x");
    git(root, "branch", "--set-upstream-to=upstream-base");
    await commit(root, "b.txt", "b\n", "on the feature");
    const snapshot = await environment(root).refresh();
    const state = repository(snapshot);
    expect(state.branch).toBe("feature/x");
    expect(state.upstream).toEqual({ name: "upstream-base", ahead: 1, behind: 0, gone: false });
    expect(renderEnvironment(snapshot)).toContain("Branch: feature/x (tracking upstream-base: ahead 1)");
    expect(branchLabel(snapshot)).toBe("feature/x");
  });

  it("says detached HEAD at the commit it is on", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "first");
    await commit(root, "a.txt", "b\n", "second");
    git(root, "checkout", "-q", "--detach", "HEAD~1");
    const snapshot = await environment(root).refresh();
    const state = repository(snapshot);
    expect(state.branch).toBeUndefined();
    expect(state.commits[0]).toMatch(/ first$/);
    expect(branchLabel(snapshot)).toBe("detached HEAD");
    expect(renderEnvironment(snapshot)).toContain("Branch: detached HEAD (at the first commit below)");
  });

  it("before the first commit: the branch, the untracked files, no commits", async () => {
    const root = await repo();
    await writeFile(path.join(root, "x.txt"), "x\n");
    const snapshot = await environment(root).refresh();
    const state = repository(snapshot);
    expect(state).toMatchObject({ branch: "main", unborn: true, status: ["?? x.txt"], commits: [] });
    expect(renderEnvironment(snapshot)).toContain("Branch: main (no commits yet)");
  });

  it("outside a repository: no git part, no error and no process started", async () => {
    const root = await tempDir("yoi-env-plain-");
    const marker = path.join(root, "git-ran");
    const fakeGit = path.join(root, "fake-git");
    await writeFile(fakeGit, `#!/bin/sh\ntouch '${marker}'\nexit 128\n`);
    await chmod(fakeGit, 0o755);
    const env = environment(root, { git: fakeGit });
    const snapshot = await env.refresh();
    expect(snapshot.git).toEqual({ kind: "not_a_repository" });
    expect(
      await stat(marker).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect(branchLabel(snapshot)).toBeUndefined();
    const text = env.render();
    expect(text).toContain("Git repository: no");
    expect(text).not.toContain("Branch");
  });

  it("without git installed: the rest of the section, not a word about git", async () => {
    const root = await repo();
    const env = environment(root, { git: path.join(root, "no-such-git") });
    const snapshot = await env.refresh();
    expect(snapshot.git).toEqual({ kind: "no_git" });
    expect(env.render()).toContain(`Project root: ${root}`);
    expect(env.render()).not.toMatch(/git/i);
  });

  it("a git that does not answer is given up on at the time limit", async () => {
    const root = await repo();
    const slow = path.join(root, "slow-git");
    // The sleep outlives the shell that is killed and holds the pipes open: the limit must not wait for them.
    await writeFile(slow, "#!/bin/sh\nsleep 30\n");
    await chmod(slow, 0o755);
    const started = Date.now();
    const snapshot = await environment(root, { git: slow, gitTimeoutMs: 200 }).refresh();
    expect(snapshot.git).toEqual({ kind: "failed", reason: "git did not answer within 200 ms" });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(renderEnvironment(snapshot)).toContain("could not be read (git did not answer within 200 ms)");
  });

  it("never runs a repository's core.fsmonitor command", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    const marker = path.join(root, "..", `${path.basename(root)}-fsmonitor-ran`);
    const hook = path.join(root, ".git", "hostile-fsmonitor");
    await writeFile(hook, `#!/bin/sh\ntouch '${marker}'\n`);
    await chmod(hook, 0o755);
    git(root, "config", "core.fsmonitor", hook);
    await writeFile(path.join(root, "a.txt"), "changed\n");
    const exists = () =>
      stat(marker).then(
        () => true,
        () => false,
      );

    const state = repository(await environment(root).refresh());
    expect(state.status).toEqual([" M a.txt"]);
    expect(await exists()).toBe(false);

    // The control: the same config makes a plain `git status` run it, so the check above can fail.
    git(root, "status", "--short");
    expect(await exists()).toBe(true);
  });

  it("leaves the index alone (no lock taken, nothing written)", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    // Same content, other mtime: the index's stat data is stale, which a plain status would refresh and write.
    await utimes(path.join(root, "a.txt"), new Date(2001, 0, 1), new Date(2001, 0, 1));
    const index = path.join(root, ".git", "index");
    const before = await readFile(index);
    const state = repository(await environment(root).refresh());
    expect(state.status).toEqual([]);
    expect((await readFile(index)).equals(before)).toBe(true);
    // The control: a plain `git status` writes the refreshed index, so the check above can fail.
    git(root, "status", "--short");
    expect((await readFile(index)).equals(before)).toBe(false);
  });

  it("shares a read in progress, and reads again once it is done", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    const env = environment(root);
    const first = env.refresh();
    expect(env.refresh()).toBe(first);
    expect(env.latest()).toBe(first);
    await first;
    await writeFile(path.join(root, "b.txt"), "b\n");
    expect(repository(await env.latest()).status).toEqual([]);
    expect(repository(await env.refresh()).status).toEqual(["?? b.txt"]);
  });

  it("rejects a non-positive limit with the option's name", () => {
    expect(() => new SessionEnvironment("/", undefined, { maxCommits: 0 })).toThrow(
      "environment.maxCommits must be a positive integer, got 0",
    );
  });
});

describe("the environment reaches the model", () => {
  const servers: ScriptedServer[] = [];
  const pods: Pod[] = [];
  afterEach(async () => {
    for (const p of pods.splice(0)) await p.close();
    for (const s of servers.splice(0)) await s.close();
  });

  async function open(root: string, environment?: false) {
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        { type: "reply", text: "one" },
        { type: "reply", text: "two" },
      ],
    });
    servers.push(s);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(root, "..", `${path.basename(root)}-data`),
      fsync: "never",
      instructions: false,
      ...(environment === false ? { environment: false as const } : {}),
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
      }),
    });
    pods.push(pod);
    return { s, pod };
  }

  const systemOf = (s: ScriptedServer, i: number) =>
    JSON.stringify((s.requests[i] as { system: unknown }).system);

  it("each run's system prompt carries the branch and the status as they are then", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "the subject of the base commit");
    const { s, pod } = await open(root);
    const opened = await pod.environment();
    expect(opened && branchLabel(opened)).toBe("main");
    expect((await pod.run("hello")).status).toBe("completed");
    git(root, "checkout", "-q", "-b", "topic");
    await mkdir(path.join(root, "src"));
    await writeFile(path.join(root, "src", "new.ts"), "x\n");
    expect((await pod.run("again")).status).toBe("completed");
    const first = systemOf(s, 0);
    expect(first).toContain("# Environment");
    expect(first).toContain("Branch: main");
    expect(first).toContain("the subject of the base commit");
    expect(first).toContain("Status: clean");
    const second = systemOf(s, 1);
    expect(second).toContain("Branch: topic");
    expect(second).toContain("?? src/");
    expect(s.rejections).toEqual([]);
  });

  it("the session log records the branch the session began on, for session lists", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    git(root, "checkout", "-q", "-b", "feature/x");
    // A host that shows the environment (the CLI's header) has read it before the first input.
    const { pod } = await open(root);
    await pod.environment();
    expect((await pod.run("hello")).status).toBe("completed");
    await pod.flush();
    const sessions = await listSessions({ dir: path.join(root, "..", `${path.basename(root)}-data`) });
    expect(sessions.map((row) => row.gitBranch)).toEqual(["feature/x"]);
  });

  it("is left out when the embedder turns it off", async () => {
    const root = await repo();
    await commit(root, "a.txt", "a\n", "base");
    const { s, pod } = await open(root, false);
    expect(await pod.environment()).toBeUndefined();
    await pod.run("hello");
    expect(systemOf(s, 0)).not.toContain("# Environment");
  });
});
