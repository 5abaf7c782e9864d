/**
 * Language-server diagnostics after edits, with the real servers
 * (typescript-language-server over TypeScript 6's tsserver, pyright)
 * started from this package's devDependencies, and small scripts standing
 * in for a server that hangs or dies.
 */
import { mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as path from "node:path";
import { createClient } from "@yoi/llm-client";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { type ConfigInput, ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import { LspManager } from "../src/lsp/lsp-manager.ts";
import { Pod } from "../src/pod.ts";
import { detectSandbox, isSandbox } from "../src/sandbox/index.ts";
import { defaultBashEnv } from "../src/tools/bash.ts";
import { tempDir } from "./helpers.ts";

const require = createRequire(import.meta.url);
/** TypeScript 6 (its tsserver; TypeScript 7 has none), installed under an alias. */
const TYPESCRIPT_DIR = path.dirname(require.resolve("typescript-for-lsp/package.json"));
const TS_LANGUAGE_SERVER = path.join(
  path.dirname(require.resolve("typescript-language-server/package.json")),
  "lib",
  "cli.mjs",
);
// Generous: a cold tsserver or pyright on a loaded machine takes seconds; the budget itself is tested with stand-ins.
const SLOW_OK_MS = 90_000;
/** A test that waits on real servers may take up to two of their budgets (an edit and its fix). */
const REAL_SERVERS = { timeout: 2 * SLOW_OK_MS + 30_000 };

const managers: LspManager[] = [];
const pods: Pod[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
  await Promise.all(pods.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A TypeScript project whose node_modules/typescript is TypeScript 6. */
async function tsProject(): Promise<string> {
  const root = await tempDir("yoi-lsp-");
  await writeFile(
    path.join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext" } }),
  );
  await mkdir(path.join(root, "node_modules"), { recursive: true });
  await symlink(TYPESCRIPT_DIR, path.join(root, "node_modules", "typescript"));
  return root;
}

function manager(root: string, lsp: ConfigInput["lsp"] = {}) {
  const m = new LspManager({
    config: ConfigSchema.parse({ lsp: { timeoutMs: SLOW_OK_MS, ...lsp } }).lsp,
    root,
    env: defaultBashEnv(),
    display: (real) => path.relative(root, real),
  });
  managers.push(m);
  return m;
}

/** A manager whose servers run in this machine's sandbox (read-only, no network), as a session's do. */
async function sandboxedManager(root: string, lsp: ConfigInput["lsp"] = {}) {
  const found = await detectSandbox();
  if (!isSandbox(found))
    throw new Error(`this test needs bubblewrap (apt-get install bubblewrap): ${found.reason}`);
  const m = new LspManager({
    config: ConfigSchema.parse({ lsp: { timeoutMs: SLOW_OK_MS, ...lsp } }).lsp,
    root,
    env: defaultBashEnv(),
    display: (real) => path.relative(root, real),
    sandbox: { sandbox: found, policy: { writeRoots: [root], hidden: [], network: false } },
  });
  managers.push(m);
  return m;
}

const BAD_TS = 'export const n: number = "seven";\n';
const GOOD_TS = "export const n: number = 7;\n";

describe("diagnostics after an edit, from real servers", REAL_SERVERS, () => {
  it("typescript-language-server: a type error is reported with its line and code; the fix clears it", async () => {
    const root = await tsProject();
    const lsp = manager(root);
    const file = path.join(root, "a.ts");
    await writeFile(file, BAD_TS);
    const bad = await lsp.diagnose(file, BAD_TS);
    expect(bad).toContain("typescript reports 1 error in a.ts:");
    expect(bad).toMatch(/1:14 error TS2322: Type 'string' is not assignable to type 'number'\./);
    await writeFile(file, GOOD_TS);
    expect(await lsp.diagnose(file, GOOD_TS)).toBeUndefined();
    const [row] = lsp.status();
    expect(row).toMatchObject({ name: "typescript", state: "ready", openFiles: 1 });
    expect(row?.pid).toBeGreaterThan(0);
  });

  it("pyright: errors only by default; warnings when asked", async () => {
    const root = await tempDir("yoi-lsp-py-");
    const lsp = manager(root);
    const file = path.join(root, "m.py");
    const text = "def f(x: int) -> int:\n    return x\n\nf('a')\nimport os\n";
    await writeFile(file, text);
    const out = await lsp.diagnose(file, text);
    expect(out).toContain("python reports 1 error in m.py:");
    expect(out).toMatch(/4:3 error reportArgumentType: Argument of type "Literal\['a'\]"/);
    expect(lsp.status().find((r) => r.name === "python")?.state).toBe("ready");
    // The project's own pyright settings hold: an unused import is a warning here.
    const strict = await tempDir("yoi-lsp-py-");
    await writeFile(path.join(strict, "pyrightconfig.json"), '{ "reportUnusedImport": "warning" }');
    const strictFile = path.join(strict, "m.py");
    await writeFile(strictFile, text);
    const all = await manager(strict, { severity: "warning" }).diagnose(strictFile, text);
    expect(all).toContain("python reports 2 problems in m.py:");
    expect(all).toMatch(
      /4:3 error reportArgumentType: [^\n]+\n {2}5:8 warning reportUnusedImport: Import "os" is not accessed/,
    );
  });

  it("a file no server checks gets nothing, and starts nothing", async () => {
    const root = await tempDir("yoi-lsp-");
    const lsp = manager(root);
    expect(await lsp.diagnose(path.join(root, "notes.md"), "# hi\n")).toBeUndefined();
    expect(lsp.status().map((r) => r.state)).toEqual(["idle", "idle"]);
  });
});

describe("a server that fails costs the edit nothing", REAL_SERVERS, () => {
  /** A stand-in server program, outside the project root (a directory of its own, removed after the test). */
  async function standIn(name: string, body: string): Promise<string> {
    const file = path.join(await tempDir("yoi-lsp-bin-"), `${name}.mjs`);
    await writeFile(file, body);
    return file;
  }

  it("a server that never answers: the budget runs out, said once", async () => {
    const root = await tempDir("yoi-lsp-");
    const hang = await standIn("hang", "process.stdin.resume();\n");
    const lsp = manager(root, {
      timeoutMs: 300,
      servers: { typescript: { command: process.execPath, args: [hang] } },
    });
    const file = path.join(root, "a.ts");
    const first = await lsp.diagnose(file, BAD_TS);
    expect(first).toBe(
      "[language server typescript is still starting and did not report on a.ts within 300 ms; the file is saved. Later edits are checked without this notice.]",
    );
    expect(await lsp.diagnose(file, GOOD_TS)).toBeUndefined();
    expect(lsp.status()[0]?.state).toBe("starting");
  });

  it("a server that dies: reported once with its stderr, then left alone", async () => {
    const root = await tempDir("yoi-lsp-");
    const die = await standIn("die", 'process.stderr.write("boom: no licence\\n");\nprocess.exit(3);\n');
    const lsp = manager(root, { servers: { typescript: { command: process.execPath, args: [die] } } });
    const file = path.join(root, "a.ts");
    const first = await lsp.diagnose(file, BAD_TS);
    expect(first).toMatch(
      /^\[language server typescript failed \(typescript exited with code 3: boom: no licence\)/,
    );
    expect(await lsp.diagnose(file, BAD_TS)).toBeUndefined();
    expect(lsp.status()[0]).toMatchObject({ state: "failed", detail: expect.stringContaining("boom") });
  });

  it("in the session's sandbox a server can write nothing outside its private /tmp (it loads code the model could write)", async () => {
    const root = await tempDir("yoi-lsp-");
    // what a planted server would try: leave code behind in the project and in the user's files
    // in the project, where the model could have written it
    const planter = path.join(root, "node_modules", "planter.mjs");
    await mkdir(path.dirname(planter), { recursive: true });
    await writeFile(
      planter,
      [
        'import fs from "node:fs";',
        "const tried = [];",
        `for (const f of [${JSON.stringify(path.join(root, "planted.js"))}, ${JSON.stringify(path.join(root, "..", `${path.basename(root)}-planted.js`))}]) {`,
        "  try { fs.writeFileSync(f, 'x'); tried.push('wrote ' + f); } catch (e) { tried.push(e.code); }",
        "}",
        "process.stderr.write(tried.join(',') + '\\n');",
        "process.exit(4);",
      ].join("\n"),
    );
    const m = await sandboxedManager(root, {
      servers: { typescript: { command: process.execPath, args: [planter] } },
    });
    const first = await m.diagnose(path.join(root, "a.ts"), BAD_TS);
    // the project is there to read, not to write; what it writes elsewhere stays in the sandbox's own /tmp
    expect(first).toMatch(/typescript exited with code 4: (EROFS|EACCES|EPERM),/);
    await expect(stat(path.join(root, "planted.js"))).rejects.toThrow();
    await expect(stat(path.join(root, "..", `${path.basename(root)}-planted.js`))).rejects.toThrow();
  });

  it("a program that cannot be run fails once, with why", async () => {
    const root = await tempDir("yoi-lsp-");
    const notExecutable = await standIn("plain", "not a program\n");
    const lsp = manager(root, { servers: { typescript: { command: notExecutable } } });
    const first = await lsp.diagnose(path.join(root, "a.ts"), BAD_TS);
    expect(first).toMatch(
      /^\[language server typescript failed \(typescript: .* could not be started: .*EACCES/,
    );
    expect(await lsp.diagnose(path.join(root, "a.ts"), BAD_TS)).toBeUndefined();
    expect(lsp.status()[0]).toMatchObject({
      state: "failed",
      detail: expect.stringContaining("could not be started"),
    });
  });

  it("a configured program that does not exist is missing, with what to do", async () => {
    const root = await tempDir("yoi-lsp-");
    const lsp = manager(root, { servers: { python: { command: "no-such-pyright" } } });
    expect(await lsp.diagnose(path.join(root, "m.py"), "x = 1\n")).toBeUndefined();
    expect(lsp.status().find((r) => r.name === "python")).toMatchObject({
      state: "missing",
      detail: expect.stringContaining("no-such-pyright was found neither in node_modules/.bin nor on PATH"),
    });
  });

  it("a server with no command or extensions is reported as invalid", async () => {
    const root = await tempDir("yoi-lsp-");
    const lsp = manager(root, { servers: { rust: { args: ["x"] } } });
    expect(lsp.status().find((r) => r.name === "rust")).toMatchObject({
      state: "invalid",
      detail: 'lsp.servers.rust needs "command" and "extensions" (yoi does not know a server by this name)',
    });
  });
});

describe("the project's node_modules/.bin", REAL_SERVERS, () => {
  it("is used when the program was there at the start", async () => {
    const root = await tsProject();
    await mkdir(path.join(root, "node_modules", ".bin"));
    await symlink(TS_LANGUAGE_SERVER, path.join(root, "node_modules", ".bin", "typescript-language-server"));
    const lsp = manager(root);
    expect(lsp.status()[0]?.program).toBe(
      path.join(root, "node_modules", ".bin", "typescript-language-server"),
    );
    expect(await lsp.diagnose(path.join(root, "a.ts"), BAD_TS)).toContain("TS2322");
  });

  it("is refused when the program appeared during the session (something the model ran could have put it there)", async () => {
    const root = await tsProject();
    const lsp = manager(root);
    await mkdir(path.join(root, "node_modules", ".bin"));
    const planted = path.join(root, "node_modules", ".bin", "typescript-language-server");
    await writeFile(planted, "#!/bin/sh\ntouch pwned\n", { mode: 0o755 });
    expect(await lsp.diagnose(path.join(root, "a.ts"), BAD_TS)).toBeUndefined();
    expect(lsp.status()[0]).toMatchObject({
      state: "missing",
      detail: expect.stringContaining(
        "node_modules/.bin/typescript-language-server was created or changed during this session",
      ),
    });
  });
});

describe("in the session's sandbox", REAL_SERVERS, () => {
  it("typescript-language-server outlives its watch on the client's pid (its PID namespace has no such pid)", async () => {
    const root = await tsProject();
    const m = await sandboxedManager(root);
    const file = path.join(root, "a.ts");
    await writeFile(file, BAD_TS);
    expect(await m.diagnose(file, BAD_TS)).toMatch(/TS2322/);
    // A server on vscode-languageserver looks for its client's process every 3 s, and exits when it finds none.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await writeFile(file, GOOD_TS);
    expect(await m.diagnose(file, GOOD_TS)).toBeUndefined();
    expect(m.status()[0]).toMatchObject({ name: "typescript", state: "ready" });
  });

  it("a server that dies while an edit waits for it is reported at once, not after the budget", async () => {
    const root = await tempDir("yoi-lsp-");
    // Answers initialize, then ends (code 1) once it is told about a file: the edit is waiting for it by then.
    const server = path.join(await tempDir("yoi-lsp-bin-"), "dies-later.mjs");
    await writeFile(
      server,
      [
        "let buffer = Buffer.alloc(0);",
        "const send = (message) => { const body = JSON.stringify(message); process.stdout.write('Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body); };",
        "process.stdin.on('data', (chunk) => {",
        "  buffer = Buffer.concat([buffer, chunk]);",
        "  for (;;) {",
        "    const end = buffer.indexOf('\\r\\n\\r\\n');",
        "    if (end < 0) return;",
        "    const length = Number(/Content-Length: (\\d+)/i.exec(buffer.subarray(0, end).toString())[1]);",
        "    if (buffer.length < end + 4 + length) return;",
        "    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());",
        "    buffer = buffer.subarray(end + 4 + length);",
        "    if (message.method === 'initialize') send({ jsonrpc: '2.0', id: message.id, result: { capabilities: { textDocumentSync: 1 } } });",
        "    if (message.method === 'textDocument/didOpen') setTimeout(() => process.exit(1), 200);",
        "  }",
        "});",
      ].join("\n"),
    );
    const m = await sandboxedManager(root, {
      servers: { typescript: { command: process.execPath, args: [server] } },
    });
    const started = Date.now();
    const note = await m.diagnose(path.join(root, "a.ts"), BAD_TS);
    expect(note).toMatch(/language server typescript failed \(typescript exited with code 1\)/);
    expect(Date.now() - started).toBeLessThan(SLOW_OK_MS / 2);
  });
});

describe("in a session", REAL_SERVERS, () => {
  it("write_file's type error reaches the next request with its code; edit_file's fix clears it", async () => {
    const root = await tsProject();
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "c1", name: "write_file", arguments: { path: "a.ts", content: BAD_TS } }],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "c2",
              name: "edit_file",
              arguments: { path: "a.ts", old_string: '"seven"', new_string: "7" },
            },
          ],
        },
        { type: "reply", text: "fixed" },
      ],
    });
    servers.push(s);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(root, "..", `${path.basename(root)}-data`),
      fsync: "never",
      instructions: false,
      environment: false,
      // the session's sandbox (detected): the server runs in it, read-only, and still answers
      permissionMode: "acceptEdits",
      config: ConfigSchema.parse({ lsp: { timeoutMs: SLOW_OK_MS } }),
      client: createClient({
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "k",
        baseURL: s.baseURL,
      }),
    });
    pods.push(pod);
    await pod.run("make n a number");
    const second = JSON.stringify(s.requests[1]);
    expect(second).toContain("Created a.ts");
    expect(second).toContain("TS2322");
    const third = JSON.stringify(s.requests[2]);
    expect(third).toContain("Edited a.ts");
    expect(third.split("TS2322")).toHaveLength(2); // only the earlier result still says it
    const pid = pod.lsp.status()[0]?.pid;
    expect(pid).toBeGreaterThan(0);
    await pod.close();
    expect(() => process.kill(pid!, 0)).toThrow();
  });
});
