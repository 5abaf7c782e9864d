/**
 * Running git on the scope root so that nothing a repository's own config
 * names can run (an fsmonitor command, hooks, gpg for signatures, an
 * external diff or textconv filter, a submodule summary), with no colour
 * and no pager whatever the user's config says, never taking the index
 * lock (`GIT_OPTIONAL_LOCKS=0`: a `git` the user runs at the same moment is
 * never refused), and answered at a time limit.
 */

/** Config given on every call. */
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "log.showSignature=false",
  "status.submoduleSummary=false",
  "status.showStash=false",
  "status.relativePaths=true",
  "color.ui=false",
  "core.quotePath=true",
  "diff.external=",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
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
  "GIT_EXTERNAL_DIFF",
  "GIT_PAGER",
];

export type GitRun =
  | { kind: "ok"; stdout: Buffer; truncated: boolean }
  | { kind: "no_git" }
  | { kind: "failed"; reason: string; code?: number };

export interface GitRunOptions {
  /** The git binary. Default `git` on PATH. */
  git?: string;
  cwd: string;
  /** Environment git inherits (the repository variables are dropped). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  /** Output kept; the rest is read and dropped (`truncated`). */
  maxBytes: number;
  /** Exit codes that are not a failure (`git diff --no-index` answers 1 for "different"). */
  okCodes?: readonly number[];
}

/** Runs `git <args>` safely (see the file comment). */
export function runGit(args: readonly string[], options: GitRunOptions): Promise<GitRun> {
  const env: Record<string, string | undefined> = { ...(options.env ?? process.env) };
  for (const name of REPOSITORY_VARIABLES) delete env[name];
  env.GIT_OPTIONAL_LOCKS = "0";
  env.GIT_TERMINAL_PROMPT = "0";
  const okCodes = options.okCodes ?? [0];
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
    const child = spawn(options.git ?? "git", [...SAFE_CONFIG, ...args], {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let stderr = "";
    // Answered at the limit, not when the pipes close: a process git started could hold them open longer.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      child.stdout.destroy();
      child.stderr.destroy();
      settle({ kind: "failed", reason: `git did not answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      const room = options.maxBytes - kept;
      if (room <= 0) {
        truncated = true;
        return;
      }
      if (chunk.length > room) truncated = true;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      settle(error.code === "ENOENT" ? { kind: "no_git" } : { kind: "failed", reason: error.message });
    });
    child.on("close", (code) => {
      if (code !== null && okCodes.includes(code))
        settle({ kind: "ok", stdout: Buffer.concat(chunks), truncated });
      else
        settle({
          kind: "failed",
          reason: failureLine(stderr) || `git exited with code ${code}`,
          ...(code !== null ? { code } : {}),
        });
    });
  });
}

/**
 * The line of git's stderr that says what failed: its first `fatal:` or
 * `error:` line, since a command may first report progress ("Preparing
 * worktree (new branch ...)"); else the first line.
 */
function failureLine(stderr: string): string {
  const lines = stderr.trim().split("\n");
  return lines.find((line) => /^(fatal|error): /.test(line)) ?? lines[0] ?? "";
}
