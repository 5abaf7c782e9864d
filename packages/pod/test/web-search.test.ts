/**
 * The web_search tool of a pod against a scripted Anthropic server that
 * checks requests like the API: offered as Anthropic's server tool where
 * the catalog says the model can search, decided once per run by the
 * permission rules before the request, the search kept in history and sent
 * back whole on the next request, also after a restore from the log.
 */
import { mkdir, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { ConfigSchema, type PermissionRule } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import type { PodEvent } from "../src/events/pod-events.ts";
import type { PermissionDecision, PermissionRequest } from "../src/permissions/index.ts";
import { Pod } from "../src/pod.ts";
import { fixtureLines, tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

const SEARCH = fixtureLines("anthropic/anthropic-web-search-tool.1.chunks.txt");

async function server(script: ScriptStep[], provider: "anthropic" | "openai-chat" = "anthropic") {
  const s = await startScriptedServer({ provider, script, validate: true });
  servers.push(s);
  return s;
}

interface Setup {
  rules?: PermissionRule[];
  mode?: "default" | "plan" | "bypassPermissions" | "acceptEdits";
  answers?: PermissionDecision[];
  model?: string;
  provider?: "anthropic" | "openai-chat";
  webSearch?: false;
  models?: Record<string, unknown>;
}

async function open(s: ScriptedServer, setup: Setup = {}) {
  const base = await tempDir();
  const asked: PermissionRequest[] = [];
  const events: PodEvent[] = [];
  const config = ConfigSchema.parse({
    permissions: { rules: setup.rules ?? [] },
    sandbox: false,
    ...(setup.models ? { models: setup.models } : {}),
  });
  const options = {
    config,
    cwd: base,
    dataDir: path.join(base, "data"),
    client: createClient({
      provider: setup.provider ?? "anthropic",
      model: setup.model ?? "claude-haiku-4-5",
      apiKey: "test-key",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
    fsync: "never" as const,
    ...(setup.mode ? { permissionMode: setup.mode } : {}),
    ...(setup.webSearch === false ? { webSearch: false as const } : {}),
    ...(setup.answers
      ? {
          ask: async (request: PermissionRequest) => {
            asked.push(request);
            return setup.answers!.shift() ?? "deny";
          },
        }
      : {}),
  };
  const pod = await Pod.create(options);
  pods.push(pod);
  pod.subscribe((e) => events.push(e));
  return { pod, asked, events, options };
}

/** The server tools a request offered. */
function offered(s: ScriptedServer, index: number): unknown[] {
  const body = s.requests[index] as { tools?: { type?: string }[] };
  return (body.tools ?? []).filter((t) => t.type !== undefined && t.type !== "custom");
}

const ANTHROPIC_SEARCH = {
  type: "web_search_20250305",
  name: "web_search",
  max_uses: 5,
  cache_control: { type: "ephemeral" },
};

describe("web_search in a pod (Anthropic)", () => {
  it("allowed: offered, the search and citations kept, and sent back whole, also after a restore", async () => {
    const s = await server([
      { type: "lines", lines: SEARCH },
      { type: "reply", text: "The Ginza store is the first story." },
      { type: "reply", text: "Still the Ginza store." },
    ]);
    const { pod, events, options } = await open(s, { rules: [{ tool: "web_search", action: "allow" }] });
    expect((await pod.run("tech news today?")).status).toBe("completed");
    expect(offered(s, 0)).toEqual([ANTHROPIC_SEARCH]);
    const search = pod.history.find((i) => i.type === "server_tool");
    expect(search).toMatchObject({ name: "web_search", status: "completed", provider: "anthropic" });
    expect(
      events.filter((e) => e.type === "server_tool").map((e) => e.type === "server_tool" && e.item.status),
    ).toEqual(["running", "completed"]);
    const answer = pod.history.at(-1) as Extract<Item, { type: "message" }>;
    expect(answer.content.filter((p) => p.type === "text" && p.citations).length).toBe(9);

    expect((await pod.run("which story first?")).status).toBe("completed");
    const second = JSON.stringify(s.requests[1]);
    expect(second).toContain('"type":"server_tool_use"');
    expect(second).toContain('"type":"web_search_tool_result"');
    expect(second).toContain('"encrypted_index"');
    expect(s.rejections).toEqual([]);

    const id = pod.id;
    await pod.close();
    const restored = await Pod.restore(id, options);
    pods.push(restored);
    expect(restored.history.filter((i) => i.type === "server_tool")).toEqual([search]);
    expect((await restored.run("and now?")).status).toBe("completed");
    expect(JSON.stringify(s.requests[2])).toContain('"tool_use_id":"srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k"');
    expect(s.rejections).toEqual([]);
  });

  it("ask (the default): not offered and nobody asked; the config's default or a rule offers it", async () => {
    const s = await server([
      { type: "reply", text: "one" },
      { type: "reply", text: "two" },
    ]);
    const asking = await open(s, { answers: ["allow"] });
    await asking.pod.run("a");
    expect(offered(s, 0)).toEqual([]);
    expect(asking.asked).toEqual([]);
    expect(asking.events.filter((e) => e.type === "alert" || e.type === "permission_outcome")).toEqual([]);

    const config = asking.options.config;
    const viaDefault = await Pod.create({
      ...asking.options,
      config: { ...config, permissions: { ...config.permissions, default: { web_search: "allow" } } },
    });
    pods.push(viaDefault);
    await viaDefault.run("b");
    expect(offered(s, 1)).toEqual([ANTHROPIC_SEARCH]);
  });

  it("a mode switch takes effect on the next request: plan mode keeps it, a deny rule added later removes it", async () => {
    const s = await server([
      { type: "reply", text: "one" },
      { type: "reply", text: "two" },
      { type: "reply", text: "three" },
    ]);
    const { pod } = await open(s, { rules: [{ tool: "web_search", action: "allow" }] });
    await pod.run("a");
    pod.permissions.setMode("plan");
    await pod.run("b");
    pod.permissions.addRule({ tool: "web_search", action: "deny" }, "test");
    await pod.run("c");
    expect([0, 1, 2].map((i) => offered(s, i).length)).toEqual([1, 1, 0]);
  });

  it("no one to ask: not offered, and no alert (the model never asked)", async () => {
    const s = await server([{ type: "reply", text: "ok" }]);
    const { pod, events } = await open(s);
    await pod.run("a");
    expect(offered(s, 0)).toEqual([]);
    expect(events.filter((e) => e.type === "alert")).toEqual([]);
  });

  it("a deny rule wins over an allow rule; plan mode keeps an allowed one", async () => {
    const denied = await server([{ type: "reply", text: "ok" }]);
    const a = await open(denied, {
      rules: [
        { tool: "web_search", action: "allow" },
        { tool: "web_*", action: "deny" },
      ],
      answers: ["allow"],
    });
    await a.pod.run("a");
    expect(offered(denied, 0)).toEqual([]);
    expect(a.asked).toEqual([]);

    const plan = await server([{ type: "reply", text: "ok" }]);
    const b = await open(plan, { mode: "plan", rules: [{ tool: "web_search", action: "allow" }] });
    await b.pod.run("a");
    expect(offered(plan, 0)).toEqual([ANTHROPIC_SEARCH]);
  });

  it("not offered where the provider or the model cannot search, or when the pod leaves it out", async () => {
    const rules: PermissionRule[] = [{ tool: "web_search", action: "allow" }];
    const proxy = { provider: "anthropic", contextWindow: 200_000, maxOutputTokens: 8192 };
    const unknown = await server([{ type: "reply", text: "ok" }]);
    await (
      await open(unknown, { rules, model: "claude-from-a-proxy", models: { "claude-from-a-proxy": proxy } })
    ).pod.run("a");
    expect(offered(unknown, 0)).toEqual([]);
    // The config can say the model searches.
    const declared = await server([{ type: "reply", text: "ok" }]);
    const models = { "claude-from-a-proxy": { ...proxy, capabilities: { webSearch: true } } };
    await (await open(declared, { rules, model: "claude-from-a-proxy", models })).pod.run("a");
    expect(offered(declared, 0)).toEqual([ANTHROPIC_SEARCH]);

    const chat = await server([{ type: "reply", text: "ok" }], "openai-chat");
    await (await open(chat, { rules, provider: "openai-chat", model: "gpt-5" })).pod.run("a");
    expect((chat.requests[0] as { tools?: unknown[] }).tools ?? []).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ type: "web_search" })]),
    );

    const off = await server([{ type: "reply", text: "ok" }]);
    await (await open(off, { rules, webSearch: false })).pod.run("a");
    expect(offered(off, 0)).toEqual([]);
  });

  it("a turn the server paused (pause_turn) is sent back as it is, and the answer goes on", async () => {
    const paused = SEARCH.map((line) =>
      line.replace('"stop_reason":"end_turn"', '"stop_reason":"pause_turn"'),
    );
    expect(paused.join("\n")).toContain('"pause_turn"');
    const s = await server([
      { type: "lines", lines: paused },
      { type: "reply", text: " That is all for today." },
    ]);
    const { pod } = await open(s, { rules: [{ tool: "web_search", action: "allow" }] });
    const result = await pod.run("tech news today?");
    expect(result).toMatchObject({ status: "completed", turns: 2 });
    const body = s.requests[1] as {
      messages: { role: string; content: { type: string; text?: string }[] }[];
    };
    // No new user message: the paused answer is last, and its final text has no trailing whitespace.
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const last = body.messages[1]!.content;
    expect(last.slice(0, 2).map((b) => b.type)).toEqual(["server_tool_use", "web_search_tool_result"]);
    expect(last.at(-1)!.text).toBe(last.at(-1)!.text!.trimEnd());
    expect(s.rejections).toEqual([]);
    expect(pod.history.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ text: " That is all for today." }],
    });
  });

  it("a subagent is offered it too, for its own model, under the same rules", async () => {
    const s = await server([
      {
        type: "reply",
        toolCalls: [
          { id: "toolu_t", name: "task", arguments: { description: "look it up", prompt: "search" } },
        ],
      },
      { type: "reply", text: "found it" },
      { type: "reply", text: "done" },
    ]);
    const { pod } = await open(s, { rules: [{ tool: "web_search", action: "allow" }] });
    expect((await pod.run("delegate")).status).toBe("completed");
    const system = (i: number) => JSON.stringify((s.requests[i] as { system?: unknown }).system ?? "");
    expect(system(1)).toContain("You are a subagent");
    expect(offered(s, 1)).toEqual([ANTHROPIC_SEARCH]);
    expect(offered(s, 2)).toEqual([ANTHROPIC_SEARCH]);
  });

  it("an agent whose tools list leaves web_search out is not offered it", async () => {
    const s = await server([
      {
        type: "reply",
        toolCalls: [
          {
            id: "toolu_t",
            name: "task",
            arguments: { description: "read", prompt: "read", agent: "reader" },
          },
        ],
      },
      { type: "reply", text: "read it" },
      { type: "reply", text: "done" },
    ]);
    const base = await tempDir();
    const agentsDir = path.join(base, "agents");
    await mkdir(agentsDir);
    await writeFile(
      path.join(agentsDir, "reader.md"),
      "---\ndescription: Reads files\ntools: read_file, grep\n---\nRead.\n",
    );
    const { options } = await open(s, { rules: [{ tool: "web_search", action: "allow" }] });
    const pod = await Pod.create({ ...options, agentDirs: [agentsDir] });
    pods.push(pod);
    expect((await pod.run("delegate")).status).toBe("completed");
    expect(offered(s, 0)).toEqual([ANTHROPIC_SEARCH]);
    expect(offered(s, 1)).toEqual([]);
  });
});
