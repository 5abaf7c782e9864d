/**
 * query(): the one-call API, driven against a scripted Anthropic server on
 * 127.0.0.1 through the real client, pod, session log and MCP client.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { defineTool } from "@yoi/llm-worker";
import { type Config, ConfigSchema, resolveModel } from "@yoi/manifest";
import { loadSession, SessionLogError } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import type { StreamJsonEvent } from "../src/events/stream-json.ts";
import { type QueryOptions, query } from "../src/query/query.ts";
import { tempDir } from "./helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

interface Setup {
  server: ScriptedServer;
  cwd: string;
  dataDir: string;
  base: Pick<QueryOptions, "config" | "cwd" | "dataDir" | "env" | "pod">;
}

async function setup(script: ScriptStep[]): Promise<Setup> {
  const server = await startScriptedServer({ provider: "anthropic", validate: true, script });
  servers.push(server);
  const dir = await tempDir();
  const cwd = path.join(dir, "project");
  const dataDir = path.join(dir, "data");
  await mkdir(cwd, { recursive: true });
  const config: Config = ConfigSchema.parse({
    sandbox: false,
    model: "anthropic/claude-haiku-4-5",
    providers: { anthropic: { kind: "anthropic", apiKeyEnv: "ANTHROPIC_API_KEY", baseURL: server.baseURL } },
  });
  return {
    server,
    cwd,
    dataDir,
    base: {
      config,
      cwd,
      dataDir,
      env: { ANTHROPIC_API_KEY: "test-key" },
      pod: { fsync: "never", environment: false, instructions: false },
    },
  };
}

async function collect(events: AsyncIterable<StreamJsonEvent>): Promise<StreamJsonEvent[]> {
  const out: StreamJsonEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

type Result = Extract<StreamJsonEvent, { type: "result" }>;
const results = (events: StreamJsonEvent[]): Result[] =>
  events.filter((e): e is Result => e.type === "result");

/** The text of the tool result the request at `index` sends back for `callId`. */
function toolResultText(server: ScriptedServer, index: number, callId: string): string {
  const body = server.requests[index] as {
    messages: { content: string | { type: string; tool_use_id?: string; content?: unknown }[] }[];
  };
  for (const message of body.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type === "tool_result" && block.tool_use_id === callId) return JSON.stringify(block.content);
    }
  }
  throw new Error(`no tool_result for ${callId} in request ${index}`);
}

describe("query()", () => {
  it("yields the session, the run's stream-json events and a result with usage, cost and session id", async () => {
    const s = await setup([
      { type: "reply", text: "Hello there.", options: { usage: { inputTokens: 1000, outputTokens: 30 } } },
    ]);
    const events = await collect(query({ ...s.base, prompt: "hi" }));
    expect(events[0]).toMatchObject({
      type: "session",
      provider: "anthropic",
      model: "claude-haiku-4-5",
      resumed: false,
    });
    expect(
      events
        .filter((e) => e.type === "text")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("Hello there.");
    const [result] = results(events);
    expect(events.at(-1)).toBe(result);
    expect(result).toMatchObject({
      status: "completed",
      text: "Hello there.",
      turns: 1,
      session_id: (events[0] as { session_id: string }).session_id,
    });
    expect(result!.usage.input_tokens).toBe(1000);
    expect(result!.usage.output_tokens).toBe(30);
    // Priced at the catalog's list prices of claude-haiku-4-5 (USD per million tokens).
    const pricing = resolveModel(s.base.config!).info?.pricing;
    expect(pricing).toBeDefined();
    expect(result!.cost_usd).toBeCloseTo((1000 * pricing!.input + 30 * pricing!.output) / 1_000_000, 12);
    expect(result!.models).toEqual({
      "anthropic/claude-haiku-4-5": expect.objectContaining({
        input_tokens: 1000,
        output_tokens: 30,
        calls: 1,
      }),
    });
  });

  it("canUseTool denies with a message the model gets, and allows a zod tool with changed input", async () => {
    const s = await setup([
      {
        type: "reply",
        toolCalls: [
          { id: "toolu_w", name: "write_file", arguments: { path: "notes.txt", content: "from the model" } },
        ],
      },
      { type: "reply", toolCalls: [{ id: "toolu_s", name: "shout", arguments: { text: "quiet" } }] },
      { type: "reply", text: "Done." },
    ]);
    const shouted: string[] = [];
    const shout = defineTool({
      name: "shout",
      description: "Says the text in capitals.",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => {
        shouted.push(text);
        return text.toUpperCase();
      },
    });
    const asked: { tool: string; input: unknown; summary: string }[] = [];
    const events = await collect(
      query({
        ...s.base,
        prompt: "write a note, then shout",
        tools: [shout],
        canUseTool: (tool, input, context) => {
          asked.push({ tool, input, summary: context.summary });
          if (tool === "write_file") return { behavior: "deny", message: "no files today, tell me instead" };
          return { behavior: "allow", updatedInput: { text: "changed by the app" } };
        },
      }),
    );
    expect(asked.map((a) => a.tool)).toEqual(["write_file", "shout"]);
    expect(asked[0]!.input).toEqual({ path: "notes.txt", content: "from the model" });
    // Denied: nothing written, and the model reads the reason.
    await expect(readFile(path.join(s.cwd, "notes.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    expect(toolResultText(s.server, 1, "toolu_w")).toContain("no files today, tell me instead");
    // Allowed with changed input: the tool ran with the app's input.
    expect(shouted).toEqual(["changed by the app"]);
    expect(toolResultText(s.server, 2, "toolu_s")).toContain("CHANGED BY THE APP");
    const permissions = events.filter((e) => e.type === "permission");
    expect(permissions).toEqual([
      { type: "permission", tool: "write_file", subject: "notes.txt", action: "deny", by: "user" },
      { type: "permission", tool: "shout", action: "allow", by: "user" },
    ]);
    expect(results(events)[0]).toMatchObject({ status: "completed", text: "Done." });
  });

  it("masks the API key in streamed text even when it arrives split over deltas, and in the result", async () => {
    const key = "sk-ant-query-Secret-7Qw9Ez3Rt5";
    const s = await setup([{ type: "reply", text: `the key is ${key} ok`, options: { chunkSize: 5 } }]);
    const events = await collect(query({ ...s.base, env: { ANTHROPIC_API_KEY: key }, prompt: "leak it" }));
    const deltas = events.filter((e) => e.type === "text");
    expect(deltas.length).toBeGreaterThan(3);
    const streamed = deltas.map((e) => (e as { text: string }).text).join("");
    expect(streamed).not.toContain(key);
    expect(streamed).toContain("<redacted>");
    expect(JSON.stringify(events)).not.toContain(key);
    expect(results(events)[0]!.text).toBe("the key is <redacted> ok");
  });

  it("a canUseTool that throws or answers nonsense denies the call", async () => {
    const s = await setup([
      {
        type: "reply",
        toolCalls: [
          { id: "toolu_a", name: "write_file", arguments: { path: "a.txt", content: "a" } },
          { id: "toolu_b", name: "write_file", arguments: { path: "b.txt", content: "b" } },
        ],
      },
      { type: "reply", text: "Neither." },
    ]);
    const events = await collect(
      query({
        ...s.base,
        prompt: "write both",
        canUseTool: (_tool, input) => {
          if ((input as { path: string }).path === "a.txt") throw new Error("the app's callback broke");
          return { behavior: "maybe" } as never;
        },
      }),
    );
    expect(
      events.filter((e) => e.type === "permission").map((e) => (e as { action: string }).action),
    ).toEqual(["deny", "deny"]);
    await expect(readFile(path.join(s.cwd, "a.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(path.join(s.cwd, "b.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    expect(results(events)[0]).toMatchObject({ status: "completed" });
  });

  it("passes hooks and interceptors to the worker: a hook denies, an interceptor sees the request", async () => {
    const s = await setup([
      { type: "reply", toolCalls: [{ id: "toolu_r", name: "read_file", arguments: { path: "secret.txt" } }] },
      { type: "reply", text: "Not allowed, then." },
    ]);
    await writeFile(path.join(s.cwd, "secret.txt"), "do not read\n");
    const seenTools: string[] = [];
    const requests: number[] = [];
    const events = await collect(
      query({
        ...s.base,
        prompt: "read secret.txt",
        hooks: [
          {
            name: "no-secrets",
            beforeToolCall: (call) => {
              seenTools.push(call.name);
              return (call.args as { path?: string }).path === "secret.txt"
                ? { action: "deny", message: "secret.txt is off limits" }
                : undefined;
            },
          },
        ],
        interceptors: [{ beforeRequest: (info) => void requests.push(info.turnIndex) }],
      }),
    );
    expect(seenTools).toEqual(["read_file"]);
    expect(requests).toEqual([0, 1]);
    expect(toolResultText(s.server, 1, "toolu_r")).toContain("secret.txt is off limits");
    expect(toolResultText(s.server, 1, "toolu_r")).not.toContain("do not read");
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ is_error: true, outcome: "skipped" });
  });

  it("without canUseTool a call that would ask is denied", async () => {
    const s = await setup([
      {
        type: "reply",
        toolCalls: [{ id: "toolu_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }],
      },
      { type: "reply", text: "Could not." },
    ]);
    const events = await collect(query({ ...s.base, prompt: "write" }));
    expect(events.find((e) => e.type === "permission")).toMatchObject({ action: "deny", by: "no_ui" });
    await expect(readFile(path.join(s.cwd, "x.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("calls a tool of an in-process MCP server", async () => {
    const s = await setup([
      { type: "reply", toolCalls: [{ id: "toolu_m", name: "mcp__calc__add", arguments: { a: 2, b: 40 } }] },
      { type: "reply", text: "42." },
    ]);
    const calc = new McpServer({ name: "calc", version: "1.0.0" });
    const seen: { a: number; b: number }[] = [];
    calc.registerTool(
      "add",
      { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        seen.push({ a, b });
        return { content: [{ type: "text", text: `sum=${a + b}` }] };
      },
    );
    const events = await collect(
      query({
        ...s.base,
        prompt: "add 2 and 40",
        mcpServers: { calc },
        canUseTool: (tool) =>
          tool.startsWith("mcp__calc__") ? { behavior: "allow" } : { behavior: "deny", message: "no" },
      }),
    );
    expect(seen).toEqual([{ a: 2, b: 40 }]);
    // The model was offered the server's tool, and got its result.
    const tools = (s.server.requests[0] as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toContain("mcp__calc__add");
    expect(toolResultText(s.server, 1, "toolu_m")).toContain("sum=42");
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({
      name: "mcp__calc__add",
      is_error: false,
    });
    expect(results(events)[0]).toMatchObject({ status: "completed", text: "42." });
  });

  it("an AbortSignal cancels the run in progress and the result says cancelled", async () => {
    const s = await setup([
      { type: "reply", toolCalls: [{ id: "toolu_slow", name: "slow", arguments: {} }] },
      { type: "reply", text: "never sent" },
    ]);
    const controller = new AbortController();
    const slow = defineTool({
      name: "slow",
      description: "Waits until cancelled.",
      inputSchema: z.object({}),
      execute: (_input, ctx) =>
        new Promise<string>((resolve) => {
          ctx.signal.addEventListener("abort", () => resolve("stopped"), { once: true });
          // The app gives up while the tool runs.
          controller.abort(new Error("the app gave up"));
        }),
    });
    const events = await collect(
      query({
        ...s.base,
        prompt: "go slow",
        tools: [slow],
        signal: controller.signal,
        canUseTool: () => ({ behavior: "allow" }),
      }),
    );
    expect(results(events)).toHaveLength(1);
    expect(results(events)[0]!.status).toBe("cancelled");
    expect(s.server.requests).toHaveLength(1);
  });

  it("runs each message of an async iterable in one session, a result after each", async () => {
    const s = await setup([
      { type: "reply", text: "First." },
      { type: "reply", text: "Second." },
    ]);
    async function* messages() {
      yield "one";
      yield "two";
    }
    const events = await collect(query({ ...s.base, prompt: messages() }));
    const done = results(events);
    expect(done.map((r) => r.text)).toEqual(["First.", "Second."]);
    expect(new Set(done.map((r) => r.session_id)).size).toBe(1);
    // The second request carries the first exchange.
    const second = s.server.requests[1] as { messages: unknown[] };
    expect(second.messages).toHaveLength(3);
  });

  it("resumes a session by id and forks one, leaving the original as it was", async () => {
    const s = await setup([
      { type: "reply", text: "The word is heron." },
      { type: "reply", text: "You said heron." },
      { type: "reply", text: "Forked: heron." },
    ]);
    const first = results(await collect(query({ ...s.base, prompt: "remember heron" })))[0]!;
    const id = first.session_id;

    const resumedEvents = await collect(query({ ...s.base, prompt: "what was the word?", resume: id }));
    expect(resumedEvents[0]).toMatchObject({ type: "session", session_id: id, resumed: true });
    expect(results(resumedEvents)[0]).toMatchObject({ session_id: id, text: "You said heron." });
    expect(JSON.stringify(s.server.requests[1])).toContain("remember heron");
    const afterResume = (await loadSession({ dir: s.dataDir, id })).history.length;

    // Fork by a prefix of the id: a new session with the history so far.
    const forked = results(
      await collect(query({ ...s.base, prompt: "and now?", resume: id.slice(0, 12), forkSession: true })),
    )[0]!;
    expect(forked.session_id).not.toBe(id);
    expect(forked.text).toBe("Forked: heron.");
    const forkRequest = JSON.stringify(s.server.requests[2]);
    expect(forkRequest).toContain("remember heron");
    expect(forkRequest).toContain("what was the word?");
    expect((await loadSession({ dir: s.dataDir, id })).history.length).toBe(afterResume);
    expect((await loadSession({ dir: s.dataDir, id: forked.session_id })).history.length).toBe(
      afterResume + 2,
    );
  });

  it("rejects options that cannot work before anything starts, and says why", async () => {
    const s = await setup([]);
    await expect(collect(query({ ...s.base, prompt: "  " }))).rejects.toMatchObject({
      name: "QueryError",
      code: "invalid_options",
      message: expect.stringContaining("prompt must be a non-empty string"),
    });
    await expect(collect(query({ ...s.base, prompt: "hi", forkSession: true }))).rejects.toMatchObject({
      code: "invalid_options",
      message: expect.stringContaining("forkSession needs resume"),
    });
    await expect(
      collect(query({ ...s.base, prompt: "hi", mcpServers: { calc: {} as McpServer } })),
    ).rejects.toMatchObject({ code: "invalid_options", message: expect.stringContaining("mcpServers.calc") });
    await expect(collect(query({ ...s.base, prompt: "hi", resume: "0190aaaa-nope" }))).rejects.toSatisfy(
      (error: unknown) => SessionLogError.isInstance(error),
    );
    await expect(collect(query({ ...s.base, prompt: "hi", model: "nowhere/model" }))).rejects.toMatchObject({
      name: "ConfigError",
    });
    expect(s.server.requests).toHaveLength(0);
  });
});
