import { mkdir, readFile, realpath } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, jsonLines, runYoi, tempWorld } from "./helpers.ts";

type Kind = "anthropic" | "openai-responses" | "openai-chat" | "gemini";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** How each provider is selected: the usual variables, or --base-url alone for a compatible server. */
function providerSetup(kind: Kind, baseURL: string): { args: string[]; env: Record<string, string> } {
  switch (kind) {
    case "anthropic":
      return {
        args: ["--model", "anthropic/claude-haiku-4-5"],
        env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: baseURL },
      };
    case "openai-responses":
      return {
        args: ["--model", "openai/gpt-5-mini"],
        env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: baseURL },
      };
    case "openai-chat":
      // A local OpenAI-compatible server: a base URL, no key.
      return { args: ["--model", "openai-chat/gpt-4.1-mini", "--base-url", baseURL], env: {} };
    case "gemini":
      return {
        args: ["--model", "gemini/gemini-2.5-flash"],
        env: { GEMINI_API_KEY: "test-key", GOOGLE_GEMINI_BASE_URL: baseURL },
      };
  }
}

const SCRIPT: ScriptStep[] = [
  {
    type: "reply",
    text: "Let me look.",
    toolCalls: [
      { id: "call_read", name: "read_file", arguments: { path: "notes/a.txt" } },
      { id: "call_list", name: "list_dir", arguments: { path: "." } },
    ],
  },
  { type: "reply", text: "The note says hello.", options: { usage: { inputTokens: 900, outputTokens: 12 } } },
];

async function session(kind: Kind, output: string) {
  const server = await startScriptedServer({ provider: kind, script: SCRIPT, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
  const setup = providerSetup(kind, server.baseURL);
  const result = await runYoi(["-p", "--output", output, ...setup.args, "summarize @notes/a.txt"], {
    cwd: project,
    env: cleanEnv(home, setup.env),
  });
  return { result, server };
}

describe("yoi -p against the scripted server", () => {
  for (const kind of ["anthropic", "openai-responses", "openai-chat", "gemini"] as const) {
    describe(kind, () => {
      it("--output text prints the answer only", async () => {
        const { result, server } = await session(kind, "text");
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(result.stdout).toBe("The note says hello.\n");
        expect(server.rejections).toEqual([]);
        expect(server.requests).toHaveLength(2);
        // the @file went to the model as a [File: ...] system message
        expect(JSON.stringify(server.requests[0])).toContain("[File: notes/a.txt]");
        expect(JSON.stringify(server.requests[1])).toContain("hello from a");
      });

      it("--output json prints one result object", async () => {
        const { result } = await session(kind, "json");
        expect(result.code).toBe(0);
        const lines = jsonLines(result.stdout);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({
          type: "result",
          status: "completed",
          text: "The note says hello.",
          turns: 2,
        });
        expect(typeof lines[0]?.session_id).toBe("string");
      });

      it("--output stream-json prints one event a line: session, tools, usage, result", async () => {
        const { result } = await session(kind, "stream-json");
        expect(result.code).toBe(0);
        const events = jsonLines(result.stdout);
        expect(events[0]).toMatchObject({
          type: "session",
          resumed: false,
          provider: kind === "openai-responses" ? "openai" : kind,
        });
        const types = events.map((e) => e.type);
        expect(types.filter((t) => t === "tool_start")).toHaveLength(2);
        expect(types.filter((t) => t === "tool_end")).toHaveLength(2);
        expect(types).toContain("usage");
        expect(types).toContain("turn_end");
        const text = events
          .filter((e) => e.type === "text")
          .map((e) => e.text)
          .join("");
        expect(text).toBe("Let me look.The note says hello.");
        const read = events.find((e) => e.type === "tool_end" && e.name === "read_file");
        expect(read).toMatchObject({ is_error: false });
        // Gemini has no call ids on the wire; llm-client makes unique ones.
        if (kind !== "gemini") expect(read?.id).toBe("call_read");
        expect(String(read?.preview)).toContain("hello from a");
        expect(events.at(-1)).toMatchObject({
          type: "result",
          status: "completed",
          text: "The note says hello.",
        });
      });
    });
  }

  it("a call refused because print mode cannot ask is said once, with the flag that allows it", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
        },
        { type: "reply", text: "Could not write it." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({});
    const result = await runYoi(["-p", "-m", "anthropic/claude-haiku-4-5", "write x.txt"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Could not write it.\n");
    expect(result.stderr.split("\n").filter((l) => l.includes("denied"))).toEqual([
      'yoi: denied write_file: x.txt (print mode cannot ask; allow it in .yoi/config.jsonc "permissions" or with --allow-tool)',
    ]);
  });

  it("reads the prompt from stdin when it is not a terminal (no -p needed)", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: "From stdin." }],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "notes/a.txt": "hello from a\n" });
    const result = await runYoi(["-m", "anthropic/claude-haiku-4-5"], {
      cwd: project,
      env: cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL }),
      input: "what is in @notes/a.txt?\n",
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("From stdin.\n");
    expect(JSON.stringify(server.requests[0])).toContain("what is in [unresolved file ref: notes/a.txt]?");
    expect(JSON.stringify(server.requests[0])).toContain("hello from a");
  });

  it("sends a prompt that is a subcommand's name with -p or after --", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "One." },
        { type: "reply", text: "Two." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({});
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const printed = await runYoi(["-m", "anthropic/claude-haiku-4-5", "-p", "sessions"], {
      cwd: project,
      env,
    });
    expect(printed.stdout).toBe("One.\n");
    // Without -p the answer is printed too (stdout is not a terminal); `--` makes the word a prompt.
    const piped = await runYoi(["-m", "anthropic/claude-haiku-4-5", "--", "config"], {
      cwd: project,
      env,
      input: "",
    });
    expect(piped.stdout).toBe("Two.\n");
    const said = (server.requests as { messages: { content: { text?: string }[] }[] }[]).map(
      (r) => r.messages[0]?.content[0]?.text,
    );
    expect(said).toEqual(["sessions", "config"]);
    // Options first and the word alone: the subcommand, and the error says how to send the prompt.
    const refused = await runYoi(["-m", "anthropic/claude-haiku-4-5", "sessions"], { cwd: project, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('for the prompt "sessions", put -- before it');
  });

  it("--max-turns stops a run after that many model calls, over the config, and -c goes on", async () => {
    const list = (id: string) => ({
      type: "reply" as const,
      toolCalls: [{ id, name: "list_dir", arguments: { path: "." } }],
    });
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [list("c1"), list("c2"), list("c3"), { type: "reply", text: "Listed." }],
    });
    servers.push(server);
    // The project's config allows far more; the flag wins.
    const { home, project } = await tempWorld({ ".yoi/config.jsonc": '{ "worker": { "maxTurns": 40 } }' });
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const model = ["-m", "anthropic/claude-haiku-4-5"];
    const stopped = await runYoi(["-p", ...model, "--max-turns", "2", "list it"], { cwd: project, env });
    expect(stopped.code).toBe(1);
    expect(server.requests).toHaveLength(2);
    expect(stopped.stderr).toContain(
      "stopped after 2 model calls (the most one prompt may take: --max-turns",
    );
    expect(stopped.stderr).toContain("continue with yoi -c");
    const shown = await runYoi(["config", "--max-turns", "2"], { cwd: project, env });
    expect(shown.stdout).toMatch(/worker\.maxTurns\s+2\s+flag:--max-turns/);
    const resumed = await runYoi(["-p", ...model, "-c", "go on"], { cwd: project, env });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("Listed.\n");
    for (const bad of ["0", "-3", "two", "2.5", ""]) {
      const r = await runYoi(["-p", ...model, `--max-turns=${bad}`, "hi"], { cwd: project, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `yoi: --max-turns must be a whole number of model calls, 1 or more (e.g. --max-turns 10); got "${bad}"\n`,
      );
    }
    expect(server.requests).toHaveLength(4);
  });

  it("--append-system-prompt adds to the system prompt of that run only", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "Bonjour." },
        { type: "reply", text: "Hello." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({ "AGENTS.md": "Project rule: be brief.\n" });
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const model = ["-m", "anthropic/claude-haiku-4-5"];
    const first = await runYoi(["-p", ...model, "--append-system-prompt", "Answer in French.", "hi"], {
      cwd: project,
      env,
    });
    expect(first).toMatchObject({ code: 0, stdout: "Bonjour.\n" });
    const system = (i: number) => JSON.stringify((server.requests[i] as { system?: unknown }).system ?? "");
    // After yoi's own prompt, before the project's instructions.
    expect(system(0)).toMatch(/You are yoi[\s\S]*Answer in French\.[\s\S]*Project rule: be brief\./);
    const again = await runYoi(["-p", ...model, "-c", "and now?"], { cwd: project, env });
    expect(again).toMatchObject({ code: 0, stdout: "Hello.\n" });
    expect(system(1)).not.toContain("Answer in French.");
    expect(system(1)).toContain("Project rule: be brief.");
    const blank = await runYoi(["-p", ...model, "--append-system-prompt", " ", "hi"], { cwd: project, env });
    expect(blank.code).toBe(2);
    expect(blank.stderr).toBe(
      'yoi: --append-system-prompt needs the text to add, e.g. --append-system-prompt "Answer in French."\n',
    );
  });

  it("--add-dir lets the session write in another directory, and tells the model", async () => {
    const write = (id: string) => ({
      type: "reply" as const,
      toolCalls: [{ id, name: "write_file", arguments: { path: "", content: "shared\n" } }],
    });
    const { home, project } = await tempWorld({});
    const other = path.join(path.dirname(project), "shared-lib");
    await mkdir(other);
    const target = path.join(other, "notes.md");
    const calls = [write("w1"), write("w2")];
    for (const c of calls) c.toolCalls[0]!.arguments.path = target;
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        calls[0]!,
        { type: "reply", text: "Refused." },
        calls[1]!,
        { type: "reply", text: "Written." },
      ],
    });
    servers.push(server);
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const args = ["-p", "-m", "anthropic/claude-haiku-4-5", "--allow-tool", "write_file"];
    // Without the flag the directory is outside the scope.
    const without = await runYoi([...args, "write it"], { cwd: project, env });
    expect(without).toMatchObject({ code: 0, stdout: "Refused.\n" });
    expect(JSON.stringify(server.requests[1])).toMatch(/outside/);
    await expect(readFile(target, "utf8")).rejects.toThrow();
    const withDir = await runYoi([...args, "--add-dir", "../shared-lib", "write it"], { cwd: project, env });
    expect(withDir).toMatchObject({ code: 0, stdout: "Written.\n" });
    expect(await readFile(target, "utf8")).toBe("shared\n");
    const system = JSON.stringify((server.requests[2] as { system?: unknown }).system);
    expect(system).toContain(`Also readable and writable (by absolute path): ${other}.`);
    const shown = await runYoi(["config", "--add-dir", "../shared-lib"], { cwd: project, env });
    expect(shown.stdout).toMatch(/scope\.writeRoots\s+.*shared-lib.*flag:--add-dir/);
    // Relative to where yoi was started, as the shell gave it, with -C too.
    const fromParent = await runYoi(["config", "-C", "project", "--add-dir", "shared-lib"], {
      cwd: path.dirname(project),
      env,
    });
    expect(fromParent.stdout).toContain(other);
    const missing = await runYoi([...args, "--add-dir", "../nope", "hi"], { cwd: project, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `yoi: --add-dir: ${path.join(path.dirname(project), "nope")} is not a directory\n`,
    );
  });

  it("started in the home directory, it warns once that the whole home is in reach; in a project it does not", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "Home." },
        { type: "reply", text: "Project." },
        { type: "reply", text: "Added." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({});
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.baseURL });
    const args = ["-p", "-m", "anthropic/claude-haiku-4-5", "hi"];
    const inHome = await runYoi(args, { cwd: home, env });
    expect(inHome).toMatchObject({ code: 0, stdout: "Home.\n" });
    const warnings = inHome.stderr.split("\n").filter((l) => l.includes("your home directory"));
    expect(warnings).toEqual([
      `yoi: warn: yoi may change files anywhere in your home directory (${await realpath(home)}): each change asks first unless a rule or mode allows it, and only the start-up, ssh, git and PATH files yoi knows of are protected. For a project, start yoi in its folder (or pass -C <dir>).`,
    ]);
    const inProject = await runYoi(args, { cwd: project, env });
    expect(inProject).toMatchObject({ code: 0, stdout: "Project.\n" });
    expect(inProject.stderr).not.toContain("home directory");
    // Given with --add-dir, the advice is about the flag.
    const added = await runYoi([...args.slice(0, -1), "--add-dir", home, "hi"], { cwd: project, env });
    expect(added.stderr).toContain(
      "only the start-up, ssh, git and PATH files yoi knows of are protected. Unless that is what you want, leave it out of --add-dir and scope.writeRoots.",
    );
  });
});
