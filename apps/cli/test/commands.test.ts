import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, FIXTURES, jsonLines, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("help on one command", () => {
  it("yoi <command> --help and yoi help <command> show that command's usage and the options it takes", async () => {
    const { home } = await tempWorld();
    const serve = await runYoi(["serve", "--help"], { env: cleanEnv(home) });
    expect(serve.code).toBe(0);
    expect(serve.stdout).toMatch(/^Usage:\n {2}yoi serve \[--port 8080\]/);
    expect(serve.stdout).toContain("--permission-mode <mode>");
    // Only serve's: no other command's usage, no option it does not take.
    expect(serve.stdout).not.toContain("yoi sessions");
    expect(serve.stdout).not.toContain("--output <format>");
    expect(serve.stdout).toMatch(/yoi --help lists every command\.\n$/);
    const sessions = await runYoi(["help", "sessions"], { env: cleanEnv(home) });
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toContain("yoi sessions [--all]");
    expect(sessions.stdout).toContain("-C, --cwd <dir>");
    expect(sessions.stdout).not.toContain("--permission-mode");
    const unknown = await runYoi(["help", "nosuch"], { env: cleanEnv(home) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('yoi: no command "nosuch" (yoi --help lists them)\n');
    expect(unknown.stdout).toBe("");
  });
});

describe("yoi demo", () => {
  it("runs offline with no key: says the replies are scripted, stores and inspects a large output, compacts", async () => {
    const { home } = await tempWorld();
    const r = await runYoi(["demo"], { env: cleanEnv(home) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toContain("the model's replies are scripted");
    expect(r.stdout).toContain("› Read @README.md");
    // three tools in one batch
    expect(r.stdout).toMatch(/✓ list_dir src[\s\S]*✓ (grep|bash)[\s\S]*✓ (grep|bash)/);
    expect(r.stdout).toMatch(/✓ bash cat logs\/server\.log .*→ blob [0-9a-f-]{36}/);
    expect(r.stdout).toMatch(/✓ inspect [0-9a-f-]{36} lines:216-218/);
    expect(r.stdout).toContain("ERROR orders: total() got qty=-3");
    expect(r.stdout).toContain("⟳ compacted the conversation");
    expect(r.stdout).toContain("re-attached after compaction: README.md");
    expect(r.stdout).toContain("From the summary: make total() reject negative quantities first");
    expect(r.stdout).toContain("each one valid for the real API");
    // no colour and no spinners in a pipe
    expect(r.stdout).not.toContain("\x1b[");
  });
});

describe("yoi debug replay", () => {
  it("prints the normalized events of a recorded stream as JSON lines", async () => {
    const { home } = await tempWorld();
    const file = path.join(FIXTURES, "openai-chat", "xai-tool-call.chunks.txt");
    const r = await runYoi(["debug", "replay", "--provider", "openai-chat", file], { env: cleanEnv(home) });
    expect(r.code).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events[0]).toMatchObject({ type: "status", status: "started" });
    expect(events.some((e) => e.type === "block_start" && e.block === "tool_use")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed", stopReason: "tool_use" });
  });

  it("a missing file or a bad provider is bad usage", async () => {
    const { home } = await tempWorld();
    const missing = await runYoi(["debug", "replay", "--provider", "gemini", "/nope.txt"], {
      env: cleanEnv(home),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("yoi: /nope.txt: no such file\n");
    const bad = await runYoi(["debug", "replay", "--provider", "cohere", "x"], { env: cleanEnv(home) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "--provider must be one of anthropic, openai-chat, openai-responses, gemini",
    );
  });
});

describe("sessions, inspect, config", () => {
  it("a -p run shows up in yoi sessions; its stored output reads back with yoi inspect", async () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of the build log`).join("\n");
    const server = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [
        {
          type: "reply",
          toolCalls: [{ id: "toolu_b", name: "bash", arguments: { command: "cat build.log" } }],
        },
        { type: "reply", text: "Done." },
      ],
    });
    servers.push(server);
    const { home, project } = await tempWorld({
      "build.log": `${big}\n`,
      ".yoi/config.jsonc":
        '{ "permissions": { "rules": [{ "tool": "bash", "match": "cat *", "action": "allow" }] } }',
    });
    // the project's own rule allowing `cat` applies to a trusted project only
    const env = cleanEnv(home, {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: server.baseURL,
      YOI_TRUST_PROJECT: "1",
    });
    const run = await runYoi(
      ["-p", "-o", "stream-json", "-m", "anthropic/claude-haiku-4-5", "show the build log"],
      {
        cwd: project,
        env,
      },
    );
    expect(run.code).toBe(0);
    const end = jsonLines(run.stdout).find((e) => e.type === "tool_end");
    const blob = String(end?.blob_id);
    expect(blob).toMatch(/^[0-9a-f-]{36}$/);

    const inspected = await runYoi(["inspect", blob, "lines:1500-1502"], { cwd: project, env });
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain("line 1500 of the build log");
    expect(inspected.stdout).toContain("line 1502 of the build log");
    expect(inspected.stdout).not.toContain("line 1503 of the build log");

    const missing = await runYoi(["inspect", "01a2011b-0000-7000-8000-000000000000"], { cwd: project, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("No stored output has id 01a2011b-0000-7000-8000-000000000000");

    const listed = await runYoi(["sessions"], { cwd: project, env });
    expect(listed.code).toBe(0);
    const [head, row] = listed.stdout.trim().split("\n");
    expect(head).toMatch(/^id\s+title\s+updated\s+model\s+size$/);
    // a short id: the shortest prefix that tells sessions apart (at least 8 characters)
    expect(row).toMatch(/^[0-9a-f]{8}[0-9a-f-]*\s+show the build log\s+\d+s ago\s+claude-haiku-4-5\s+\d/);

    const elsewhere = await runYoi(["sessions"], { cwd: home, env });
    expect(elsewhere.stdout).toContain("(1 elsewhere: yoi sessions --all)");
  });

  it("yoi config names the source of each value: file, env, flag, default", async () => {
    const { home, project } = await tempWorld({ ".yoi/config.jsonc": '{ "worker": { "maxTurns": 7 } }' });
    const r = await runYoi(
      ["config", "--model", "openai-chat/llama3.1", "--base-url", "http://127.0.0.1:11434/v1"],
      {
        cwd: project,
        env: cleanEnv(home, { YOI_MAX_TOKENS: "4096", OPENAI_API_KEY: "sk-should-never-show" }),
      },
    );
    expect(r.code).toBe(0);
    const row = (key: string) => r.stdout.split("\n").find((l) => l.startsWith(`${key} `)) ?? "";
    expect(row("worker.maxTurns")).toMatch(/7\s+.*project\/\.yoi\/config\.jsonc$/);
    expect(row("worker.maxTokens")).toMatch(/4096\s+env:YOI_MAX_TOKENS$/);
    expect(row("model")).toMatch(/"openai-chat\/llama3\.1"\s+flag:--model$/);
    expect(row("providers.openai-chat.baseURL")).toMatch(/flag:--base-url$/);
    expect(row("worker.toolTimeoutMs")).toMatch(/default$/);
    expect(r.stdout).not.toContain("sk-should-never-show");
  });
});
