/**
 * The one way the repository gets the `yoi` that ships: `dist/bin.js`, the
 * file `npm install -g @yoi/cli` installs, rebuilt by bundle.ts when any of
 * its inputs is newer than it. The CLI's black-box tests (their vitest
 * global set-up), `pnpm yoi` and the start-up benchmarks all call
 * {@link freshBundle} and then run that file, so what they exercise is what
 * users get.
 *
 * Stale means: some source the bundle is made of (the CLI's and every
 * workspace package's `src/`, their package.json, the lockfile, bundle.ts
 * itself) was modified, added or removed after `dist/bin.js` was written
 * (bundle.ts writes it last). Only the bundle step runs, which needs
 * esbuild and the sources, not `tsc` of the other packages, so a fresh
 * clone after `pnpm install` can run it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

const CLI_DIR = import.meta.dirname;
const ROOT = path.join(CLI_DIR, "..", "..");
/** The shipped entry point. */
export const DIST_BIN = path.join(CLI_DIR, "dist", "bin.js");
const LOCK = path.join(CLI_DIR, "dist", ".bundle-lock");
/** A lock older than this was left by a build that died: it is taken over. */
const LOCK_STALE_MS = 5 * 60_000;

/**
 * The Node flags `bin`'s launcher line gives the process it starts when
 * `yoi` is run as a program with `args` (see bundle.ts); none for a bundle
 * without one. For a harness that must start `node` itself (to add
 * profiling flags) and still run yoi as users get it. The line itself is
 * run, by `sh` with a `node` on PATH that only prints what it was given, so
 * the answer is the launcher's own.
 */
export function launcherNodeArgs(bin: string, args: readonly string[]): string[] {
  if (!(readFileSync(bin, "latin1").split("\n", 2)[1] ?? "").startsWith('":" //;')) return [];
  const dir = mkdtempSync(path.join(tmpdir(), "yoi-launcher-"));
  try {
    writeFileSync(path.join(dir, "node"), `#!/bin/sh\nprintf '%s\\0' "$@"\n`, { mode: 0o755 });
    const run = spawnSync("sh", [bin, ...args], {
      env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ""}` },
      encoding: "utf8",
    });
    const given = run.stdout.split("\0");
    const at = given.indexOf(bin);
    if (run.status !== 0 || at < 0)
      throw new Error(`the launcher line of ${bin} did not start node on it: ${run.stderr}`);
    return given.slice(0, at);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Builds `dist/bin.js` (and its chunks) when it is missing or older than
 * its sources; returns its path. Concurrent callers (parallel test runs, a
 * `pnpm yoi` beside them) build once: the others wait for the lock and then
 * find the bundle fresh. `log` receives a line when a build starts.
 */
export function freshBundle(log: (line: string) => void = () => {}): string {
  if (!isStale()) return DIST_BIN;
  mkdirSync(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() - lockTime() > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (isStale()) {
      log("building apps/cli/dist/bin.js (its sources changed)");
      execFileSync(process.execPath, [path.join(CLI_DIR, "bundle.ts")], {
        cwd: CLI_DIR,
        stdio: ["ignore", "ignore", "inherit"],
      });
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  return DIST_BIN;
}

function lockTime(): number {
  try {
    return statSync(LOCK).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** True when dist/bin.js is missing or some input (file or directory) changed after it was written. */
export function isStale(): boolean {
  let built: number;
  try {
    built = statSync(DIST_BIN).mtimeMs;
  } catch {
    return true;
  }
  const newer = (file: string): boolean => {
    try {
      return statSync(file).mtimeMs > built;
    } catch {
      return false;
    }
  };
  if ([path.join(CLI_DIR, "bundle.ts"), path.join(ROOT, "pnpm-lock.yaml")].some(newer)) return true;
  for (const area of ["packages", "apps"]) {
    for (const name of readdirSync(path.join(ROOT, area))) {
      const pkg = path.join(ROOT, area, name);
      if (newer(path.join(pkg, "package.json")) || treeNewer(path.join(pkg, "src"), built)) return true;
    }
  }
  return false;
}

/** Whether `dir` or anything below it (a directory's mtime moves when an entry is added or removed) is newer than `time`. */
function treeNewer(dir: string, time: number): boolean {
  let entries: import("node:fs").Dirent[];
  try {
    if (statSync(dir).mtimeMs > time) return true;
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "__tests__" && treeNewer(full, time)) return true;
    } else if (!entry.name.endsWith(".test.ts") && statSync(full).mtimeMs > time) return true;
  }
  return false;
}
