/**
 * What git says about the scope root: the branch, a capped short status and
 * the last commit subjects. Two git processes started together (`status` and
 * `log`), under a short time limit, with the scope root as cwd. Reading
 * status must never run a project's code: fsmonitor, hooks, signature
 * checks and submodule summaries are switched off on the command line, and
 * `GIT_OPTIONAL_LOCKS=0` keeps git from taking the index lock (a `git` the
 * user runs at the same moment is never refused).
 */
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { type GitRun, runGit } from "./git-run.ts";

/** The repository at the scope root. */
export interface GitState {
  /** The branch checked out; undefined on a detached HEAD. */
  branch: string | undefined;
  /** The upstream branch (`origin/main`) with how far ahead and behind it, when there is one. */
  upstream?: { name: string; ahead: number; behind: number; gone: boolean };
  /** True before the first commit. */
  unborn: boolean;
  /** `git status --short` lines (paths relative to the scope root), at most `maxStatusLines`. */
  status: string[];
  /** Status lines left out of `status`. */
  moreStatus: number;
  /** The last commits, newest first: `<short hash> <subject>`. */
  commits: string[];
}

/** Why there is no GitState. */
export type GitAbsence =
  | { kind: "not_a_repository" }
  | { kind: "no_git" }
  | { kind: "failed"; reason: string };

export interface GitStateOptions {
  /** The git binary. Default `git` on PATH. */
  git?: string;
  /** Time limit of the git processes, after which they are killed. */
  timeoutMs: number;
  maxStatusLines: number;
  maxCommits: number;
  /** Environment the git processes inherit (before the repository variables are dropped). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Reads the repository that holds `root`, or says why there is none. */
export async function readGitState(root: string, options: GitStateOptions): Promise<GitState | GitAbsence> {
  // Outside any repository no process is started (and child_process is not loaded).
  if (!(await insideRepository(root))) return { kind: "not_a_repository" };
  const run = (args: string[], maxLines: number) => gitLines(args, root, options, maxLines);
  const [status, log] = await Promise.all([
    run(
      ["status", "--short", "--branch", "--untracked-files=normal", "--ignore-submodules=dirty"],
      options.maxStatusLines + 1,
    ),
    run(["log", `-n${options.maxCommits}`, "--format=%h %s"], options.maxCommits),
  ]);
  if (status.kind === "no_git") return { kind: "no_git" };
  if (status.kind === "failed") {
    return /not a git repository/i.test(status.reason) ? { kind: "not_a_repository" } : status;
  }
  const [header, ...entries] = status.lines;
  const head = parseBranchLine(header ?? "");
  return {
    ...head,
    status: entries,
    moreStatus: status.more,
    // `git log` fails before the first commit: there are none to show.
    commits: log.kind === "ok" && !head.unborn ? log.lines : [],
  };
}

/** Whether `root` or a directory above it holds a `.git` (a directory, or the file of a worktree or submodule). */
async function insideRepository(root: string): Promise<boolean> {
  const dirs = [path.resolve(root)];
  for (let dir = dirs[0]!; path.dirname(dir) !== dir; dir = path.dirname(dir)) dirs.push(path.dirname(dir));
  // Every level at once: one wait instead of one per level before git can start.
  const found = await Promise.all(
    dirs.map((dir) =>
      stat(path.join(dir, ".git")).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.includes(true);
}

/** The `## ...` line of `git status --short --branch`. */
function parseBranchLine(line: string): Pick<GitState, "branch" | "upstream" | "unborn"> {
  const text = line.startsWith("## ") ? line.slice(3) : line;
  // Before the first commit: `No commits yet on main` (older git: `Initial commit on main`).
  const unborn = /^(?:No commits yet|Initial commit) on (.+)$/.exec(text);
  if (unborn) return { branch: unborn[1], unborn: true };
  if (text.startsWith("HEAD (no branch)")) return { branch: undefined, unborn: false };
  // `main...origin/main [ahead 1, behind 2]`; a ref name never holds "..", so the split is safe.
  const match = /^(.*?)(?:\.\.\.(\S+))?(?: \[(.*)\])?$/.exec(text);
  const branch = match?.[1] ?? text;
  const upstreamName = match?.[2];
  if (upstreamName === undefined) return { branch, unborn: false };
  const facts = match?.[3] ?? "";
  const count = (word: string) => Number(new RegExp(`${word} (\\d+)`).exec(facts)?.[1] ?? 0);
  return {
    branch,
    unborn: false,
    upstream: { name: upstreamName, ahead: count("ahead"), behind: count("behind"), gone: facts === "gone" },
  };
}

/** Status and log are small; a repository with a huge untracked tree is cut here. */
const MAX_OUTPUT_BYTES = 256 * 1024;

type GitLines = { kind: "ok"; lines: string[]; more: number } | Exclude<GitRun, { kind: "ok" }>;

/** Runs git, keeping the first `maxLines` lines of its output and counting the rest. */
async function gitLines(
  args: string[],
  cwd: string,
  options: GitStateOptions,
  maxLines: number,
): Promise<GitLines> {
  const run = await runGit(args, {
    cwd,
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_OUTPUT_BYTES,
    ...(options.git ? { git: options.git } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  if (run.kind !== "ok") return run;
  const all = run.stdout.toString("utf8").split("\n");
  if (all.at(-1) === "") all.pop();
  return { kind: "ok", lines: all.slice(0, maxLines), more: Math.max(0, all.length - maxLines) };
}
