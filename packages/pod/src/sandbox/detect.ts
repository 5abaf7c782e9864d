/**
 * Which OS sandbox this machine offers, probed once per process: on Linux a
 * `bwrap` on PATH that can actually create its namespaces here (a container
 * without user namespaces cannot), on macOS /usr/bin/sandbox-exec.
 */
import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import * as path from "node:path";
import { bwrapSandbox } from "./bwrap.ts";
import type { Sandbox, SandboxUnavailable } from "./sandbox.ts";
import { seatbeltSandbox } from "./seatbelt.ts";

const PROBE_TIMEOUT_MS = 10_000;

let cached: Promise<Sandbox | SandboxUnavailable> | undefined;

/** The sandbox of this machine, or why there is none. Probed once; later calls share the answer. */
export function detectSandbox(): Promise<Sandbox | SandboxUnavailable> {
  cached ??= probe();
  return cached;
}

/** True when `value` is an available sandbox (not the reason there is none). */
export function isSandbox(value: Sandbox | SandboxUnavailable): value is Sandbox {
  return "wrap" in value;
}

async function probe(): Promise<Sandbox | SandboxUnavailable> {
  if (process.platform === "darwin") {
    const exec = "/usr/bin/sandbox-exec";
    return (await executable(exec))
      ? seatbeltSandbox(exec)
      : { reason: "sandbox-exec was not found at /usr/bin/sandbox-exec" };
  }
  if (process.platform !== "linux") return { reason: `no sandbox is supported on ${process.platform}` };
  const bwrap = await onPath("bwrap");
  if (bwrap === undefined)
    return {
      reason:
        "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)",
    };
  const error = await run(bwrap, [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--unshare-pid",
    "--unshare-net",
    "--cap-drop",
    "ALL",
    "--",
    "/bin/sh",
    "-c",
    "true",
  ]);
  if (error !== undefined) return { reason: `bubblewrap (${bwrap}) cannot create a sandbox here: ${error}` };
  return bwrapSandbox(bwrap);
}

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const file = path.join(dir, name);
    if (await executable(file)) return file;
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (error === null) resolve(undefined);
      else resolve((stderr.trim().split("\n")[0] ?? "") || error.message);
    });
  });
}
