/**
 * bash in bubblewrap, for real. These tests need `bwrap` (CI installs it:
 * see .ci/run); on Linux they fail rather than skip without it.
 */
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { ToolExecutionContext, ToolReturn } from "@yoi/llm-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScopedFs } from "../src/fs/scoped-fs.ts";
import {
  bwrapArgs,
  detectSandbox,
  isSandbox,
  type Sandbox,
  type SandboxPolicy,
  seatbeltProfile,
} from "../src/sandbox/index.ts";
import { bashTool, defaultBashEnv } from "../src/tools/bash.ts";
import { tempDir } from "./helpers.ts";

const SECRET = `sk-ant-escape-marker-${process.pid}-${Date.now()}`;

function ctx(signal: AbortSignal = new AbortController().signal): ToolExecutionContext {
  return { callId: "c1", batchId: "b1", callIndex: 0, batchSize: 1, turnIndex: 0, signal };
}

function outputText(out: ToolReturn): string {
  if (typeof out === "string") return out;
  if (out.kind === "inline") return out.text;
  return JSON.stringify(out);
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

describe("sandbox arguments", () => {
  const policy: SandboxPolicy = { writeRoots: ["/w/project"], hidden: [], network: false };

  it("bwrap: read-only root, the scope bound writable after /tmp, new PID namespace, no caps, no network", () => {
    const args = bwrapArgs("/w/project", policy);
    const at = (flag: string, ...values: string[]) =>
      args.findIndex((a, i) => a === flag && values.every((v, k) => args[i + 1 + k] === v));
    expect(at("--ro-bind", "/", "/")).toBeGreaterThanOrEqual(0);
    expect(at("--bind", "/w/project", "/w/project")).toBeGreaterThan(at("--tmpfs", "/tmp"));
    for (const flag of ["--unshare-pid", "--unshare-net", "--die-with-parent"]) expect(args).toContain(flag);
    expect(at("--cap-drop", "ALL")).toBeGreaterThanOrEqual(0);
    expect(bwrapArgs("/w/project", { ...policy, network: true })).not.toContain("--unshare-net");
  });

  it("bwrap: a hidden place inside a root is mounted over it (after the root); one holding a root, before", async () => {
    const base = await tempDir("yoi-sbx-");
    const root = path.join(base, "home");
    const store = path.join(root, ".yoi", "sessions");
    const keys = path.join(root, ".yoi", "credentials.json");
    const data = path.join(base, "data");
    await mkdir(path.join(store, "inner"), { recursive: true });
    await mkdir(path.join(data, "project"), { recursive: true });
    await writeFile(keys, "{}");
    const args = bwrapArgs(root, {
      writeRoots: [root, path.join(data, "project")],
      hidden: [store, keys, data, path.join(store, "inner"), path.join(root, "missing")],
      network: false,
    });
    const at = (flag: string, ...values: string[]) =>
      args.findIndex((a, i) => a === flag && values.every((v, k) => args[i + 1 + k] === v));
    expect(at("--tmpfs", store, "--remount-ro", store)).toBeGreaterThan(at("--bind", root, root));
    expect(at("--ro-bind", "/dev/null", keys)).toBeGreaterThan(at("--bind", root, root));
    // The data directory holds a write root: hidden first, and the root bound again on top of it.
    expect(at("--tmpfs", data)).toBeLessThan(
      at("--bind", path.join(data, "project"), path.join(data, "project")),
    );
    // Nothing for what does not exist or lies in a place hidden already.
    expect(args).not.toContain(path.join(store, "inner"));
    expect(args).not.toContain(path.join(root, "missing"));
  });

  // macOS cannot be tested here: the profile's text is what we can check.
  it("sandbox-exec: writes denied except the scope and temp dirs; network denied unless allowed", () => {
    const profile = seatbeltProfile(policy);
    expect(profile).toContain("(deny file-write*)");
    expect(profile).toContain('(subpath "/w/project")');
    expect(profile).toContain("(deny network*)");
    expect(seatbeltProfile({ ...policy, network: true })).not.toContain("(deny network*)");
    expect(seatbeltProfile({ ...policy, hidden: ["/w/project/.yoi/sessions"] })).toContain(
      '(deny file-read* file-write* (subpath "/w/project/.yoi/sessions"))',
    );
  });
});

describe.runIf(process.platform === "linux")("bash in bubblewrap", () => {
  let sandbox: Sandbox;
  let decoy: ReturnType<typeof spawn>;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const found = await detectSandbox();
    if (!isSandbox(found))
      throw new Error(`these tests need bubblewrap (apt-get install bubblewrap): ${found.reason}`);
    sandbox = found;
    // A process outside the sandbox whose environment holds a key, as yoi's own would.
    decoy = spawn("sleep", ["300"], { env: { ...process.env, ANTHROPIC_API_KEY: SECRET }, stdio: "ignore" });
    server = createServer((socket) => socket.end("hello from outside\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    decoy?.kill("SIGKILL");
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  async function setup(options: { network?: boolean } = {}) {
    const base = await tempDir("yoi-sbx-");
    const root = path.join(base, "project");
    const outside = path.join(base, "outside");
    const dataDir = path.join(base, "data");
    await mkdir(root);
    await mkdir(outside);
    await mkdir(dataDir);
    await writeFile(path.join(outside, "victim.txt"), "original\n");
    await writeFile(path.join(dataDir, "session.jsonl"), `{"key":"${SECRET}"}\n`);
    await symlink(outside, path.join(root, "link-dir"));
    await symlink(path.join(outside, "victim.txt"), path.join(root, "link-file"));
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const policy: SandboxPolicy = {
      writeRoots: [root],
      hidden: [dataDir],
      network: options.network ?? false,
    };
    const tool = bashTool({
      fs,
      env: defaultBashEnv({ ...process.env, ANTHROPIC_API_KEY: SECRET }),
      sandbox: { sandbox, policy },
    });
    const run = async (command: string, signal?: AbortSignal) =>
      outputText(await tool.execute(tool.inputSchema.parse({ command, timeout_ms: 60_000 }), ctx(signal)));
    return { base, root, outside, dataDir, run };
  }

  it("runs commands in the scope, which it can write, with a private writable /tmp", async () => {
    const { root, run } = await setup();
    expect(await run("pwd; echo hi > made.txt; cat made.txt; echo t > /tmp/t && cat /tmp/t")).toBe(
      `${root}\nhi\nt\n[exit code: 0]`,
    );
    expect(await readFile(path.join(root, "made.txt"), "utf8")).toBe("hi\n");
    expect(await run("head -c 0 /etc/hostname && echo readable")).toContain("readable");
  });

  it("escape catalogue: no command gets out (writes, other processes, environ, network, symlinks, cd ..)", async () => {
    const { base, root, outside, dataDir, run } = await setup();
    const hostTmp = path.join(tmpdir(), `yoi-escape-${process.pid}-${Date.now()}`);
    const shm = `/dev/shm/yoi-escape-${process.pid}`;
    const decoyPid = decoy.pid!;
    // Each attempt: the command the model might run, and how we see from outside whether it got out.
    const attempts: { command: string; escaped: (output: string) => Promise<boolean> }[] = [
      { command: "echo x > ../outside.txt", escaped: () => exists(path.join(base, "outside.txt")) },
      { command: "cd .. && echo x > escaped.txt", escaped: () => exists(path.join(base, "escaped.txt")) },
      { command: "cd /; cd ..; echo x > escaped-root.txt", escaped: () => exists("/escaped-root.txt") },
      { command: `echo x > ${outside}/new.txt`, escaped: () => exists(path.join(outside, "new.txt")) },
      {
        command: "echo x > link-dir/through-link.txt",
        escaped: () => exists(path.join(outside, "through-link.txt")),
      },
      {
        command: "echo pwned > link-file",
        escaped: async () => (await readFile(path.join(outside, "victim.txt"), "utf8")) !== "original\n",
      },
      {
        command: "ln -s /etc etc-link && touch etc-link/yoi-escape",
        escaped: () => exists("/etc/yoi-escape"),
      },
      { command: `echo x > ${hostTmp}`, escaped: () => exists(hostTmp) },
      { command: `echo x > ${shm}`, escaped: () => exists(shm) },
      {
        command: "echo x > ~/.yoi-escape-test",
        escaped: () => exists(path.join(process.env.HOME ?? "/root", ".yoi-escape-test")),
      },
      { command: "touch /etc/yoi-escape-2", escaped: () => exists("/etc/yoi-escape-2") },
      { command: "mkdir -p /usr/local/yoi-escape", escaped: () => exists("/usr/local/yoi-escape") },
      { command: "cat /proc/$PPID/environ | tr '\\0' '\\n'", escaped: async (out) => out.includes(SECRET) },
      { command: "cat /proc/1/environ | tr '\\0' '\\n'", escaped: async (out) => out.includes(SECRET) },
      {
        command: "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'",
        escaped: async (out) => out.includes(SECRET),
      },
      {
        command: `cat /proc/${decoyPid}/environ; cat /proc/${process.pid}/environ`,
        escaped: async (out) => out.includes(SECRET),
      },
      { command: "env; set", escaped: async (out) => out.includes(SECRET) },
      {
        command: `cat ${dataDir}/session.jsonl; grep -r sk-ant- ${dataDir}`,
        escaped: async (out) => out.includes(SECRET),
      },
      {
        command: "ls /proc | grep -E '^[0-9]+$' | wc -l",
        // bwrap's init, bash, ls, grep, wc: a handful, never the host's hundreds.
        escaped: async (out) => Number.parseInt(out, 10) > 8,
      },
      {
        command: `kill -0 ${decoyPid} && echo ALIVE-VISIBLE`,
        escaped: async (out) => out.includes("ALIVE-VISIBLE"),
      },
      {
        command: `kill -9 ${decoyPid}; sleep 0.1`,
        escaped: async () => decoy.exitCode !== null || decoy.signalCode !== null,
      },
      {
        command: `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`,
        escaped: async (out) => out.includes("hello from outside"),
      },
      {
        command: `timeout 5 bash -c 'exec 3<>/dev/tcp/1.1.1.1/53 && echo CONNECTED'`,
        escaped: async (out) => out.includes("CONNECTED"),
      },
      {
        command: "mount -o remount,rw / 2>&1; touch /yoi-escape-remount",
        escaped: () => exists("/yoi-escape-remount"),
      },
      {
        command: "mount -t tmpfs none /mnt 2>&1; touch /mnt/x && echo MOUNTED",
        escaped: async (out) => out.includes("MOUNTED"),
      },
    ];
    let escaped = 0;
    const escapes: string[] = [];
    for (const attempt of attempts) {
      const out = await run(attempt.command);
      if (await attempt.escaped(out)) {
        escaped++;
        escapes.push(`${attempt.command}\n${out}`);
      }
    }
    // The figure for the issue: tried N, escaped M.
    console.log(`sandbox escape catalogue: ${attempts.length} commands tried, ${escaped} escaped`);
    expect(escapes).toEqual([]);
    expect(await readdir(root)).toContain("link-file");
  });

  it("a hidden directory that does not exist yet (a fresh ~/.yoi) does not break the sandbox", async () => {
    const root = await tempDir("yoi-sbx-");
    const fs = await ScopedFs.create({ writeRoots: [root] });
    const missing = path.join(process.env.HOME ?? "/root", `.yoi-missing-${process.pid}-${Date.now()}`);
    const tool = bashTool({
      fs,
      sandbox: { sandbox, policy: { writeRoots: [root], hidden: [missing], network: false } },
    });
    const out = outputText(await tool.execute(tool.inputSchema.parse({ command: "echo ok" }), ctx()));
    expect(out).toBe("ok\n[exit code: 0]");
  });

  it("lets the network through only when the config allows it", async () => {
    const { run } = await setup({ network: true });
    expect(await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`)).toContain("hello from outside");
  });

  it("a cancelled sandboxed command leaves nothing running", async () => {
    const { run } = await setup();
    const marker = `${(Date.now() % 1000) + 100}.123`;
    const ac = new AbortController();
    const pending = run(`sleep ${marker} & sleep ${marker}`, ac.signal);
    await expect.poll(async () => (await sleepers(marker)).length, { timeout: 20_000 }).toBeGreaterThan(0);
    ac.abort();
    expect(await pending).toContain("[killed: cancelled]");
    await expect.poll(async () => (await sleepers(marker)).length, { timeout: 20_000 }).toBe(0);
  });
});

/** Host processes running `sleep <marker>`. */
async function sleepers(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline === `sleep\0${marker}\0`) found.push(pid);
  }
  return found;
}
