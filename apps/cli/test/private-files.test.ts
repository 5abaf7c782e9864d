/**
 * yoi's own private files stay private when a session's scope holds them
 * (yoi started in the home directory): the saved keys, the prompt history
 * and the session store, and the home's credential stores (ssh keys, cloud
 * tokens), are opened by no tool, sandboxed bash included, so nothing of
 * them reaches the model; and every saved key, not only the one in use, is
 * masked in what yoi prints and records.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { type ScriptedServer, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, runYoi, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const OTHER_KEY = "sk-proj-saved-other-provider-7c1e9a";
const PLAIN_KEY = "plain-saved-token-41bd77";
const HISTORY_MARK = "typed-in-another-project-5e2f";
const SESSION_MARK = "said-in-another-session-93aa";
const SSH_KEY = "ssh-private-key-body-0f3c";
const AWS_KEY = "aws-secret-access-key-62d0";

async function homeWithPrivateFiles(home: string): Promise<void> {
  const yoi = path.join(home, ".yoi");
  await mkdir(path.join(yoi, "sessions"), { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(yoi, "credentials.json"),
    JSON.stringify({ keys: { OPENAI_API_KEY: OTHER_KEY, GW_TOKEN: PLAIN_KEY } }),
    { mode: 0o600 },
  );
  await writeFile(path.join(yoi, "history"), `${JSON.stringify({ text: HISTORY_MARK })}\n`);
  await writeFile(path.join(yoi, "sessions", "earlier.jsonl"), `{"text":"${SESSION_MARK}"}\n`);
  await mkdir(path.join(home, ".ssh"), { mode: 0o700 });
  await writeFile(
    path.join(home, ".ssh", "id_ed25519"),
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${SSH_KEY}\n`,
    {
      mode: 0o600,
    },
  );
  await mkdir(path.join(home, ".aws"));
  await writeFile(path.join(home, ".aws", "credentials"), `[default]\naws_secret_access_key = ${AWS_KEY}\n`);
  await writeFile(path.join(home, "notes.txt"), "ordinary file\n");
}

/** Each call a model could make to read them, by every tool that reads. */
const ATTEMPTS: { name: string; arguments: Record<string, unknown> }[] = [
  { name: "read_file", arguments: { path: ".yoi/credentials.json" } },
  { name: "read_file", arguments: { path: ".yoi/history" } },
  { name: "read_file", arguments: { path: ".yoi/sessions/earlier.jsonl" } },
  { name: "read_file", arguments: { path: "./.yoi/../.yoi/credentials.json" } },
  { name: "list_dir", arguments: { path: ".yoi/sessions" } },
  { name: "list_dir", arguments: { path: "." } },
  { name: "read_file", arguments: { path: ".ssh/id_ed25519" } },
  { name: "read_file", arguments: { path: ".aws/credentials" } },
  { name: "grep", arguments: { pattern: "PRIVATE KEY|aws_secret", path: "." } },
  { name: "grep", arguments: { pattern: "saved|typed-in|said-in", path: "." } },
  { name: "grep", arguments: { pattern: "sk-proj", path: ".yoi" } },
  { name: "glob", arguments: { pattern: ".yoi/**" } },
  {
    name: "bash",
    arguments: {
      command:
        "cat .yoi/credentials.json .yoi/history .yoi/sessions/* .ssh/id_ed25519 .aws/credentials; grep -rao 'saved-[a-z0-9-]*' ~/.yoi; tar c .yoi .ssh .aws 2>/dev/null | grep -ao '[a-z]*-[a-z-]*-[0-9a-f]\\{4\\}'; cp .yoi/credentials.json leaked.txt; cat leaked.txt; true",
    },
  },
];

describe("yoi's private files in a session started in the home directory", () => {
  it("no tool reads the saved keys, the prompt history, other sessions or ssh and cloud keys (tried / leaked)", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: (index) =>
        index === 0
          ? {
              type: "reply",
              toolCalls: ATTEMPTS.map((call, i) => ({ id: `t${i}`, ...call })),
            }
          : { type: "reply", text: "done" },
    });
    servers.push(server);
    const { home } = await tempWorld();
    await homeWithPrivateFiles(home);
    const result = await runYoi(
      [
        "-p",
        "look around",
        "--model",
        "anthropic/claude-haiku-4-5",
        "--base-url",
        server.baseURL,
        // Sandboxed bash runs every command without asking: the sandbox alone must hold.
        "--permission-mode",
        "bypassPermissions",
      ],
      { cwd: home, env: cleanEnv(home, { ANTHROPIC_API_KEY: "sk-ant-env-key-0a1b2c" }) },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    const results = JSON.stringify((server.requests[1] as { messages: unknown }).messages);
    const leaked = [OTHER_KEY, PLAIN_KEY, HISTORY_MARK, SESSION_MARK, SSH_KEY, AWS_KEY].filter((m) =>
      results.includes(m),
    );
    console.log(`private files: ${ATTEMPTS.length} tool calls tried, ${leaked.length} secrets leaked`);
    expect(leaked).toEqual([]);
    // The tools say why, and ordinary files of the home are still there to read.
    expect(results).toContain(".yoi/credentials.json is private: this session's tools cannot open it");
    expect(results).toContain("notes.txt");
    // Every result is in the request itself (none stored aside, where the check above would not look).
    expect(results).not.toContain("[blob:");
    // What bash copied is empty, and the files themselves are untouched.
    expect(await readFile(path.join(home, "leaked.txt"), "utf8").catch(() => "")).not.toContain(OTHER_KEY);
    expect(await readFile(path.join(home, ".yoi", "credentials.json"), "utf8")).toContain(OTHER_KEY);
  });

  it("every saved key is masked in the answer and the session log, not only the provider's in use", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "reply", text: `keys: ${OTHER_KEY} and ${PLAIN_KEY}`, options: { chunkSize: 1000 } }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    await homeWithPrivateFiles(home);
    const result = await runYoi(
      ["-p", "hi", "--model", "anthropic/claude-haiku-4-5", "--base-url", server.baseURL],
      { cwd: project, env: cleanEnv(home, { ANTHROPIC_API_KEY: "sk-ant-env-key-0a1b2c" }) },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("keys: <redacted> and <redacted>");
    const sessions = path.join(home, ".yoi", "sessions");
    const logs = (await readdir(sessions)).filter((f) => f !== "earlier.jsonl");
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) {
      const text = await readFile(path.join(sessions, log), "utf8");
      expect(text).not.toContain(OTHER_KEY);
      expect(text).not.toContain(PLAIN_KEY);
    }
  });
});
