/**
 * The Linux sandbox probe runs bwrap once and remembers a success for the
 * same binary, user and boot, so later processes skip the spawn; a failure
 * is never remembered. Uses the real bwrap behind a wrapper that counts its
 * runs (CI installs bubblewrap: see .ci/run).
 */
import { chmod, mkdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "./helpers.ts";

async function realBwrap(): Promise<string> {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const file = path.join(dir, "bwrap");
    if (await stat(file).catch(() => undefined)) return file;
  }
  throw new Error("these tests need bubblewrap on PATH (apt-get install bubblewrap)");
}

/** A fresh copy of the probe module: its once-per-process answer starts empty. */
async function detect() {
  vi.resetModules();
  const { detectSandbox, isSandbox } = await import("../src/sandbox/detect.ts");
  const found = await detectSandbox();
  return { found, sandboxed: isSandbox(found) };
}

describe.runIf(process.platform === "linux")("sandbox probe cache", () => {
  const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
  let bin: string;
  let log: string;
  let cacheFile: string;

  beforeEach(async () => {
    const dir = await tempDir("yoi-probe-");
    bin = path.join(dir, "bin");
    log = path.join(dir, "runs.log");
    cacheFile = path.join(dir, "cache", "yoi", "sandbox-probe.json");
    await mkdir(bin);
    await writeFile(log, "");
    process.env.XDG_CACHE_HOME = path.join(dir, "cache");
    process.env.PATH = `${bin}${path.delimiter}${saved.PATH}`;
  });

  afterEach(() => {
    process.env.PATH = saved.PATH;
    if (saved.XDG_CACHE_HOME === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved.XDG_CACHE_HOME;
  });

  const runs = async () => (await readFile(log, "utf8")).split("\n").filter(Boolean).length;

  it("probes once, then later processes trust the remembered success until the binary changes", async () => {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${await realBwrap()}' "$@"\n`);
    await chmod(wrapper, 0o755);

    expect((await detect()).sandboxed).toBe(true);
    expect(await runs()).toBe(1);
    expect(JSON.parse(await readFile(cacheFile, "utf8")).ok).toContain(wrapper);

    expect((await detect()).sandboxed).toBe(true);
    expect(await runs()).toBe(1); // remembered: no spawn

    // A different binary (here: a new mtime) is probed again.
    const later = new Date(Date.now() + 60_000);
    await utimes(wrapper, later, later);
    expect((await detect()).sandboxed).toBe(true);
    expect(await runs()).toBe(2);
  });

  it("never remembers a failed probe", async () => {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(
      wrapper,
      `#!/bin/sh\necho run >> '${log}'\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n`,
    );
    await chmod(wrapper, 0o755);
    const first = await detect();
    expect(first.sandboxed).toBe(false);
    expect((first.found as { reason: string }).reason).toContain("No permissions to create new namespace");
    expect(await stat(cacheFile).catch(() => undefined)).toBeUndefined();
    expect((await detect()).sandboxed).toBe(false);
    expect(await runs()).toBe(2);
  });

  it("says how a failed probe ended when bwrap wrote nothing on stderr", async () => {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\necho 'not this' \nexit 3\n`);
    await chmod(wrapper, 0o755);
    const { found, sandboxed } = await detect();
    expect(sandboxed).toBe(false);
    expect((found as { reason: string }).reason).toBe(
      `bubblewrap (${wrapper}) cannot create a sandbox here: it exited with code 3`,
    );
  });

  it("finds bwrap past PATH entries that are missing, not directories, or hold no runnable bwrap", async () => {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${await realBwrap()}' "$@"\n`);
    await chmod(wrapper, 0o755);
    const dir = path.dirname(bin);
    const notRunnable = path.join(dir, "plain");
    await mkdir(path.join(notRunnable), { recursive: true });
    await writeFile(path.join(notRunnable, "bwrap"), "not a program");
    await mkdir(path.join(dir, "dirs", "bwrap"), { recursive: true }); // a directory named bwrap
    await writeFile(path.join(dir, "a-file"), "");
    process.env.PATH = [
      path.join(dir, "missing"),
      path.join(dir, "a-file"),
      path.join(dir, "dirs"),
      notRunnable,
      bin,
    ].join(path.delimiter);
    const { found, sandboxed } = await detect();
    expect(sandboxed).toBe(true);
    expect(JSON.parse(await readFile(cacheFile, "utf8")).ok).toContain(wrapper);
    expect(found).toMatchObject({ kind: "bwrap" });
  });

  it("takes the first runnable bwrap in PATH order, and never one a relative entry names", async () => {
    const real = await realBwrap();
    const wrapper = path.join(bin, "bwrap");
    await writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${real}' "$@"\n`);
    await chmod(wrapper, 0o755);
    // A relative entry is a directory of whatever the current one is: the project, which the model can write.
    const planted = path.join(path.dirname(bin), "planted");
    await mkdir(planted);
    await writeFile(
      path.join(planted, "bwrap"),
      `#!/bin/sh\necho planted >> '${log}'\nshift $#\nexec /bin/sh -c true\n`,
    );
    await chmod(path.join(planted, "bwrap"), 0o755);
    process.env.PATH = [path.relative(process.cwd(), planted), bin, path.dirname(real)].join(path.delimiter);
    expect((await detect()).sandboxed).toBe(true);
    expect(await readFile(log, "utf8")).toBe("run\n"); // the wrapper (first absolute entry), not the planted one
    expect(JSON.parse(await readFile(cacheFile, "utf8")).ok).toContain(wrapper);
  });

  it("an unreadable cache file means probing, not a failure", async () => {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${await realBwrap()}' "$@"\n`);
    await chmod(wrapper, 0o755);
    await mkdir(path.dirname(cacheFile), { recursive: true });
    await writeFile(cacheFile, "{not json");
    expect((await detect()).sandboxed).toBe(true);
    expect(await runs()).toBe(1);
    expect(JSON.parse(await readFile(cacheFile, "utf8")).ok).toContain(wrapper);
  });
});
