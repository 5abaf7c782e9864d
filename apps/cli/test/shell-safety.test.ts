/**
 * Shell safety, black-box: `yoi -p` (and one interactive run) driven by a
 * scripted model on 127.0.0.1, with real bash in real bubblewrap.
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld, yoiArgv } from "./helpers.ts";
import { TmuxSession, waitForFile } from "./tmux.ts";

const servers: ScriptedServer[] = [];
const terminals: TmuxSession[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  for (const s of servers.splice(0)) await s.close();
});

const KEY = `sk-ant-api03-shell-safety-${process.pid}`;

async function scripted(script: ScriptStep[]) {
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  return server;
}

/** One turn of tool calls, then a closing reply. */
function toolTurn(calls: { name: string; arguments: Record<string, unknown> }[]): ScriptStep[] {
  return [
    { type: "reply", toolCalls: calls.map((c, i) => ({ id: `toolu_${i}`, ...c })) },
    { type: "reply", text: "Done." },
  ];
}

function bash(command: string) {
  return { name: "bash", arguments: { command } };
}

async function yoi(
  args: string[],
  world: { home: string; project: string },
  server: ScriptedServer,
  env: Record<string, string> = {},
) {
  return runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", ...args], {
    cwd: world.project,
    env: cleanEnv(world.home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL, ...env }),
  });
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

/** The tool results the model was sent in the second request, as one string. */
function toolResults(server: ScriptedServer): string {
  return JSON.stringify(server.requests[1] ?? {});
}

async function userConfig(home: string, text: string): Promise<void> {
  await mkdir(path.join(home, ".yoi"), { recursive: true });
  await writeFile(path.join(home, ".yoi", "config.jsonc"), text);
}

describe("yoi -p: rules, redirections, the sandbox", () => {
  it("a project's empty rule list does not drop the user's deny rule (rm victim.txt stays denied)", async () => {
    const world = await tempWorld({
      "victim.txt": "precious\n",
      ".yoi/config.jsonc": '{ "permissions": { "rules": [] } }',
    });
    await userConfig(
      world.home,
      '{ "permissions": { "default": { "bash": "allow" }, "rules": [{ "tool": "bash", "match": "rm *", "action": "deny" }] } }',
    );
    const server = await scripted(toolTurn([bash("rm victim.txt")]));
    const r = await yoi(["clean up"], world, server);
    expect(r.code).toBe(0);
    expect(await readFile(path.join(world.project, "victim.txt"), "utf8")).toBe("precious\n");
    expect(toolResults(server)).toContain("blocked by permission rule #1");
    expect(toolResults(server)).toContain(".yoi/config.jsonc");
  });

  it("redirections under an `ls *` allow rule cannot write outside the scope", async () => {
    const world = await tempWorld({
      ".yoi/config.jsonc":
        '{ "permissions": { "rules": [{ "tool": "bash", "match": "ls *", "action": "allow" }] } }',
    });
    const lines = [
      "ls > ../outside.txt",
      "ls -la > ~/.bashrc",
      "ls >> ../x1",
      "ls 2> ../x2",
      "ls >| ../x3",
      "ls &> ../x4",
    ];
    const server = await scripted(toolTurn(lines.map(bash)));
    const r = await yoi(["list"], world, server, { YOI_TRUST_PROJECT: "1" });
    expect(r.code).toBe(0);
    const base = path.dirname(world.project);
    for (const f of ["outside.txt", "x1", "x2", "x3", "x4"])
      expect(await exists(path.join(base, f)), f).toBe(false);
    expect(await exists(path.join(world.home, ".bashrc"))).toBe(false);
    expect(toolResults(server).match(/writes outside the project scope/g)).toHaveLength(lines.length);
    // A plain ls under the same rule runs.
    const ok = await scripted(toolTurn([bash("ls -a")]));
    await yoi(["list"], world, ok, { YOI_TRUST_PROJECT: "1" });
    expect(toolResults(ok)).toContain("[exit code: 0]");
  });

  it("bash cannot read the key from its parent's environ (or any other process's)", async () => {
    const world = await tempWorld();
    const server = await scripted(
      toolTurn([bash("cat /proc/$PPID/environ; cat /proc/1/environ; cat /proc/*/environ; env")]),
    );
    const r = await yoi(["--allow-tool", "bash(cat *)", "--allow-tool", "bash(env)", "look"], world, server);
    expect(r.code).toBe(0);
    expect(toolResults(server)).toContain("[exit code:");
    expect(toolResults(server)).not.toContain(KEY);
    const logs = await readdir(path.join(world.home, ".yoi", "sessions"), { recursive: true });
    for (const f of logs.filter((f) => f.endsWith(".jsonl")))
      expect(await readFile(path.join(world.home, ".yoi", "sessions", f), "utf8")).not.toContain(KEY);
  });

  it("--allow-tool and --deny-tool: a deny flag beats a trusted project's allow", async () => {
    const world = await tempWorld({
      ".yoi/config.jsonc": '{ "permissions": { "rules": [{ "tool": "bash", "action": "allow" }] } }',
    });
    const server = await scripted(toolTurn([bash("echo hi > made.txt"), bash("touch other.txt")]));
    const r = await yoi(
      ["--allow-tool", "write_file(made.txt)", "--deny-tool", "bash(touch *)", "go"],
      world,
      server,
      { YOI_TRUST_PROJECT: "1" },
    );
    expect(r.code).toBe(0);
    expect(await readFile(path.join(world.project, "made.txt"), "utf8")).toBe("hi\n");
    expect(await exists(path.join(world.project, "other.txt"))).toBe(false);
    expect(toolResults(server)).toContain("from flag:--deny-tool");
  });

  it("plan mode runs only read-only tools and tells the model it is planning", async () => {
    const world = await tempWorld({ "a.txt": "a\n" });
    const server = await scripted(
      toolTurn([
        { name: "read_file", arguments: { path: "a.txt" } },
        { name: "write_file", arguments: { path: "b.txt", content: "b" } },
        bash("ls"),
      ]),
    );
    const r = await yoi(["--permission-mode", "plan", "--allow-tool", "bash", "plan it"], world, server);
    expect(r.code).toBe(0);
    expect(JSON.stringify(server.requests[0])).toContain("[Plan mode]");
    expect(await exists(path.join(world.project, "b.txt"))).toBe(false);
    expect(toolResults(server).match(/not available in plan mode/g)).toHaveLength(2);
    expect(toolResults(server)).toContain("a\\n");
  });

  it("acceptEdits writes inside the scope without asking; bash still asks (print mode: denied)", async () => {
    const world = await tempWorld();
    const server = await scripted(
      toolTurn([{ name: "write_file", arguments: { path: "b.txt", content: "b" } }, bash("ls")]),
    );
    const r = await yoi(["--permission-mode", "acceptEdits", "edit"], world, server);
    expect(r.code).toBe(0);
    expect(await readFile(path.join(world.project, "b.txt"), "utf8")).toBe("b");
    expect(r.stderr).toContain("denied bash: ls");
  });

  it("bypassPermissions runs in the sandbox; without one it needs the explicit flag", async () => {
    const world = await tempWorld();
    const server = await scripted(toolTurn([bash("echo free > f.txt && ls /proc | grep -c '^[0-9]'")]));
    const r = await yoi(["--permission-mode", "bypassPermissions", "go"], world, server);
    expect(r.code).toBe(0);
    expect(await readFile(path.join(world.project, "f.txt"), "utf8")).toBe("free\n");

    const refused = await yoi(
      ["--permission-mode", "bypassPermissions", "--no-sandbox", "go"],
      world,
      await scripted(toolTurn([bash("true")])),
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--dangerously-bypass-without-sandbox");
    const forced = await scripted(toolTurn([bash("echo forced > g.txt")]));
    const f = await yoi(
      [
        "--permission-mode",
        "bypassPermissions",
        "--no-sandbox",
        "--dangerously-bypass-without-sandbox",
        "go",
      ],
      world,
      forced,
    );
    expect(f.code).toBe(0);
    expect(await readFile(path.join(world.project, "g.txt"), "utf8")).toBe("forced\n");
  });

  it("where no sandbox exists it says so once and every bash call is refused in print mode, until sandbox: false", async () => {
    const world = await tempWorld();
    // No bwrap on this PATH: the machine has no sandbox as far as yoi can tell.
    const env = { PATH: "/nonexistent" };
    const server = await scripted(toolTurn([bash("/bin/echo one"), bash("/bin/echo two")]));
    const r = await yoi(["--allow-tool", "bash", "go"], world, server, env);
    expect(r.code).toBe(0);
    expect(r.stderr.match(/bash has no sandbox here: bubblewrap is not installed/g)).toHaveLength(1);
    expect(toolResults(server).match(/no sandbox is available/g)).toHaveLength(2);

    await userConfig(world.home, '{ "sandbox": false }');
    const off = await scripted(toolTurn([bash("/bin/echo one")]));
    const r2 = await yoi(["--allow-tool", "bash", "go"], world, off, env);
    expect(r2.stderr).not.toContain("no sandbox");
    expect(toolResults(off)).toContain("one\\n");
  });

  it("where bwrap is installed but cannot make a sandbox, the probe after the answer says so once, before any command", async () => {
    const world = await tempWorld();
    const bin = path.join(world.home, "bin");
    await mkdir(bin);
    const log = path.join(world.home, "bwrap-runs.log");
    await writeFile(
      path.join(bin, "bwrap"),
      `#!/bin/sh\necho run >> '${log}'\necho 'bwrap: No permissions to create new namespace.' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const server = await scripted(toolTurn([bash("/bin/echo one")]));
    const r = await yoi(["--allow-tool", "bash", "go"], world, server, { PATH: bin });
    expect(r.code).toBe(0);
    // Probed once; the warning in the CLI's words, once; the call refused, nothing ran.
    expect(await readFile(log, "utf8")).toBe("run\n");
    expect(
      r.stderr.match(/bash has no sandbox here: bubblewrap \([^)]*\) cannot create a sandbox here/g),
    ).toHaveLength(1);
    expect(r.stderr).toContain(
      "No permissions to create new namespace. Every bash command will ask for approval (print mode refuses them)",
    );
    expect(r.stderr).toContain("or pass --no-sandbox");
    expect(toolResults(server)).toContain("no sandbox is available");
    expect(toolResults(server)).not.toContain("one\\n");
    // The first request said bash runs sandboxed (expected from PATH); the next one no longer does.
    const bashTool = (i: number) =>
      (server.requests[i] as { tools: { name: string; description: string }[] }).tools.find(
        (t) => t.name === "bash",
      )!.description;
    expect(bashTool(0)).toContain("Commands run in a sandbox");
    expect(bashTool(1)).not.toContain("sandbox");
  });

  it("a project that turns the sandbox off or allows bash needs trust; print mode ignores it", async () => {
    const world = await tempWorld({
      ".yoi/config.jsonc":
        '{ "sandbox": false, "permissions": { "default": { "read_file": "deny" }, "rules": [{ "tool": "bash", "action": "allow" }, { "tool": "bash", "match": "rm *", "action": "deny" }] } }',
    });
    const server = await scripted(toolTurn([bash("ls"), { name: "read_file", arguments: { path: "x" } }]));
    const r = await yoi(["go"], world, server);
    // What only tightens applies untrusted: the read_file default.
    expect(toolResults(server)).toContain("Permission denied: read_file (x) is not allowed");
    expect(r.stderr).toContain("sandbox: off");
    expect(r.stderr).toContain("permissions: allow bash");
    expect(r.stderr).toContain("denied bash: ls");
  });

  it("bad flags are usage errors that say what to write", async () => {
    const world = await tempWorld();
    const server = await scripted([{ type: "reply", text: "x" }]);
    const mode = await yoi(["--permission-mode", "yolo", "x"], world, server);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain(
      "--permission-mode must be one of default, acceptEdits, plan, bypassPermissions",
    );
    const rule = await yoi(["--allow-tool", "bash(git", "x"], world, server);
    expect(rule.code).toBe(2);
    expect(rule.stderr).toContain("--allow-tool:");
    expect(rule.stderr).toContain("bash(git status *)");
  });
});

describe("bounded input", () => {
  it("a 50 MB prompt on stdin is refused before sending, with exit 2, reading only what a window could hold", async () => {
    const world = await tempWorld();
    const server = await scripted([{ type: "reply", text: "never" }]);
    const big = "word ".repeat(10 * 1024 * 1024);
    const r = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5"], {
      cwd: world.project,
      env: cleanEnv(world.home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL }),
      input: big,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /the prompt on stdin is more than \d+\.\d MB .* context window of 200,000 tokens; nothing was sent/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("what is not text on stdin is refused before sending, saying what it is and what to do", async () => {
    const world = await tempWorld();
    const server = await scripted([{ type: "reply", text: "never" }]);
    const env = cleanEnv(world.home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL });
    // No prompt argument: the test's stdin is a socket, which yoi reads only when nothing else is the prompt.
    const piped = (input: string | Uint8Array) =>
      runYoi(["-p", "-m", "anthropic/claude-haiku-4-5"], { cwd: world.project, env, input });
    const png = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
    ]);
    const image = await piped(png);
    expect(image.code).toBe(2);
    expect(image.stderr).toBe(
      "yoi: the input on stdin is a PNG image (binary), and only text is read from there; save it to a file and attach it with @path (an image is shown to a model that takes images)\n",
    );
    // UTF-16 text: not a file to attach, a text to convert.
    const utf16 = await piped(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello", "utf16le")]));
    expect(utf16.code).toBe(2);
    expect(utf16.stderr).toBe(
      "yoi: the input on stdin is UTF-16LE text (BOM); only UTF-8 is read; convert it first (iconv -t UTF-8)\n",
    );
    const nul = await piped("text\u0000with a NUL @x");
    expect(nul.code).toBe(2);
    expect(nul.stderr).toContain("the input on stdin is binary (contains NUL bytes)");
    expect(server.requests).toHaveLength(0);
    // A stray byte that is not UTF-8 (a log line in Latin-1) does not stop a prompt.
    const latin1 = await piped(Buffer.from("why did it crash?\nerror in caf\xe9.c\n", "latin1"));
    expect(latin1.code, latin1.stderr).toBe(0);
    expect(JSON.stringify(server.requests[0])).toContain("why did it crash?");
  });

  it("a prompt or @file set over the window is refused; a prompt that fits is logged once", async () => {
    const world = await tempWorld({ "big.txt": "x".repeat(400_000) });
    const server = await scripted([{ type: "reply", text: "ok" }]);
    const tooBig = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5"], {
      cwd: world.project,
      env: cleanEnv(world.home, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.baseURL }),
      input: "y".repeat(900_000),
    });
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain("the prompt is");
    await userConfig(world.home, '{ "toolOutput": { "maxBytes": 1000000 } }');
    const files = await yoi(["read @big.txt and @big.txt again, @big.txt"], world, server);
    expect(files.code, files.stderr).toBe(0);
    const twoFiles = await tempWorld({ "a.txt": "a".repeat(450_000), "b.txt": "b".repeat(450_000) });
    await userConfig(twoFiles.home, '{ "toolOutput": { "maxBytes": 1000000 } }');
    const refused = await yoi(["compare @a.txt and @b.txt"], twoFiles, server);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("the prompt with its attached files is");
    expect(server.requests).toHaveLength(1);

    const marker = `unique-marker-${"z".repeat(5000)}`;
    const logged = await scripted([{ type: "reply", text: "ok" }]);
    const run = await yoi([marker], world, logged);
    expect(run.code).toBe(0);
    const dir = path.join(world.home, ".yoi", "sessions");
    const files2 = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".jsonl"));
    let count = 0;
    for (const f of files2) count += (await readFile(path.join(dir, f), "utf8")).split(marker).length - 1;
    expect(count).toBe(1);
  });

  it("a config nested 3,000 levels deep exits 2 with its location", async () => {
    const depth = 3000;
    const world = await tempWorld({
      ".yoi/config.jsonc": `{"worker":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`,
    });
    const r = await runYoi(["config"], { cwd: world.project, env: cleanEnv(world.home) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.yoi\/config\.jsonc:1:\d+: values are nested more than 64 levels deep/);
  });
});

describe("yoi config", () => {
  it("lists every permission rule with its source, flags included", async () => {
    const world = await tempWorld({
      ".yoi/config.jsonc":
        '{ "permissions": { "rules": [{ "tool": "bash", "match": "rm *", "action": "deny" }] } }',
    });
    await userConfig(
      world.home,
      '{ "permissions": { "rules": [{ "tool": "bash", "match": "git *", "action": "allow" }] } }',
    );
    const r = await runYoi(["config", "--deny-tool", "mcp__*", "--permission-mode", "plan"], {
      cwd: world.project,
      env: cleanEnv(world.home),
    });
    expect(r.code).toBe(0);
    const line = (key: string) => r.stdout.split("\n").find((l) => l.startsWith(`${key} `)) ?? "";
    expect(line("permissions.rules[0]")).toMatch(/"git \*".*~\/\.yoi\/config\.jsonc/);
    expect(line("permissions.rules[1]")).toMatch(/"rm \*".*\.yoi\/config\.jsonc/);
    expect(line("permissions.rules[2]")).toMatch(/"mcp__\*".*flag:--deny-tool/);
    expect(line("permissions.mode")).toMatch(/"plan".*flag:--permission-mode/);
    expect(line("sandbox")).toMatch(/true\s+default/);
  });
});

describe.skipIf(!TmuxSession.available())("interactive: Shift+Tab cycles the permission mode", () => {
  it("the prompt shows the mode, and plan mode refuses an edit", async () => {
    const server = await scripted(
      toolTurn([{ name: "write_file", arguments: { path: "b.txt", content: "b" } }]),
    );
    const world = await tempWorld();
    const out = path.join(world.home, "run");
    const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const env = [
      `HOME=${q(world.home)}`,
      `PATH=${q(process.env.PATH ?? "/usr/bin:/bin")}`,
      "TERM=xterm-256color",
      "LANG=C.UTF-8",
      "ANTHROPIC_API_KEY=test-key",
      `ANTHROPIC_BASE_URL=${q(server.baseURL)}`,
    ].join(" ");
    const cmd = [...yoiArgv(), "-m", "anthropic/claude-haiku-4-5"].map(q).join(" ");
    const tty = TmuxSession.start(
      `cd ${q(world.project)} && env -i ${env} ${cmd}; echo "EXIT=$?" > ${q(`${out}.exit`)}; sleep 30`,
    );
    terminals.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.keys("BTab");
    await tty.waitFor("⏵ accept edits ›");
    tty.keys("BTab");
    await tty.waitFor("⏸ plan ›");
    tty.type("write b");
    tty.keys("Enter");
    await tty.waitFor("Done.");
    expect(await exists(path.join(world.project, "b.txt"))).toBe(false);
    expect(JSON.stringify(server.requests[1])).toContain("not available in plan mode");
    // Back to default: bypassPermissions is not in the cycle of a session not started with it,
    // even where bubblewrap is active.
    tty.keys("BTab");
    await tty.waitFor(/^›\s*$/m);
    expect(tty.screen()).not.toContain("bypass permissions");
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
