/**
 * Starting one bash command line and stopping it: the same for a command
 * the bash tool waits for and for a background one. The command leads its
 * own process group (`detached`), so stopping it stops everything it
 * started; in the sandbox, the group's leader is bwrap, whose PID namespace
 * ends with it.
 */
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import type { Sandbox, SandboxedCommand, SandboxPolicy } from "../sandbox/sandbox.ts";

/** Grace between SIGTERM and SIGKILL of a process group. */
export const KILL_GRACE_MS = 2000;

export interface CommandSpawnOptions {
  fs: { readonly cwd: string };
  shell: string;
  env: NodeJS.ProcessEnv;
  sandbox?: { sandbox: Sandbox; policy: SandboxPolicy };
}

export interface SpawnedCommand {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** What was run (the shell, or the sandbox wrapping it); `release` once every process of it ended. */
  run: SandboxedCommand;
}

/** Starts `command` with the shell in the scope root, in the sandbox when there is one; stdin closed. */
export function spawnCommand(options: CommandSpawnOptions, command: string): SpawnedCommand {
  const run: SandboxedCommand =
    options.sandbox === undefined
      ? { file: options.shell, args: ["-c", command] }
      : options.sandbox.sandbox.wrap(options.shell, command, options.fs.cwd, options.sandbox.policy);
  // Loaded at the first command, not imported: loading it cost every session's start some 0.7 ms.
  const { spawn } = process.getBuiltinModule("node:child_process");
  const child = spawn(run.file, run.args, {
    cwd: options.fs.cwd,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { child, run };
}

/**
 * SIGTERM to the process group `pid` leads, SIGKILL after the grace.
 * Returns the SIGKILL's timer (unref'd), which the caller may clear once
 * the group is known to be gone.
 */
export function killProcessGroup(pid: number, graceMs = KILL_GRACE_MS): NodeJS.Timeout {
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    // Already gone.
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }, graceMs);
  timer.unref();
  return timer;
}
