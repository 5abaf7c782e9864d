import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  generatedWorktreeName,
  listWorktrees,
  openWorktree,
  removeWorktree,
  WorktreeError,
} from "../src/worktrees/worktrees.ts";
import { tempDir } from "./helpers.ts";

const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

async function repo(): Promise<string> {
  const root = await tempDir("yoi-wt-");
  git(root, "init", "-q", "-b", "main");
  await writeFile(path.join(root, "a.txt"), "a\n");
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "base");
  return root;
}

describe("worktrees", () => {
  it("creates one on a new branch from HEAD, kept out of the main checkout's status, and reuses it", async () => {
    const root = await repo();
    const made = await openWorktree(root, "fix-1", { env });
    expect(made).toEqual({
      name: "fix-1",
      path: path.join(root, ".yoi", "worktrees", "fix-1"),
      branch: "yoi/fix-1",
      created: true,
    });
    expect(await readFile(path.join(made.path, "a.txt"), "utf8")).toBe("a\n");
    expect(git(made.path, "branch", "--show-current")).toBe("yoi/fix-1");
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(await readFile(path.join(root, ".git", "info", "exclude"), "utf8")).toMatch(
      /^\/\.yoi\/worktrees\/$/m,
    );
    // From the main checkout or from inside the worktree, the same one comes back.
    expect(await openWorktree(made.path, "fix-1", { env })).toMatchObject({
      path: made.path,
      created: false,
    });
    await openWorktree(root, "fix-2", { env });
    const exclude = await readFile(path.join(root, ".git", "info", "exclude"), "utf8");
    expect(exclude.split("\n").filter((l) => l === "/.yoi/worktrees/")).toHaveLength(1);
    expect((await listWorktrees(root, { env })).map((w) => `${w.name} ${w.branch}`)).toEqual([
      "fix-1 yoi/fix-1",
      "fix-2 yoi/fix-2",
    ]);
  });

  it("a generated name when none is given", async () => {
    const root = await repo();
    const made = await openWorktree(root, undefined, { env });
    expect(made.name).toMatch(/^[a-z]+-[a-z]+-[0-9a-z]{4}$/);
    expect(generatedWorktreeName(() => 0)).toBe("brisk-otter-0000");
  });

  it("remove refuses uncommitted changes unless forced, and keeps the branch", async () => {
    const root = await repo();
    const made = await openWorktree(root, "w", { env });
    await writeFile(path.join(made.path, "new.txt"), "work\n");
    expect((await listWorktrees(root, { env, changes: true }))[0]?.changes).toBe(1);
    const refused = await removeWorktree(root, "w", { env }).catch((e: unknown) => e);
    expect(WorktreeError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({
      code: "dirty",
      message:
        'worktree "w" has uncommitted changes (1 file); commit or stash them there, or add --force to throw them away',
    });
    expect(existsSync(path.join(made.path, "new.txt"))).toBe(true);
    await removeWorktree(root, "w", { env, force: true });
    expect(existsSync(made.path)).toBe(false);
    expect(git(root, "branch", "--list", "yoi/w")).toContain("yoi/w");
    // The branch is reused when the name comes back.
    expect(await openWorktree(root, "w", { env })).toMatchObject({ branch: "yoi/w", created: true });
  });

  it("says what is wrong: a bad name, an unknown one, a directory in the way, no repository", async () => {
    const root = await repo();
    await expect(openWorktree(root, "../up", { env })).rejects.toMatchObject({ code: "bad_name" });
    await expect(openWorktree(root, "-f", { env })).rejects.toMatchObject({ code: "bad_name" });
    await expect(removeWorktree(root, "nope", { env })).rejects.toMatchObject({
      code: "not_found",
      message: 'no worktree "nope" (yoi worktree list shows them)',
    });
    await mkdir(path.join(root, ".yoi", "worktrees", "taken"), { recursive: true });
    await expect(openWorktree(root, "taken", { env })).rejects.toMatchObject({ code: "conflict" });
    const plain = await tempDir("yoi-plain-");
    await expect(openWorktree(plain, "x", { env })).rejects.toMatchObject({ code: "not_a_repository" });
    // A repository with no commit has no HEAD to start a branch from: said so, nothing made.
    git(plain, "init", "-q", "-b", "main");
    await expect(openWorktree(plain, "x", { env })).rejects.toMatchObject({
      code: "no_commit",
      message: expect.stringContaining("this repository has no commit yet"),
    });
    expect(existsSync(path.join(plain, ".yoi"))).toBe(false);
  });

  it("a git failure is told by git's fatal line, not by the progress it printed first", async () => {
    const root = await repo();
    // The branch of worktree "busy" is checked out in the main checkout: git refuses a second checkout.
    git(root, "checkout", "-q", "-b", "yoi/busy");
    const refused = await openWorktree(root, "busy", { env }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: "git_failed",
      message: expect.stringMatching(/^git worktree add: fatal: /),
    });
    expect((refused as Error).message).not.toContain("Preparing worktree");
  });
});
