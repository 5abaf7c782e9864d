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

/**
 * Config given on every call: nothing a repository's own config names may
 * run (an fsmonitor command, hooks, gpg for signatures, a submodule summary),
 * and the output has no colour whatever the user's config says.
 */
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "log.showSignature=false",
  "status.submoduleSummary=false",
  "status.showStash=false",
  "status.relativePaths=true",
  "color.ui=false",
  "core.quotePath=true",
].flatMap((c) => ["-c", c]);

/** Variables that would point git at another repository than the scope root's. */
const REPOSITORY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

/** Reads the repository that holds `root`, or says why there is none. */
export async function readGitState(root: string, options: GitStateOptions): Promise<GitState | GitAbsence> {
  // Outside any repository no process is started (and child_process is not loaded).
  if (!(await insideRepository(root))) return { kind: "not_a_repository" };
  const env: Record<string, string | undefined> = { ...(options.env ?? process.env) };
  for (const name of REPOSITORY_VARIABLES) delete env[name];
  env.GIT_OPTIONAL_LOCKS = "0";
  env.GIT_TERMINAL_PROMPT = "0";
  const run = (args: string[], maxLines: number) =>
    runGit(options.git ?? "git", [...SAFE_CONFIG, ...args], root, env, options.timeoutMs, maxLines);
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
  for (let dir = path.resolve(root); ; dir = path.dirname(dir)) {
    if (
      await stat(path.join(dir, ".git")).then(
        () => true,
        () => false,
      )
    )
      return true;
    if (path.dirname(dir) === dir) return false;
  }
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

type GitRun =
  | { kind: "ok"; lines: string[]; more: number }
  | { kind: "no_git" }
  | { kind: "failed"; reason: string };

/** Runs git, keeping the first `maxLines` lines of its output and counting the rest. */
function runGit(
  git: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
  timeoutMs: number,
  maxLines: number,
): Promise<GitRun> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (run: GitRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(run);
    };
    // Loaded here, not imported: a session outside a repository starts no process.
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn(git, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let more = 0;
    let partial = "";
    let stderr = "";
    // Answered at the limit, not when the pipes close: a process git started could hold them open longer.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      child.stdout.destroy();
      child.stderr.destroy();
      settle({ kind: "failed", reason: `git did not answer within ${timeoutMs} ms` });
    }, timeoutMs);
    const take = (line: string) => {
      if (lines.length < maxLines) lines.push(line);
      else more++;
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) take(line);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      settle(error.code === "ENOENT" ? { kind: "no_git" } : { kind: "failed", reason: error.message });
    });
    child.on("close", (code) => {
      if (partial !== "") take(partial);
      if (code === 0) settle({ kind: "ok", lines, more });
      else settle({ kind: "failed", reason: stderr.trim().split("\n")[0] || `git exited with code ${code}` });
    });
  });
}
