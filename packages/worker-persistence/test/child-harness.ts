/** Spawns `crash-child.ts` as a real Node process and collects what it prints. */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Path of the child script. */
export const CHILD_SCRIPT = fileURLToPath(new URL("./crash-child.ts", import.meta.url));

export interface Child {
  proc: ChildProcess;
  /** Complete stdout lines so far. */
  lines: string[];
  stderr(): string;
  /** Resolves once at least `n` lines were printed (rejects if the child exits first). */
  waitForLines(n: number): Promise<void>;
  /** SIGKILLs the child and resolves when it is gone (reaped). */
  kill(): Promise<void>;
  /** Resolves with the exit code when the child exits on its own. */
  exited: Promise<number | null>;
}

export function spawnChild(args: string[], options: SpawnOptions = {}): Child {
  const proc = spawn(process.execPath, ["--conditions=@yoi/source", "--no-warnings", CHILD_SCRIPT, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    ...options,
  });
  const lines: string[] = [];
  let partial = "";
  let err = "";
  let waiters: Array<() => void> = [];
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  proc.stdout?.setEncoding("utf8");
  proc.stdout?.on("data", (chunk: string) => {
    partial += chunk;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    for (const w of waiters) w();
  });
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (chunk: string) => {
    err += chunk;
  });
  // stdout is closed at exit: everything the child printed has been read by then.
  const drained = new Promise<void>((resolve) => proc.stdout?.on("close", () => resolve()));
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitForLines(n) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (lines.length >= n) {
            waiters = waiters.filter((w) => w !== check);
            resolve();
          }
        };
        waiters.push(check);
        check();
        void exited.then((code) => {
          if (lines.length < n)
            reject(new Error(`child exited (${code}) after ${lines.length} lines: ${err}`));
        });
      });
    },
    async kill() {
      proc.kill("SIGKILL");
      await exited;
      await drained;
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
