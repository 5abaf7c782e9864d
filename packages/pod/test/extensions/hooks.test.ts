import { readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item, messageText } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { type ConfigInput, ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import { Pod } from "../../src/pod.ts";
import { tempDir } from "../helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function setup(script: ScriptStep[], config: ConfigInput) {
  const s = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(s);
  const dir = await tempDir();
  const pod = await Pod.create({
    config: ConfigSchema.parse(config),
    cwd: dir,
    dataDir: path.join(dir, ".data"),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "k",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
  });
  pods.push(pod);
  const alerts: string[] = [];
  pod.alerts.subscribe((a) => alerts.push(`${a.level} ${a.source}: ${a.message}`));
  return { s, pod, dir, alerts };
}

function result(history: readonly Item[], callId: string) {
  const item = history.find((i) => i.type === "tool_result" && i.callId === callId);
  return item?.type === "tool_result" ? { output: item.output, isError: item.isError } : undefined;
}

const allowBash = { rules: [{ tool: "bash", action: "allow" as const }] };

describe("configured hooks", () => {
  it("PreToolUse: exit 2 blocks the matched tool with stderr as the reason; JSON can block; others run; input is JSON on stdin", async () => {
    const { pod, dir, alerts } = await setup(
      [
        {
          type: "reply",
          toolCalls: [
            { id: "b", name: "bash", arguments: { command: "rm -rf build" } },
            { id: "w", name: "write_file", arguments: { path: "x.txt", content: "x" } },
            { id: "r", name: "list_dir", arguments: { path: "." } },
          ],
        },
        { type: "reply", text: "ok" },
      ],
      {
        permissions: { rules: [...allowBash.rules, { tool: "write_file", action: "allow" }] },
        hooks: {
          PreToolUse: [
            {
              matcher: "bash",
              command: 'cat > "$YOI_PROJECT_DIR/pre.json"; echo "rm is not allowed here" >&2; exit 2',
            },
            { matcher: "write_*", command: `echo '{"decision":"block","reason":"read-only today"}'` },
            { matcher: "list_dir", command: `echo '{"additionalContext":"build/ is generated"}'` },
          ],
        },
      },
    );
    await pod.run("clean up");
    expect(result(pod.history, "b")).toEqual({
      output: "Blocked by a PreToolUse hook: rm is not allowed here",
      isError: true,
    });
    expect(result(pod.history, "w")).toEqual({
      output: "Blocked by a PreToolUse hook: read-only today",
      isError: true,
    });
    expect(result(pod.history, "r")?.isError).toBe(false);
    expect(result(pod.history, "r")?.output).toMatch(/\n\n\[hook context\] build\/ is generated$/);
    const input = JSON.parse(await readFile(path.join(dir, "pre.json"), "utf8"));
    expect(input).toMatchObject({
      hook_event_name: "PreToolUse",
      session_id: pod.id,
      cwd: dir,
      tool_name: "bash",
      tool_input: { command: "rm -rf build" },
      tool_call_id: "b",
    });
    await expect(readFile(path.join(dir, "x.txt"), "utf8")).rejects.toThrow();
    expect(alerts).toContain("warn hooks: PreToolUse hook blocked bash: rm is not allowed here");
  }, 60_000);

  it("UserPromptSubmit adds context or blocks; SessionStart context reaches the first prompt", async () => {
    const { pod, s, alerts } = await setup([{ type: "reply", text: "fine" }], {
      hooks: {
        SessionStart: [{ command: "echo 'this project uses pnpm'" }],
        UserPromptSubmit: [
          {
            command:
              'input=$(cat); case "$input" in *forbidden*) echo \'{"decision":"block","reason":"no secrets please"}\';; *) echo "today is a holiday";; esac',
          },
        ],
      },
    });
    await pod.run("hello");
    const texts = pod.history.map((i) => (i.type === "message" ? `${i.role}:${messageText(i)}` : i.type));
    expect(texts.slice(0, 3)).toEqual([
      "user:hello",
      "system:[SessionStart hook context]\nthis project uses pnpm",
      "system:[UserPromptSubmit hook context]\ntoday is a holiday",
    ]);
    expect(JSON.stringify(s.requests[0])).toContain("today is a holiday");
    const blocked = await pod.run("tell me the forbidden thing");
    expect(blocked.status).toBe("cancelled");
    expect(s.requests).toHaveLength(1);
    expect(alerts).toContain("warn hooks: UserPromptSubmit hook blocked the prompt: no secrets please");
  }, 60_000);

  it("PostToolUse and Stop observe; a failing or hanging hook is reported and the turn goes on", async () => {
    const { pod, dir, alerts } = await setup(
      [
        { type: "reply", toolCalls: [{ id: "l", name: "list_dir", arguments: { path: "." } }] },
        { type: "reply", text: "done" },
      ],
      {
        hooks: {
          PostToolUse: [
            { command: 'cat > "$YOI_PROJECT_DIR/post.json"' },
            { command: "echo 'linter crashed' >&2; exit 1" },
          ],
          Stop: [{ command: 'cat > "$YOI_PROJECT_DIR/stop.json"' }, { command: "sleep 30", timeoutMs: 300 }],
        },
      },
    );
    await writeFile(path.join(dir, "a.txt"), "a");
    const started = Date.now();
    const run = await pod.run("look");
    expect(run.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(20_000);
    const post = JSON.parse(await readFile(path.join(dir, "post.json"), "utf8"));
    expect(post).toMatchObject({ hook_event_name: "PostToolUse", tool_name: "list_dir" });
    expect(post.tool_response.output).toContain("a.txt");
    expect(JSON.parse(await readFile(path.join(dir, "stop.json"), "utf8"))).toMatchObject({
      hook_event_name: "Stop",
      stop_reason: "end_turn",
    });
    expect(alerts).toContain(
      "error hooks: PostToolUse hook `echo 'linter crashed' >&2; exit 1` exited with 1: linter crashed; the run goes on without it",
    );
    expect(alerts).toContain(
      "error hooks: Stop hook `sleep 30` timed out after 300 ms and was killed; the run goes on without it",
    );
  }, 60_000);

  it("a hook never sees the API keys the config names", async () => {
    process.env.YOI_TEST_SECRET_KEY = "sk-very-secret";
    try {
      const { pod, dir } = await setup([{ type: "reply", text: "ok" }], {
        providers: { anthropic: { apiKeyEnv: "YOI_TEST_SECRET_KEY" } },
        hooks: { UserPromptSubmit: [{ command: 'env > "$YOI_PROJECT_DIR/env.txt"' }] },
      });
      await pod.run("hi");
      const env = await readFile(path.join(dir, "env.txt"), "utf8");
      expect(env).toContain("YOI_HOOK_EVENT=UserPromptSubmit");
      expect(env).not.toContain("sk-very-secret");
    } finally {
      delete process.env.YOI_TEST_SECRET_KEY;
    }
  }, 60_000);
});
