/**
 * The published `yoi` is the bundle `bundle.ts` writes (dist/bin.js plus
 * lazily loaded chunks), which every black-box test runs. These tests look
 * at what is particular to it: the version, a print-mode run with tools
 * against every provider's scripted server, the grep tool's worker thread,
 * the start-up trace, and the code caches the chunk loader keeps (written,
 * used, refused when damaged, foreign or in a directory others can write to).
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterAll, describe, expect, it } from "vitest";
import { launcherNodeArgs } from "../fresh-bundle.ts";
import { type ChunkToPack, encodeCodePack, parseCodePack, writeCodePack } from "../src/startup/code-pack.ts";
import { BIN, CLI_DIR, cleanEnv, type RunResult, runYoi, tempWorld, yoiArgv } from "./helpers.ts";

const OUT = path.dirname(BIN);

function runBundle(args: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  return runYoi(args, { env, cwd });
}

describe("the bundled yoi", () => {
  it("is one entry plus chunks, and --version answers with the package's version", async () => {
    expect(existsSync(path.join(OUT, "bin.js"))).toBe(true);
    expect(readdirSync(path.join(OUT, "chunks")).length).toBeGreaterThan(1);
    const { home } = await tempWorld();
    const version = (
      JSON.parse(readFileSync(path.join(CLI_DIR, "package.json"), "utf8")) as { version: string }
    ).version;
    const r = await runBundle(["--version"], cleanEnv(home), home);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it("starts as an installed yoi does: executed itself, node from PATH with a larger young generation", async () => {
    // npm links `yoi` to dist/bin.js; its first line (see bundle.ts) is a shell one that starts node on the file.
    const { home, project } = await tempWorld();
    const link = path.join(home, "yoi");
    symlinkSync(BIN, link);
    let cmdline: string[] = [];
    let child: ReturnType<typeof spawn> | undefined;
    const watched = await startScriptedServer({
      provider: "anthropic",
      script: () => {
        // The process the user started is node itself by now (the shell exec'ed it): same pid.
        cmdline = readFileSync(`/proc/${child?.pid}/cmdline`, "latin1").split("\0").filter(Boolean);
        return { type: "reply", text: "done" };
      },
    });
    try {
      const env = cleanEnv(home, {
        ANTHROPIC_API_KEY: "sk-test",
        // The node that `yoi` finds on PATH: the one running these tests.
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
      });
      const prompt = `it's "quoted", $HOME and \`ticks\` stay as typed`;
      const run = (url: string) =>
        new Promise<RunResult>((resolve) => {
          child = spawn(link, ["-p", prompt, "--model", "anthropic/claude-haiku-4-5", "--base-url", url], {
            cwd: project,
            env,
            stdio: ["ignore", "pipe", "pipe"],
          });
          let stdout = "";
          let stderr = "";
          child.stdout?.on("data", (d: Buffer) => (stdout += d));
          child.stderr?.on("data", (d: Buffer) => (stderr += d));
          // Not runnable (bin.js without its executable bit): say so rather than wait for a close that never comes.
          child.on("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
          child.on("close", (code) => resolve({ code, stdout, stderr }));
        });
      const r = await run(watched.baseURL);
      expect(r.stderr).toBe("");
      expect(r).toMatchObject({ code: 0, stdout: "done\n" });
      expect(JSON.stringify(watched.requests[0])).toContain(JSON.stringify(prompt));
      // The flags the benchmarks give a node they start themselves are the ones the launcher line gives:
      // print mode starts with the young generation a session is capped at, any other run with 4 MB semi-spaces.
      expect(launcherNodeArgs(BIN, ["-p", prompt])).toEqual(["--min-semi-space-size=16"]);
      expect(launcherNodeArgs(BIN, ["--print"])).toEqual(["--min-semi-space-size=16"]);
      expect(launcherNodeArgs(BIN, ["-m", "x", "say -p"])).toEqual(["--min-semi-space-size=4"]);
      expect(launcherNodeArgs(BIN, ["serve"])).toEqual(["--min-semi-space-size=4"]);
      expect(cmdline.slice(1)).toEqual([
        ...launcherNodeArgs(BIN, ["-p"]),
        link,
        "-p",
        prompt,
        "--model",
        "anthropic/claude-haiku-4-5",
        "--base-url",
        watched.baseURL,
      ]);
      expect(path.basename(cmdline[0] ?? "")).toBe("node");
      // Its own exit code comes back through the shell line: a usage error is 2.
      const usage = await new Promise<number | null>((resolve, reject) =>
        spawn(link, ["--no-such-flag"], { cwd: project, env, stdio: "ignore" })
          .on("error", reject)
          .on("close", resolve),
      );
      expect(usage).toBe(2);
    } finally {
      await watched.close();
    }
  });

  it("imports no built-in module as an ES module, and carries zod's English messages only", () => {
    // A static import of node:fs loads fs.promises before bin.js runs (see bundle.ts).
    const bin = readFileSync(path.join(OUT, "bin.js"), "utf8");
    expect(bin.match(/^\s*import\b[^(].*$/gm) ?? []).toEqual([]);
    expect(bin).toContain('process.getBuiltinModule("node:fs")');
    const chunks = readdirSync(path.join(OUT, "chunks")).filter((f) => f.endsWith(".js"));
    const read = (f: string) => readFileSync(path.join(OUT, "chunks", f), "latin1");
    // zod's English locale ("Invalid input") is in; its German one (and so the other 50) is not.
    expect(chunks.filter((f) => read(f).includes("Invalid input")).length).toBeGreaterThan(0);
    expect(chunks.filter((f) => read(f).includes("Ung\\xFCltig"))).toEqual([]);
  });

  it("ends quietly, with its own exit code, when the reader of its output has gone", async () => {
    // The handler is attached when stdout is first used (see bin.ts): the write that fails must still find it.
    const { home, project } = await tempWorld();
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "ok" }],
    });
    try {
      for (const args of [
        ["--help"],
        ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
      ]) {
        const [node, ...argv] = yoiArgv();
        const child = spawn(node!, [...argv, ...args], {
          cwd: project,
          env: cleanEnv(home, { ANTHROPIC_API_KEY: "test-key" }),
          stdio: ["ignore", "pipe", "pipe"],
        });
        child.stdout.destroy(); // the reader is gone before the first write
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
        });
        const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
        expect({ args: args[0], code, stderr }).toEqual({ args: args[0], code: 0, stderr: "" });
      }
    } finally {
      await server.close();
    }
  });

  const servers: ScriptedServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it.each([
    ["anthropic", "anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY"],
    ["openai-responses", "openai/gpt-5-mini", "OPENAI_API_KEY"],
    ["openai-chat", "openai-chat/local-model", undefined],
    ["gemini", "gemini/gemini-2.5-flash", "GEMINI_API_KEY"],
  ] as const)(
    "runs print mode with tools against %s",
    async (kind, model, keyVar) => {
      const { home, project } = await tempWorld({ "src/a.txt": "needle in a file\n" });
      const server = await startScriptedServer({
        provider: kind,
        validate: true,
        script: [
          {
            type: "reply",
            toolCalls: [
              { id: "c1", name: "read_file", arguments: { path: "src/a.txt" } },
              { id: "c2", name: "grep", arguments: { pattern: "needle" } },
            ],
          },
          { type: "reply", text: "found it" },
        ],
      });
      servers.push(server);
      const env = cleanEnv(home, {
        YOI_TRACE_STARTUP: "1",
        ...(keyVar ? { [keyVar]: "test-key" } : {}),
      });
      const r = await runBundle(
        ["-p", "where is the needle?", "--model", model, "--base-url", server.baseURL],
        env,
        project,
      );
      expect(r.stderr).toContain("start-up trace");
      expect(r.stderr).toMatch(/first request sent/);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe("found it");
      expect(server.requests).toHaveLength(2);
      // Both tool results went back: the file body and grep's match (run in its worker thread).
      const second = JSON.stringify(server.requests[1]);
      expect(second).toContain("needle in a file");
      expect(second).toContain("src/a.txt");
    },
    60_000,
  );

  it("searches in the grep matcher's worker thread (a file of the bundle's own), for grep and tool_output_cache_grep", async () => {
    expect(existsSync(path.join(OUT, "grep-matcher-worker.js"))).toBe(true);
    const { home, project } = await tempWorld({ "src/a.txt": "needle in a file\n" });
    /** The ref of bash's output (too large to show: stored, and named in its result). */
    const refOf = (body: unknown) => /(?:ref=|\[blob:)([0-9a-f-]{36})/.exec(JSON.stringify(body))?.[1];
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: (index, body) => {
        if (index === 0)
          return {
            type: "reply",
            toolCalls: [
              { id: "c1", name: "grep", arguments: { pattern: "ne+dle", path: "src" } },
              { id: "c2", name: "bash", arguments: { command: "seq 1 9000" } },
            ],
          };
        if (index === 1)
          return {
            type: "reply",
            toolCalls: [
              {
                id: "c3",
                name: "tool_output_cache_grep",
                arguments: { ref_id: refOf(body), pattern: "^42+$" },
              },
            ],
          };
        return { type: "reply", text: "found it" };
      },
    });
    servers.push(server);
    const r = await runBundle(
      [
        "-p",
        "where is the needle?",
        "--model",
        "anthropic/claude-haiku-4-5",
        "--base-url",
        server.baseURL,
        "--allow-tool",
        "bash(seq *)",
      ],
      cleanEnv(home, { ANTHROPIC_API_KEY: "test-key" }),
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("found it");
    // What only the matcher thread could have written: grep's numbered hit, and the cache grep's.
    expect(JSON.stringify(server.requests[1])).toContain(
      "a.txt:1:needle in a file\\n[1 matching line in 1 file]",
    );
    expect(JSON.stringify(server.requests[2])).toMatch(
      /42:42\\n +422:422\\n +4222:4222\\n\(3 matching lines in \d+ lines of ref [0-9a-f-]{36}\)/,
    );
  }, 60_000);

  it("reads bash lines with tree-sitter (its WebAssembly resolves from the bundle) and runs them sandboxed", async () => {
    const { home, project } = await tempWorld();
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "c1", name: "bash", arguments: { command: "echo hi > out.txt && echo done" } }],
        },
        { type: "reply", text: "ok" },
      ],
    });
    servers.push(server);
    const r = await runBundle(
      [
        "-p",
        "go",
        "--model",
        "anthropic/claude-haiku-4-5",
        "--base-url",
        server.baseURL,
        "--allow-tool",
        "bash(echo *)",
        "--allow-tool",
        "write_file(out.txt)",
      ],
      cleanEnv(home, { ANTHROPIC_API_KEY: "test-key" }),
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(server.requests[1])).toContain("done\\n[exit code: 0]");
    expect(readFileSync(path.join(project, "out.txt"), "utf8")).toBe("hi\n");
  }, 60_000);

  it("loads no built-in module the first request does not need before it sends it", async () => {
    // A preload that notes Node's module list when the SDK's first request goes to Node's HTTP client.
    const { home, project } = await tempWorld();
    const list = path.join(home, "modules-at-first-request.txt");
    const preload = path.join(home, "note-modules.cjs");
    writeFileSync(
      preload,
      `const channel = require("node:diagnostics_channel").channel("http.client.request.start");
const note = () => {
  require("node:fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n"));
  channel.unsubscribe(note);
};
channel.subscribe(note);
`,
    );
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "ok" },
        { type: "reply", text: "ok" },
      ],
    });
    servers.push(server);
    // The second run: the first probes the sandbox (a process) and writes the code caches.
    for (let run = 0; run < 2; run++) {
      const r = await runBundle(
        ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
        cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", NODE_OPTIONS: `--require=${preload}` }),
        project,
      );
      expect(r.code, r.stderr).toBe(0);
    }
    const loaded = readFileSync(list, "utf8").split("\n");
    expect(loaded).toContain("NativeModule http");
    // uuid's random bytes come from the kernel (src/startup/uuid-random.ts), not WebCrypto or node:crypto,
    // which chunks import by name and so load when a name is first read (bundle.ts): a hash or a temporary
    // file name later. Bash, hooks and the sandbox probe load child_process when they start a process,
    // which a cached probe does not; a worker thread (grep, images) only when a tool needs one.
    expect(loaded.filter((m) => /crypto|child_process|worker_threads/.test(m))).toEqual([]);
    // ...and its ids are still version 7 (the session log is named by one).
    const logs = readdirSync(path.join(home, ".yoi", "sessions")).filter((f) => f.endsWith(".jsonl"));
    expect(logs).toHaveLength(2);
    for (const log of logs)
      expect(log).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jsonl$/);
  }, 60_000);

  it("loads google-auth-library and ws only when the Gemini SDK constructs a GoogleAuth or a WebSocket", () => {
    // The stand-ins of bundle.ts cover `new GoogleAuth(...)` and `new NodeWs.WebSocket(...)`: the SDK must use
    // nothing else of either.
    const sdkRequire = createRequire(createRequire(import.meta.url).resolve("@yoi/llm-client"));
    // The SDK's Node build (dist/node/index.cjs for require; the bundle reads index.mjs next to it).
    const genai = readFileSync(
      path.join(path.dirname(sdkRequire.resolve("@google/genai")), "index.mjs"),
      "utf8",
    );
    expect(genai.match(/^import .* from 'google-auth-library';$/gm)).toEqual([
      "import { GoogleAuth } from 'google-auth-library';",
    ]);
    expect(genai.match(/\bGoogleAuth\b/g)?.length).toBe(2); // the import and one `new GoogleAuth(...)`
    expect(genai.match(/^import .* from 'ws';$/gm)).toEqual(["import * as NodeWs from 'ws';"]);
    expect(genai.match(/\bNodeWs\b[.\w]*/g)).toEqual(["NodeWs", "NodeWs.WebSocket"]);
    // ws's CommonJS build (which the stand-in requires) has WebSocket as a property of its export.
    expect(
      typeof (
        sdkRequire(
          sdkRequire.resolve("ws", { paths: [path.dirname(sdkRequire.resolve("@google/genai"))] }),
        ) as { WebSocket?: unknown }
      ).WebSocket,
    ).toBe("function");
    const chunk = readdirSync(path.join(OUT, "chunks")).find(
      (f) => f.startsWith("gemini-") && f.endsWith(".js"),
    )!;
    const code = readFileSync(path.join(OUT, "chunks", chunk), "utf8");
    // The stand-ins; the real libraries are still bundled, required on their first construction.
    // (Tested as booleans: a failed toMatch would print the whole chunk.)
    for (const [name, required] of [
      ["GoogleAuth", "require_src\\d*"],
      ["WebSocket", "require_ws\\d*"],
    ])
      expect(
        new RegExp(
          `(real\\d*)\\s*\\?\\?=\\s*${required}\\(\\);\\s*return new \\1\\.${name}\\(\\.\\.\\.args\\)`,
        ).test(code),
        name,
      ).toBe(true);
    expect(/exports\d*\.GoogleAuth\s*=\s*GoogleAuth\d*\b/.test(code)).toBe(true);
  });

  describe("code caches taken after the run", () => {
    const codeDir = (home: string) => path.join(home, ".cache", "yoi", "code");
    /** The code pack of print runs (one per kind of run, in the build's directory). */
    const printPack = (home: string) => {
      const [build] = readdirSync(codeDir(home));
      return path.join(codeDir(home), build!, "print.pack");
    };
    /** How many of the chunks loaded before `main` ran came from the code cache, from the start-up trace. */
    const fromCache = (stderr: string) => {
      const m = /main loaded \((\d+) of (\d+) chunks from the code cache\)/.exec(stderr);
      expect(m, stderr).not.toBeNull();
      return { cached: Number(m![1]), loaded: Number(m![2]) };
    };
    async function printRun(home: string, project: string, extra: Record<string, string> = {}) {
      const server = await startScriptedServer({
        provider: "anthropic",
        script: [{ type: "reply", text: "ok" }],
      });
      servers.push(server);
      const r = await runBundle(
        ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
        cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", YOI_TRACE_STARTUP: "1", ...extra }),
        project,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe("ok");
      return r;
    }
    /** The pack's chunks, rewritten by `edit` (tests damage or swap them). */
    function editPack(file: string, edit: (chunks: ChunkToPack[]) => ChunkToPack[]) {
      const packed = parseCodePack(readFileSync(file));
      expect(packed).toBeDefined();
      const chunks = [...packed!].map(([name, c]) => ({
        name,
        size: c.size,
        mtimeMs: c.mtimeMs,
        source: c.source(),
        cache: c.cache()!,
      }));
      writeCodePack(file, edit(chunks));
    }

    it("are written by the first run into one pack, and used by the next", async () => {
      const { home, project } = await tempWorld();
      const first = fromCache((await printRun(home, project)).stderr);
      expect(first.cached).toBe(0);
      expect(first.loaded).toBeGreaterThan(1);
      const pack = parseCodePack(readFileSync(printPack(home)));
      // Every chunk the print run loaded (more than the ones before `main`), each with a cache whose CRC holds.
      expect(pack!.size).toBeGreaterThan(first.loaded);
      expect([...pack!.values()].every((c) => c.cache() !== undefined)).toBe(true);
      expect(readdirSync(path.dirname(printPack(home)))).toEqual(["print.pack"]);
      const written = statSync(printPack(home)).mtimeMs;
      const second = fromCache((await printRun(home, project)).stderr);
      expect(second).toEqual({ cached: first.loaded, loaded: first.loaded });
      // Every cache taken: nothing is written again.
      expect(statSync(printPack(home)).mtimeMs).toBe(written);
    }, 60_000);

    it("keep the chunks of other runs of the kind, so switching providers compiles nothing again", async () => {
      const { home, project } = await tempWorld();
      await printRun(home, project);
      const local = await startScriptedServer({
        provider: "openai-chat",
        script: [{ type: "reply", text: "ok" }],
      });
      servers.push(local);
      const r = await runBundle(
        ["-p", "hi", "--model", "openai-chat/local-model", "--base-url", local.baseURL],
        cleanEnv(home, { YOI_TRACE_STARTUP: "1" }),
        project,
      );
      expect(r.code, r.stderr).toBe(0);
      const names = [...parseCodePack(readFileSync(printPack(home)))!.keys()];
      expect(names.some((n) => n.startsWith("anthropic-"))).toBe(true);
      expect(names.some((n) => n.startsWith("openai-chat-"))).toBe(true);
      const written = statSync(printPack(home)).mtimeMs;
      const again = fromCache((await printRun(home, project)).stderr);
      expect(again.cached).toBe(again.loaded);
      expect(statSync(printPack(home)).mtimeMs).toBe(written);
    }, 60_000);

    it("a run whose V8 flags changed as it went (the young-generation bound) leaves the pack to the next start", async () => {
      const { home, project } = await tempWorld();
      await printRun(home, project);
      const before = readFileSync(printPack(home));
      // A long session sets a V8 flag once its young generation is large (src/young-generation.ts); V8 refuses
      // every cache made after that at the next start. This run sets the flag on its way out, before the
      // loader's exit, and loads a chunk the pack lacks (another provider's), so it would write the pack.
      const setFlag = path.join(home, "set-flag.cjs");
      writeFileSync(
        setFlag,
        'process.once("exit", () => require("node:v8").setFlagsFromString("--semi-space-growth-factor=1"));\n',
      );
      const local = await startScriptedServer({
        provider: "openai-chat",
        script: [{ type: "reply", text: "ok" }],
      });
      servers.push(local);
      const r = await runYoi(
        ["-p", "hi", "--model", "openai-chat/local-model", "--base-url", local.baseURL],
        {
          env: cleanEnv(home, { YOI_TRACE_STARTUP: "1" }),
          cwd: project,
          nodeArgs: ["--require", setFlag],
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(printPack(home)).equals(before)).toBe(true);
      const next = fromCache((await printRun(home, project)).stderr);
      expect(next).toEqual({ cached: next.loaded, loaded: next.loaded });
    }, 60_000);

    it("a run that says a V8 flag is about to change writes its pack first, and not again at exit", async () => {
      const { home, project } = await tempWorld();
      // What src/young-generation.ts does once the young generation is large: the event, then the flag.
      const setFlag = path.join(home, "announce-flag.cjs");
      writeFileSync(
        setFlag,
        'process.once("exit", () => { process.emit("yoi:before-v8-flags"); require("node:v8").setFlagsFromString("--semi-space-growth-factor=1"); });\n',
      );
      const server = await startScriptedServer({
        provider: "anthropic",
        script: [{ type: "reply", text: "ok" }],
      });
      servers.push(server);
      const r = await runYoi(
        ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
        {
          env: cleanEnv(home, { ANTHROPIC_API_KEY: "sk-test", YOI_TRACE_STARTUP: "1" }),
          cwd: project,
          nodeArgs: ["--require", setFlag],
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(fromCache(r.stderr).cached).toBe(0);
      // Written before the flag changed: the next start takes every cache in it.
      const next = fromCache((await printRun(home, project)).stderr);
      expect(next).toEqual({ cached: next.loaded, loaded: next.loaded });
    }, 60_000);

    it("a damaged or foreign cache in the pack is not used, and the pack is rewritten", async () => {
      const { home, project } = await tempWorld();
      await printRun(home, project);
      const file = printPack(home);
      // main.js's cache with one bit flipped (its CRC no longer matches)...
      const bytes = readFileSync(file);
      const main = parseCodePack(bytes)!.get("main.js")!.cache()!;
      const at = bytes.indexOf(main);
      bytes[at + main.length - 1]! ^= 1;
      writeFileSync(file, bytes);
      expect(parseCodePack(readFileSync(file))!.get("main.js")!.cache()).toBeUndefined();
      const damaged = fromCache((await printRun(home, project)).stderr);
      expect(damaged.cached).toBe(damaged.loaded - 1);
      // ...and another chunk carrying main.js's cache with a right CRC: V8 rejects it (another source).
      editPack(file, (chunks) => {
        const cache = chunks.find((c) => c.name === "main.js")!.cache;
        const other = chunks.find((c) => c.name !== "main.js" && c.name !== "startup-trace.js")!;
        return chunks.map((c) => (c === other ? { ...c, cache } : c));
      });
      const foreign = fromCache((await printRun(home, project)).stderr);
      expect(foreign.cached).toBeLessThan(foreign.loaded);
      const again = fromCache((await printRun(home, project)).stderr);
      expect(again.cached).toBe(again.loaded);
    }, 60_000);

    it("a pack that is cut short or not a pack is not used at all", () => {
      const chunk = (name: string, source: string) => ({
        name,
        size: 10,
        mtimeMs: 1.5,
        source,
        cache: Buffer.from(`v8 data of ${name}`),
      });
      const whole = encodeCodePack([
        { ...chunk("c.js", "(function(){return 'carried'})"), carried: true },
        chunk("a.js", "(function(){return 'a'})"),
        chunk("b.js", "(function(){})"),
      ]);
      const pack = parseCodePack(whole)!;
      // The carried chunk goes after the ones the writing run loaded (whose sources are decoded together).
      expect([...pack.keys()]).toEqual(["a.js", "b.js", "c.js"]);
      expect(pack.get("c.js")!.source()).toBe("(function(){return 'carried'})");
      expect(pack.get("b.js")).toMatchObject({ size: 10, mtimeMs: 1.5 });
      expect(pack.get("a.js")!.source()).toBe("(function(){return 'a'})");
      expect(pack.get("b.js")!.source()).toBe("(function(){})");
      expect(pack.get("b.js")!.cache()?.toString()).toBe("v8 data of b.js");
      for (let cut = 1; cut < whole.length - 10; cut += 5)
        expect(parseCodePack(whole.subarray(0, whole.length - cut))).toBeUndefined();
      expect(parseCodePack(Buffer.concat([whole, Buffer.from("x")]))).toBeUndefined();
      expect(parseCodePack(Buffer.from("yoipack3\nan older pack"))).toBeUndefined();
      // A flipped bit in the index (a name, an offset) is caught by the index's CRC.
      const flipped = Buffer.from(whole);
      flipped[20]! ^= 1;
      expect(parseCodePack(flipped)).toBeUndefined();
    });

    it("a pack's sources come back whole past the size the loader decodes at once", () => {
      // Three chunks of 600 KB: the shared sources are decoded a segment of about 1 MB at a time.
      const chunks = ["x", "y", "z"].map((c, i) => ({
        name: `${c}.js`,
        size: i,
        mtimeMs: i,
        source: `(function(){${c.repeat(600_000)}})`,
        cache: Buffer.from(c),
      }));
      const pack = parseCodePack(encodeCodePack(chunks))!;
      for (const c of [...chunks].reverse())
        expect(pack.get(c.name)!.source() === c.source, c.name).toBe(true);
    });

    it("a packed source is used only while its chunk file is the one it was read from", async () => {
      const { home, project } = await tempWorld();
      await printRun(home, project);
      // A pack whose main.js source says otherwise (as a pack of an edited install would).
      editPack(printPack(home), (chunks) =>
        chunks.map((c) =>
          c.name === "main.js"
            ? { ...c, mtimeMs: c.mtimeMs - 1000, source: "(function(){throw new Error('stale')})" }
            : c,
        ),
      );
      const r = await printRun(home, project);
      expect(r.stderr).not.toContain("stale");
      expect(fromCache(r.stderr).cached).toBeLessThan(fromCache(r.stderr).loaded);
      const again = fromCache((await printRun(home, project)).stderr);
      expect(again.cached).toBe(again.loaded);
    }, 60_000);

    it("are neither read nor written in a directory others can write to", async () => {
      const { home, project } = await tempWorld();
      await printRun(home, project);
      const dir = path.dirname(printPack(home));
      chmodSync(dir, 0o777);
      const before = statSync(printPack(home)).mtimeMs;
      const r = await printRun(home, project);
      expect(fromCache(r.stderr).cached).toBe(0);
      expect(statSync(printPack(home)).mtimeMs).toBe(before);
      chmodSync(dir, 0o700);
      const again = fromCache((await printRun(home, project)).stderr);
      expect(again.cached).toBe(again.loaded);
    }, 60_000);

    it("run without one when the cache directory cannot be written, or when NODE_DISABLE_COMPILE_CACHE is set", async () => {
      const { home, project } = await tempWorld();
      // A file where the cache directory would go: even root cannot make a directory under it.
      writeFileSync(path.join(home, "not-a-dir"), "");
      const blocked = await printRun(home, project, { XDG_CACHE_HOME: path.join(home, "not-a-dir") });
      expect(fromCache(blocked.stderr).cached).toBe(0);
      await printRun(home, project, { NODE_DISABLE_COMPILE_CACHE: "1" });
      expect(existsSync(codeDir(home))).toBe(false);
    }, 60_000);
  });

  it("downscales an oversized image in its worker thread (a file of the bundle's own)", async () => {
    expect(existsSync(path.join(OUT, "downscale-worker.js"))).toBe(true);
    const { home, project } = await tempWorld();
    writeFileSync(path.join(project, "wide.png"), redPng(9000, 20));
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [{ type: "reply", text: "a red strip" }],
    });
    servers.push(server);
    const r = await runBundle(
      ["-p", "what is @wide.png ?", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
      cleanEnv(home, { ANTHROPIC_API_KEY: "test-key" }),
      project,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("a red strip");
    expect(JSON.stringify(server.requests[0])).toMatch(
      /\[Image: wide\.png\] \(2048×5, image\/jpeg, .*downscaled from 9000×20/,
    );
  }, 60_000);
});

/** An RGB PNG of red pixels. */
function redPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, "ascii");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).fill(Buffer.from([255, 0, 0]))]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
