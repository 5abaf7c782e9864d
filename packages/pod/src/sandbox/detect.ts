/**
 * Which OS sandbox this machine offers, probed once per process: on Linux a
 * `bwrap` on PATH that can actually create its namespaces here (a container
 * without user namespaces cannot), on macOS /usr/bin/sandbox-exec.
 *
 * The Linux probe runs bwrap once, which costs the main thread a fork and
 * the caller bwrap's start-up (some 7 ms of a cold start on the way to the
 * first request, when it ran before it). A pod therefore opens on what can
 * be read without running anything (`expectSandbox`) and has the probe run
 * when a tool is about to run or the first answer is arriving
 * (pod-sandbox.ts). A probe that succeeded is remembered in
 * `$XDG_CACHE_HOME/yoi/sandbox-probe.json` (default `~/.cache/yoi`) for the
 * same bwrap binary (path, size, mtime, inode), user and boot: whether user
 * namespaces work changes with a kernel setting or a new binary, which a
 * reboot or the key catches. A failed probe is never remembered.
 */
import { constants, type Stats } from "node:fs";
import { access, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { yoiCacheDir } from "@yoi/manifest";
import { bwrapBaseArgs, bwrapSandbox } from "./bwrap.ts";
import type { Sandbox, SandboxUnavailable } from "./sandbox.ts";
import { seatbeltSandbox } from "./seatbelt.ts";

const PROBE_TIMEOUT_MS = 10_000;

/** What the machine answers without running anything, or the bwrap a probe has to confirm. */
interface Lookup {
  settled?: Sandbox | SandboxUnavailable;
  unconfirmed?: { bwrap: Found; boot: Promise<string | undefined> };
}

let lookup: Promise<Lookup> | undefined;
let answer: Promise<Sandbox | SandboxUnavailable> | undefined;

/** The sandbox of this machine, or why there is none. Probed once; later calls share the answer. */
export function detectSandbox(): Promise<Sandbox | SandboxUnavailable> {
  answer ??= look().then(
    (found) => found.settled ?? confirm(found.unconfirmed!.bwrap, found.unconfirmed!.boot),
  );
  return answer;
}

/**
 * What this machine's sandbox is expected to be, from what can be read
 * without starting a process: `settled` when that is the answer (no sandbox
 * on this platform or on PATH, a success remembered, or the probe already
 * ran), else the bwrap sandbox a probe (`detectSandbox`) still has to
 * confirm. Nothing may run in an unsettled sandbox: only what the model is
 * told may be based on it.
 */
export async function expectSandbox(): Promise<{ sandbox: Sandbox | SandboxUnavailable; settled: boolean }> {
  const found = await look();
  if (found.settled !== undefined) return { sandbox: found.settled, settled: true };
  if (answer !== undefined) return { sandbox: await answer, settled: true };
  return { sandbox: bwrapSandbox(found.unconfirmed!.bwrap.file), settled: false };
}

/** True when `value` is an available sandbox (not the reason there is none). */
export function isSandbox(value: Sandbox | SandboxUnavailable): value is Sandbox {
  return "wrap" in value;
}

function look(): Promise<Lookup> {
  lookup ??= lookUp();
  return lookup;
}

/**
 * Every read the answer needs (PATH, the remembered probe, the boot id) is
 * made at once: one after another, each waited for a turn of the event
 * loop, which start-up keeps busy. The boot id is waited for only where it
 * is needed: to compare with a remembered answer, and to remember a new one
 * once bwrap has run (reading it takes several turns of the loop).
 */
async function lookUp(): Promise<Lookup> {
  if (process.platform === "darwin") {
    const exec = "/usr/bin/sandbox-exec";
    return {
      settled: (await executable(exec))
        ? seatbeltSandbox(exec)
        : { reason: "sandbox-exec was not found at /usr/bin/sandbox-exec" },
    };
  }
  if (process.platform !== "linux")
    return { settled: { reason: `no sandbox is supported on ${process.platform}` } };
  const boot = bootId();
  const [found, remembered] = await Promise.all([onPath("bwrap"), cachedProbe()]);
  if (found === undefined)
    return {
      settled: {
        reason:
          "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)",
      },
    };
  if (remembered !== undefined && remembered === probeKey(found, await boot))
    return { settled: bwrapSandbox(found.file) };
  return { unconfirmed: { bwrap: found, boot } };
}

/** Runs bwrap once with the namespaces and mounts every sandboxed command gets: if these work, the commands will. */
async function confirm(
  found: Found,
  boot: Promise<string | undefined>,
): Promise<Sandbox | SandboxUnavailable> {
  const bwrap = found.file;
  const error = await run(bwrap, [...bwrapBaseArgs(false), "--", "/bin/sh", "-c", "true"]);
  if (error !== undefined) return { reason: `bubblewrap (${bwrap}) cannot create a sandbox here: ${error}` };
  const key = probeKey(found, await boot);
  if (key !== undefined) await rememberProbe(key);
  return bwrapSandbox(bwrap);
}

function probeCacheFile(): string | undefined {
  const dir = yoiCacheDir();
  return dir && path.join(dir, "sandbox-probe.json");
}

/** A runnable file and what it was when found. */
interface Found {
  file: string;
  info: Stats;
}

/** What a successful probe holds for: this bwrap binary, this user, this boot. Undefined when unknowable. */
function probeKey(bwrap: Found, boot: string | undefined): string | undefined {
  if (boot === undefined) return undefined;
  const uid = process.getuid?.() ?? -1;
  return [bwrap.file, bwrap.info.size, bwrap.info.mtimeMs, bwrap.info.ino, uid, boot].join(":");
}

async function bootId(): Promise<string | undefined> {
  try {
    return (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
  } catch {
    return undefined;
  }
}

async function cachedProbe(): Promise<string | undefined> {
  try {
    const file = probeCacheFile();
    if (!file) return undefined;
    const saved = JSON.parse(await readFile(file, "utf8")) as { ok?: unknown };
    return typeof saved.ok === "string" ? saved.ok : undefined;
  } catch {
    return undefined; // no cache yet, or an unreadable one: probe
  }
}

/** Best effort: a cache that cannot be written only means probing next time. */
async function rememberProbe(key: string): Promise<void> {
  const file = probeCacheFile();
  if (!file) return;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify({ ok: key })}\n`);
    await rename(temp, file);
  } catch {
    // read-only home, full disk: nothing lost
  }
}

/** A file (not a directory of that name) this process may run, as it is now; undefined when not. */
async function executable(file: string): Promise<Found | undefined> {
  try {
    const [info] = await Promise.all([stat(file), access(file, constants.X_OK)]);
    return info.isFile() ? { file, info } : undefined;
  } catch {
    return undefined; // missing, not ours to run, or a PATH entry that is not a directory
  }
}

/**
 * The first `name` in PATH order, every directory looked at at once. A
 * relative entry (`.`, `bin`) is skipped: it names a directory of the
 * project, where a command the model ran could have put a `bwrap` that
 * sandboxes nothing.
 */
async function onPath(name: string): Promise<Found | undefined> {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  const found = await Promise.all(dirs.map((dir) => executable(path.join(dir, name))));
  return found.find((f) => f !== undefined);
}

/**
 * Runs the probe: undefined when it exits 0, else why not (the first line
 * bwrap wrote on stderr). Its stdout is not read, so no pipe is made for it.
 */
function run(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    // Loaded here, not imported: a cached probe (every run but the first) starts no process.
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], timeout: PROBE_TIMEOUT_MS });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    child.on("error", (error) => resolve(error.message));
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(undefined);
      const said = stderr.trim().split("\n")[0] ?? "";
      resolve(said || (signal !== null ? `it was stopped by ${signal}` : `it exited with code ${code}`));
    });
  });
}
