import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item, messageText } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema } from "@yoi/manifest";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import type { Alert } from "../src/events/alerts.ts";
import type { PodEvent } from "../src/events/pod-events.ts";
import type { PermissionDecision, PermissionRequest } from "../src/permissions/index.ts";
import { Pod } from "../src/pod.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];

afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function server(script: ScriptStep[]): Promise<ScriptedServer> {
  const s = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(s);
  return s;
}

function client(s: ScriptedServer) {
  return createClient({
    provider: "anthropic",
    model: "claude-haiku-4-5",
    apiKey: "test-key",
    baseURL: s.baseURL,
    retry: { maxAttempts: 1 },
  });
}

function textOf(item: Item | undefined): string {
  return item?.type === "message" ? messageText(item) : "";
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Everything one request sent, as a string to search. */
function sent(s: ScriptedServer, index: number): string {
  return JSON.stringify(s.requests[index]);
}

describe("pod end to end (scripted Anthropic server)", () => {
  it("@file submit, read/grep/edit tools, a permission denial, a cancel, and a restore from the log", async () => {
    const base = await tempDir();
    const root = path.join(base, "project");
    const dataDir = path.join(base, "data");
    await mkdir(path.join(root, "src"), { recursive: true });
    await writeFile(path.join(root, "src", "greet.ts"), 'export function greet() {\n  return "hello";\n}\n');
    await writeFile(path.join(root, "README.md"), "# Demo\nSay hello.\n");

    const s = await server([
      // 1: read and grep in one batch
      {
        type: "reply",
        toolCalls: [
          { id: "toolu_read", name: "read_file", arguments: { path: "src/greet.ts" } },
          { id: "toolu_grep", name: "grep", arguments: { pattern: "hello" } },
        ],
      },
      // 2: edit (the UI allows it)
      {
        type: "reply",
        toolCalls: [
          {
            id: "toolu_edit",
            name: "edit_file",
            arguments: { path: "src/greet.ts", old_string: '"hello"', new_string: '"hello, world"' },
          },
        ],
      },
      // 3: bash (the UI denies it)
      {
        type: "reply",
        toolCalls: [{ id: "toolu_bash", name: "bash", arguments: { command: "rm -rf src" } }],
      },
      // 4: done
      { type: "reply", text: "Updated greet() to say hello, world." },
      // second submit: a long command, cancelled while it runs
      {
        type: "reply",
        toolCalls: [
          { id: "toolu_sleep", name: "bash", arguments: { command: "echo $$ > slow.pid; sleep 30" } },
        ],
      },
      // after restore
      { type: "reply", text: "Still here." },
    ]);

    const questions: PermissionRequest[] = [];
    const answers: PermissionDecision[] = ["allow", "deny"];
    const events: PodEvent[] = [];
    const alerts: Alert[] = [];
    const config = ConfigSchema.parse({
      permissions: {
        rules: [
          { tool: "bash", match: "sleep *", action: "allow" },
          { tool: "bash", match: "echo *", action: "allow" },
          // The redirection is a write, decided like write_file.
          { tool: "write_file", match: "*.pid", action: "allow" },
        ],
      },
      // The test reads the shell's PID from outside: unsandboxed, so it is a host PID (sandbox.test.ts covers bwrap).
      sandbox: false,
    });
    const pod = await Pod.create({
      config,
      cwd: root,
      dataDir,
      client: client(s),
      fsync: "never",
      ask: async (request) => {
        questions.push(request);
        return answers.shift() ?? "deny";
      },
    });
    pods.push(pod);
    pod.subscribe((e) => {
      events.push(e);
      if (e.type === "alert") alerts.push(e.alert);
    });

    const result = await pod.run("Make @src/greet.ts say hello, world (see @missing.ts).");
    expect(result.status).toBe("completed");

    // The user message (placeholders), then one system message per resolved ref.
    const history = pod.history;
    expect(history[0]).toEqual({
      type: "message",
      role: "user",
      content: [
        {
          type: "text",
          text: "Make [unresolved file ref: src/greet.ts] say hello, world (see [unresolved file ref: missing.ts]).",
        },
      ],
    });
    expect(history[1]).toMatchObject({ type: "message", role: "system" });
    expect(textOf(history[1])).toBe(
      '[File: src/greet.ts]\nexport function greet() {\n  return "hello";\n}\n',
    );
    expect(history[2]?.type).toBe("tool_call");
    // The failed ref raised one warn alert and no system message.
    expect(alerts.filter((a) => a.source === "file_ref")).toEqual([
      expect.objectContaining({
        level: "warn",
        message:
          "@missing.ts was not attached: missing.ts: no such file or directory; to send it as text, write \\@missing.ts",
      }),
    ]);
    expect(history.filter((i) => i.type === "message" && i.role === "system")).toHaveLength(1);
    // The model saw the file body in its first request.
    expect(sent(s, 0)).toContain("[File: src/greet.ts]");

    // Tool results: read and grep ran, edit changed the file, bash was denied.
    const results = history.filter((i) => i.type === "tool_result");
    const byId = new Map(results.map((r) => [r.type === "tool_result" ? r.callId : "", r]));
    expect(byId.get("toolu_read")).toMatchObject({
      isError: false,
      output: expect.stringContaining('     2\t  return "hello";'),
    });
    expect(byId.get("toolu_grep")).toMatchObject({
      output: expect.stringContaining('src/greet.ts:2:  return "hello";'),
    });
    expect(byId.get("toolu_edit")).toMatchObject({
      isError: false,
      output: expect.stringMatching(/^Edited src\/greet.ts/),
    });
    expect(await readFile(path.join(root, "src", "greet.ts"), "utf8")).toContain('"hello, world"');
    expect(byId.get("toolu_bash")).toMatchObject({
      isError: true,
      output: expect.stringContaining("Permission denied: the user declined bash (rm -rf src)"),
    });
    expect(questions.map((q) => q.summary)).toEqual(["edit_file: src/greet.ts", "bash: rm -rf src"]);
    expect(events.some((e) => e.type === "permission_request")).toBe(true);
    expect(s.rejections).toEqual([]);

    // A cancel while a command runs: the run ends cancelled and the command is killed.
    const started = new Promise<void>((resolve) => {
      const off = pod.subscribe((e) => {
        if (e.type === "tool_call_start" && e.name === "bash") {
          off();
          resolve();
        }
      });
    });
    const second = pod.run("Now run the slow check.");
    await started;
    const pidFile = path.join(root, "slow.pid");
    await expect
      .poll(async () => (await readFile(pidFile, "utf8").catch(() => "")).trim() !== "", { timeout: 10_000 })
      .toBe(true);
    pod.cancel("user pressed Esc");
    const cancelled = await second;
    expect(cancelled.status).toBe("cancelled");
    const sleepResult = pod.history.find((i) => i.type === "tool_result" && i.callId === "toolu_sleep");
    expect(sleepResult).toBeDefined();
    expect(cancelled.reason).toBe("user pressed Esc");
    // The command's whole process group is gone.
    const pgid = Number((await readFile(pidFile, "utf8")).trim());
    await expect.poll(() => groupAlive(pgid), { timeout: 10_000 }).toBe(false);

    // Restore from the log: the same history, and the session continues.
    const before = structuredClone([...pod.history]);
    const id = pod.id;
    await pod.close();
    const loaded = await loadSession({ dir: dataDir, id });
    expect(loaded.warnings).toEqual([]);
    const types = loaded.records.map((r) => r.type);
    for (const t of ["session_start", "user_input", "item", "alert", "usage", "turn_end", "cancel"]) {
      expect(types).toContain(t);
    }
    expect(loaded.records.find((r) => r.type === "item" && r.reason === "file_ref")).toMatchObject({
      index: 1,
      item: history[1],
    });
    expect(loaded.records.find((r) => r.type === "alert")).toMatchObject({
      level: "warn",
      source: "file_ref",
    });

    const restored = await Pod.restore(id, { config, cwd: root, dataDir, client: client(s), fsync: "never" });
    pods.push(restored);
    expect(restored.history).toEqual(before);
    const again = await restored.run("Are you still there?");
    expect(again.status).toBe("completed");
    expect(textOf(restored.history.at(-1))).toBe("Still here.");
    const last = sent(s, s.requests.length - 1);
    expect(last).toContain("[File: src/greet.ts]");
    expect(last).toContain("Are you still there?");
    expect(s.rejections).toEqual([]);
  });

  it("with no permission UI, writes are denied (fail closed) and the model is told why", async () => {
    const base = await tempDir();
    const root = path.join(base, "p");
    await mkdir(root);
    const s = await server([
      {
        type: "reply",
        toolCalls: [{ id: "toolu_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
      },
      { type: "reply", text: "ok" },
    ]);
    const pod = await Pod.create({
      cwd: root,
      dataDir: path.join(base, "d"),
      client: client(s),
      fsync: "never",
    });
    pods.push(pod);
    const result = await pod.run("write x.txt");
    expect(result.status).toBe("completed");
    const denial = pod.history.find((i) => i.type === "tool_result");
    expect(denial).toMatchObject({ isError: true, output: expect.stringContaining("no one can approve it") });
    await expect(readFile(path.join(root, "x.txt"))).rejects.toThrow();
    expect(pod.alerts.recentAlerts()).toEqual([
      expect.objectContaining({
        level: "warn",
        source: "permissions",
        code: "denied_no_ui",
        message:
          "denied write_file x.txt: it needs approval and no one can be asked (add an allow rule to permit it)",
      }),
    ]);
    await expect(pod.run("   ")).rejects.toThrow(/input is empty/);
  });
});
