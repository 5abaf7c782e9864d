/**
 * Runs one configured hook command: `sh -c <command>` in the project root,
 * the event as JSON on stdin, killed (its whole process group) when it
 * outlives its time limit or the run is cancelled.
 *
 * The protocol (documented in the pod README):
 * - exit 0: go on. Stdout that is a JSON object may decide:
 *   `{"decision":"block","reason":"..."}` blocks (PreToolUse, UserPromptSubmit),
 *   `{"additionalContext":"..."}` adds context (UserPromptSubmit, PreToolUse,
 *   SessionStart). Other stdout of UserPromptSubmit and SessionStart is
 *   added as context; of other events it is ignored.
 * - exit 2: block; stderr says why (the model reads it for PreToolUse,
 *   the user for UserPromptSubmit).
 * - any other exit, a crash, a timeout: a reported failure; the run goes on
 *   as if the hook had not been there.
 */

/** Default limit of one hook. */
export const HOOK_TIMEOUT_MS = 60_000;
const MAX_OUTPUT = 64 * 1024;

export interface HookRun {
  /** `ok` (exit 0), `block` (exit 2 or a block decision), `failed` (anything else). */
  outcome: "ok" | "block" | "failed";
  /** Why it blocked (the reason or stderr). */
  reason?: string;
  /** Context to add (additionalContext, or plain stdout where the event takes it). */
  context?: string;
  /** What went wrong, for `failed`. */
  error?: string;
}

export interface HookRunOptions {
  command: string;
  input: Record<string, unknown>;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  /** Whether plain stdout counts as context (UserPromptSubmit, SessionStart). */
  stdoutIsContext: boolean;
  signal?: AbortSignal | undefined;
}

/** Runs the hook; never throws. */
export function runHook(options: HookRunOptions): Promise<HookRun> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let settled = false;
    let timedOut = false;
    // Loaded here, not imported: a session without hooks never starts a process for them.
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn("/bin/sh", ["-c", options.command], {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const finish = (run: HookRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(run);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += d;
    });
    child.on("error", (error) => finish({ outcome: "failed", error: `could not run: ${error.message}` }));
    child.on("close", (code, signal) => {
      if (timedOut) {
        finish({ outcome: "failed", error: `timed out after ${options.timeoutMs} ms and was killed` });
        return;
      }
      if (options.signal?.aborted) {
        finish({ outcome: "failed", error: "cancelled with the run" });
        return;
      }
      if (code === 2) {
        finish({
          outcome: "block",
          reason: stderr.trim() || "blocked by a hook (it gave no reason on stderr)",
        });
        return;
      }
      if (code !== 0) {
        const why = code === null ? `was killed by ${signal}` : `exited with ${code}`;
        finish({ outcome: "failed", error: `${why}${stderr.trim() ? `: ${lastLines(stderr)}` : ""}` });
        return;
      }
      finish(readStdout(stdout, options.stdoutIsContext));
    });
    child.stdin.on("error", () => {
      // A hook that does not read its input closes stdin early; that is fine.
    });
    child.stdin.end(`${JSON.stringify(options.input)}\n`);
  });
}

function readStdout(stdout: string, stdoutIsContext: boolean): HookRun {
  const text = stdout.trim();
  if (text.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { outcome: "failed", error: `printed JSON that does not parse: ${lastLines(text)}` };
    }
    const out = parsed as { decision?: unknown; reason?: unknown; additionalContext?: unknown };
    if (out.decision === "block")
      return {
        outcome: "block",
        reason: typeof out.reason === "string" && out.reason.trim() ? out.reason : "blocked by a hook",
      };
    if (out.decision !== undefined && out.decision !== "allow" && out.decision !== "approve")
      return {
        outcome: "failed",
        error: `unknown decision ${JSON.stringify(out.decision)} (expected "block")`,
      };
    const context = typeof out.additionalContext === "string" ? out.additionalContext : undefined;
    return context ? { outcome: "ok", context } : { outcome: "ok" };
  }
  return stdoutIsContext && text !== "" ? { outcome: "ok", context: text } : { outcome: "ok" };
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-3).join(" | ").slice(0, 400);
}
