/**
 * The Linux sandbox probe runs bwrap once and remembers a success for the
 * same binary, user and boot, so later processes skip the spawn; a failure
 * is never remembered. Uses the real bwrap behind a wrapper that counts its
 * runs (CI installs bubblewrap: see .ci/run).
 */
import { chmod, mkdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { PodOptions } from "../src/pod-options.ts";
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

  /** A bwrap on PATH that cannot make a sandbox (as in a container without user namespaces). */
  async function brokenBwrap(said = ""): Promise<void> {
    const wrapper = path.join(bin, "bwrap");
    await writeFile(
      wrapper,
      `#!/bin/sh\necho run >> '${log}'\n${said ? `echo '${said}' >&2\n` : ""}exit 1\n`,
    );
    await chmod(wrapper, 0o755);
  }

  /** A pod of a fresh probe module (nothing probed in this process yet), in a project of its own. */
  async function openPod(options: PodOptions = {}) {
    vi.resetModules();
    const { Pod } = await import("../src/pod.ts");
    const root = await tempDir("yoi-probe-pod-");
    return Pod.create({
      cwd: root,
      dataDir: path.join(root, ".data"),
      config: ConfigSchema.parse({}),
      client: createClient({ provider: "anthropic", model: "claude-haiku-4-5", apiKey: "test-key" }),
      fsync: "never",
      ...options,
    });
  }

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
    await brokenBwrap("bwrap: No permissions to create new namespace");
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

  it("a pod opens on a bwrap not yet probed, and the probe runs once the answer arrives, before any command", async () => {
    await brokenBwrap("bwrap: No permissions to create new namespace");
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", toolCalls: [{ id: "toolu_1", name: "bash", arguments: { command: "touch ran" } }] },
        { type: "reply", text: "It was refused." },
      ],
    });
    const asked: string[] = [];
    const pod = await openPod({
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "test-key",
        baseURL: server.baseURL,
        retry: { maxAttempts: 1 },
      }),
      ask: async (request) => {
        asked.push(request.tool);
        return "deny";
      },
    });
    try {
      // Opened on what PATH says: no process started yet, bash described as sandboxed.
      expect(await runs()).toBe(0);
      expect(pod.sandbox.status).toBe("active");
      const alerts: { code?: string; message: string }[] = [];
      pod.subscribe((event) => {
        if (event.type === "alert" && event.alert.source === "sandbox") alerts.push(event.alert);
      });
      await pod.run("make a file");
      // The probe ran once, before the call: bash had no sandbox, so the command was asked about (and refused).
      expect(await runs()).toBe(1);
      expect(pod.sandbox).toMatchObject({ status: "unavailable" });
      expect(pod.permissions.sandbox).toBe("unavailable");
      expect(asked).toEqual(["bash"]);
      expect(await stat(path.join(pod.fs.cwd, "ran")).catch(() => undefined)).toBeUndefined();
      expect(alerts).toEqual([
        expect.objectContaining({
          code: "sandbox_unavailable",
          message: expect.stringContaining("No permissions to create new namespace"),
        }),
      ]);
      // The model was told with the next request: bash no longer says it is sandboxed.
      const bashOf = (body: unknown) =>
        (body as { tools: { name: string; description: string }[] }).tools.find((t) => t.name === "bash")!;
      expect(bashOf(server.requests[0]).description).toContain("Commands run in a sandbox");
      expect(bashOf(server.requests[1]).description).not.toContain("sandbox");
      // A failed probe is not remembered.
      expect(await stat(cacheFile).catch(() => undefined)).toBeUndefined();
    } finally {
      await pod.close();
      await server.close();
    }
  });

  it("whoever settles the sandbox first (here the user's own command), the permissions follow the answer", async () => {
    await brokenBwrap();
    const pod = await openPod({ config: ConfigSchema.parse({ permissions: { mode: "acceptEdits" } }) });
    try {
      const alerts: string[] = [];
      pod.subscribe((event) => {
        if (event.type === "alert") alerts.push(`${event.alert.source}/${event.alert.code}`);
      });
      // Still expected: bypassPermissions may be chosen, as on a machine whose probe succeeded.
      pod.permissions.setMode("bypassPermissions");
      const bash = pod.worker.tools.find((t) => t.name === "bash")!;
      const controller = new AbortController();
      const out = await bash.execute(
        { command: "echo mine" },
        {
          callId: "user_1",
          batchId: "user_1",
          callIndex: 0,
          batchSize: 1,
          turnIndex: 0,
          signal: controller.signal,
        },
      );
      expect(JSON.stringify(out)).toContain("mine");
      expect(await runs()).toBe(1);
      // The policy heard the answer before the command ran: no sandbox, so no bypass either.
      expect(pod.permissions.sandbox).toBe("unavailable");
      expect(pod.permissions.mode).toBe("default");
      expect(alerts).toEqual(["sandbox/sandbox_unavailable", "permissions/bypass_without_sandbox"]);
      expect(bash.description).not.toContain("sandbox");
    } finally {
      await pod.close();
    }
  });

  it("a pod that starts in bypassPermissions settles the sandbox first, and is refused without one", async () => {
    await brokenBwrap();
    await expect(openPod({ permissionMode: "bypassPermissions" })).rejects.toMatchObject({
      code: "bypass_without_sandbox",
    });
    expect(await runs()).toBe(1);
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
