/**
 * Git worktrees for sessions (`yoi --worktree [name]`): each one under
 * `.yoi/worktrees/<name>` at the main checkout's root, on its own branch
 * `yoi/<name>` started from the current HEAD, so a session can change files
 * without touching the checkout it was started from. `.yoi/worktrees/` is
 * added to the repository's `info/exclude`, so the main checkout never
 * lists them as untracked; the directory is inside `.yoi`, which nothing a
 * session runs may write (sandbox/protected-paths.ts). git runs with the
 * guards of environment/git-run.ts (no hooks, no fsmonitor).
 */
import { appendFile, mkdir, readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { YoiError } from "@yoi/manifest/errors";
import { runGit } from "../environment/git-run.ts";

/** Where worktrees live, relative to the main checkout's root. */
export const WORKTREES_DIR = ".yoi/worktrees";
/** Branches of worktrees are `yoi/<name>`. */
export const WORKTREE_BRANCH_PREFIX = "yoi/";
/** Names: they become a directory and part of a branch name. */
export const WORKTREE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class WorktreeError extends YoiError<
  "not_a_repository" | "no_git" | "no_commit" | "bad_name" | "not_found" | "dirty" | "conflict" | "git_failed"
> {
  static override readonly marker: symbol = Symbol.for("yoi.pod.WorktreeError");
  override readonly name = "WorktreeError";
}

export interface WorktreeInfo {
  name: string;
  /** Real absolute path. */
  path: string;
  /** The branch checked out (`yoi/<name>`), undefined when detached. */
  branch?: string;
  /** Uncommitted changes (`git status --porcelain` lines), when asked for. */
  changes?: number;
}

export interface WorktreeOptions {
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
}

interface Repo {
  /** The main checkout's root. */
  root: string;
  /** The common git directory (`.git` of the main checkout). */
  commonDir: string;
}

function gitIn(cwd: string, options: WorktreeOptions) {
  return async (args: string[]) => {
    const run = await runGit(args, {
      cwd,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxBytes: 4 * 1024 * 1024,
      ...(options.env ? { env: options.env } : {}),
    });
    if (run.kind === "no_git") throw new WorktreeError("no_git", "git is not installed (or not on PATH)");
    if (run.kind === "failed") {
      if (/not a git repository/i.test(run.reason))
        throw new WorktreeError(
          "not_a_repository",
          `${cwd} is not in a git repository; --worktree needs one`,
        );
      throw new WorktreeError(
        "git_failed",
        `git ${args[0]} ${args[1] ?? ""}: ${run.reason}`.replace(/ +:/, ":"),
      );
    }
    return run.stdout.toString("utf8").trim();
  };
}

/** The repository `cwd` is in, by its main checkout (also when `cwd` is inside one of its worktrees). */
async function repoOf(cwd: string, options: WorktreeOptions): Promise<Repo> {
  const git = gitIn(cwd, options);
  const commonDir = path.resolve(cwd, await git(["rev-parse", "--git-common-dir"]));
  const bare = await git(["rev-parse", "--is-bare-repository"]);
  if (bare === "true" || path.basename(commonDir) !== ".git")
    throw new WorktreeError(
      "not_a_repository",
      "--worktree needs a repository with a main checkout (not a bare one)",
    );
  return { root: path.dirname(commonDir), commonDir };
}

function checkName(name: string): void {
  if (!WORKTREE_NAME_PATTERN.test(name) || name.includes(".."))
    throw new WorktreeError(
      "bad_name",
      `"${name}" cannot name a worktree: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
}

const ADJECTIVES = ["brisk", "calm", "clever", "eager", "gentle", "keen", "quiet", "steady", "swift", "tidy"];
const NOUNS = ["otter", "heron", "badger", "falcon", "lynx", "marten", "panda", "raven", "robin", "wren"];

/** A name for a worktree nobody named: two words and a few random characters. */
export function generatedWorktreeName(random: () => number = Math.random): string {
  const pick = (words: string[]) => words[Math.floor(random() * words.length)]!;
  const suffix = Math.floor(random() * 36 ** 4)
    .toString(36)
    .padStart(4, "0");
  return `${pick(ADJECTIVES)}-${pick(NOUNS)}-${suffix}`;
}

/** The repository's worktrees under `.yoi/worktrees`, by `git worktree list`. */
export async function listWorktrees(
  cwd: string,
  options: WorktreeOptions & { changes?: boolean } = {},
): Promise<WorktreeInfo[]> {
  const repo = await repoOf(cwd, options);
  const listed = await gitIn(repo.root, options)(["worktree", "list", "--porcelain"]);
  const dir = path.join(repo.root, WORKTREES_DIR);
  const out: WorktreeInfo[] = [];
  for (const block of listed.split(/\n\n+/)) {
    const lines = block.split("\n");
    const at = lines.find((l) => l.startsWith("worktree "))?.slice("worktree ".length);
    if (at === undefined || path.dirname(at) !== dir) continue;
    const branch = lines.find((l) => l.startsWith("branch "))?.slice("branch refs/heads/".length);
    const info: WorktreeInfo = { name: path.basename(at), path: at, ...(branch ? { branch } : {}) };
    if (options.changes) {
      const exists = await stat(at).then(
        () => true,
        () => false,
      );
      if (exists)
        info.changes = (await gitIn(at, options)(["status", "--porcelain"]))
          .split("\n")
          .filter(Boolean).length;
    }
    out.push(info);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The worktree `name` (or a generated name): reused when it exists, else
 * created on a new branch `yoi/<name>` from the current HEAD (or on that
 * branch, when it exists already).
 */
export async function openWorktree(
  cwd: string,
  name: string | undefined,
  options: WorktreeOptions = {},
): Promise<WorktreeInfo & { created: boolean }> {
  const chosen = name ?? generatedWorktreeName();
  checkName(chosen);
  const repo = await repoOf(cwd, options);
  const existing = (await listWorktrees(cwd, options)).find((w) => w.name === chosen);
  if (existing) return { ...existing, created: false };
  const dir = path.join(repo.root, WORKTREES_DIR, chosen);
  if (
    await stat(dir).then(
      () => true,
      () => false,
    )
  )
    throw new WorktreeError(
      "conflict",
      `${dir} exists but is not a worktree of this repository; move it away (or run git worktree prune) and try again`,
    );
  const verify = (ref: string) =>
    runGit(["rev-parse", "--verify", "-q", ref], {
      cwd: repo.root,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxBytes: 4096,
      ...(options.env ? { env: options.env } : {}),
    });
  const branch = `${WORKTREE_BRANCH_PREFIX}${chosen}`;
  const hasBranch = await verify(`refs/heads/${branch}`);
  // A new branch starts from HEAD, which a repository without a commit does not have yet.
  if (hasBranch.kind !== "ok" && (await verify("HEAD^{commit}")).kind !== "ok")
    throw new WorktreeError(
      "no_commit",
      "this repository has no commit yet, and a worktree starts from one; commit once (git commit --allow-empty -m init) and try again",
    );
  await excludeWorktrees(repo);
  await mkdir(path.dirname(dir), { recursive: true });
  const git = gitIn(repo.root, options);
  await git(
    hasBranch.kind === "ok"
      ? ["worktree", "add", dir, branch]
      : ["worktree", "add", "-b", branch, dir, "HEAD"],
  );
  return { name: chosen, path: dir, branch, created: true };
}

/**
 * Removes the worktree `name`; refuses when it has uncommitted changes
 * (untracked files count) unless `force`. Its branch stays: what was
 * committed there is never lost.
 */
export async function removeWorktree(
  cwd: string,
  name: string,
  options: WorktreeOptions & { force?: boolean } = {},
): Promise<WorktreeInfo> {
  checkName(name);
  const repo = await repoOf(cwd, options);
  const found = (await listWorktrees(cwd, { ...options, changes: true })).find((w) => w.name === name);
  if (!found) throw new WorktreeError("not_found", `no worktree "${name}" (yoi worktree list shows them)`);
  if ((found.changes ?? 0) > 0 && !options.force)
    throw new WorktreeError(
      "dirty",
      `worktree "${name}" has uncommitted changes (${found.changes} file${found.changes === 1 ? "" : "s"}); commit or stash them there, or add --force to throw them away`,
    );
  await gitIn(repo.root, options)(["worktree", "remove", ...(options.force ? ["--force"] : []), found.path]);
  return found;
}

/** Adds `/.yoi/worktrees/` to the repository's `info/exclude` once. */
async function excludeWorktrees(repo: Repo): Promise<void> {
  const file = path.join(repo.commonDir, "info", "exclude");
  const line = `/${WORKTREES_DIR}/`;
  const text = await readFile(file, "utf8").catch(() => "");
  if (text.split("\n").some((l) => l.trim() === line)) return;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}${line}\n`);
}
