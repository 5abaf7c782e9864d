/**
 * `yoi acp` as an editor runs it: the shipped bundle on stdio, driven by
 * the official SDK's client side, against the scripted model servers.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";
import {
  anthropicWire,
  frameLines,
  type ScriptedServer,
  type ScriptStep,
  startScriptedServer,
} from "@yoi/llm-client/testing";
import { loadSession } from "@yoi/worker-persistence";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AcpClient,
  type AcpClientOptions,
  FS_CAPABILITIES,
  initialize,
  startAcp,
} from "./acp-client.ts";
import { cleanEnv, tempWorld } from "./helpers.ts";

const servers: ScriptedServer[] = [];

const clients: AcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) {
    c.child.kill("SIGKILL");
    await c.close();
  }
  for (const s of servers.splice(0)) await s.close();
});

const MODEL = ["--model", "anthropic/claude-haiku-4-5"];
/** A whole 1×1 PNG, as an editor pastes it (base64). */
const ONE_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const EVERYTHING = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

async function world(script: ScriptStep[], files: Record<string, string> = { "a.txt": "one\ntwo\n" }) {
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld(files);
  const env = cleanEnv(home, {
    ANTHROPIC_API_KEY: "test-key-acp-0123456789",
    ANTHROPIC_BASE_URL: server.baseURL,
  });
  return { server, home, project, env };
}

function client(options: AcpClientOptions): AcpClient {
  const c = startAcp({ ...options, args: [...MODEL, ...(options.args ?? [])] });
  clients.push(c);
  return c;
}

/** A model that streams `text` but never ends its answer (the connection stays open, silent). */
function stalls(text: string): ScriptStep {
  const lines = anthropicWire.response(text);
  const lastDelta = lines.findLastIndex((l) => l.includes("text_delta"));
  const sent = Buffer.byteLength(frameLines("anthropic", lines.slice(0, lastDelta + 1)));
  return { type: "lines", lines, truncateBytes: sent, end: "hang" };
}

const allow = (optionId: string) => async () => ({ outcome: { outcome: "selected" as const, optionId } });

function kinds(updates: readonly acp.SessionNotification[], kind: string) {
  return updates.map((n) => n.update).filter((u) => u.sessionUpdate === kind);
}

function text(updates: readonly acp.SessionNotification[], kind = "agent_message_chunk"): string {
  return kinds(updates, kind)
    .map((u) =>
      "content" in u && !Array.isArray(u.content) && u.content?.type === "text" ? u.content.text : "",
    )
    .join("");
}

/** stdout held JSON-RPC 2.0 messages and nothing else. */
function onlyJsonRpc(c: AcpClient): void {
  expect(c.stdoutLines.length).toBeGreaterThan(0);
  for (const line of c.stdoutLines) expect((JSON.parse(line) as { jsonrpc?: string }).jsonrpc).toBe("2.0");
}

async function sessionLog(home: string, id: string) {
  return loadSession({ dir: path.join(home, ".yoi"), id });
}

describe("yoi acp", () => {
  it("advertises what it does, and a prompt reads, edits (asking, with a diff), runs bash and answers", async () => {
    const { project, env, server } = await world([
      {
        type: "reply",
        text: "Reading.",
        toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "a.txt" } }],
      },
      {
        type: "reply",
        toolCalls: [
          { id: "c2", name: "edit_file", arguments: { path: "a.txt", old_string: "two", new_string: "2" } },
        ],
      },
      { type: "reply", toolCalls: [{ id: "c3", name: "bash", arguments: { command: "echo hi-from-bash" } }] },
      {
        type: "reply",
        text: "Done: a.txt now says 2.",
        options: { usage: { inputTokens: 900, outputTokens: 12 } },
      },
    ]);
    const c = client({ cwd: project, env, permission: allow("allow_once") });
    const init = await initialize(c);
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
    });
    const created = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    expect(created.modes?.currentModeId).toBe("default");
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual([
      "default",
      "acceptEdits",
      "plan",
      "bypassPermissions",
    ]);
    const response = await c.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "change two to 2 in a.txt" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(server.rejections).toEqual([]);
    expect(await readFile(path.join(project, "a.txt"), "utf8")).toBe("one\n2\n");

    const calls = kinds(c.updates, "tool_call") as (acp.ToolCall & { sessionUpdate: "tool_call" })[];
    expect(calls.map((u) => [u.toolCallId, u.kind])).toEqual([
      ["c1", "read"],
      ["c2", "edit"],
      ["c3", "execute"],
    ]);
    expect(calls[0]?.locations).toEqual([{ path: path.join(project, "a.txt"), line: 1 }]);
    const diff = { type: "diff", path: path.join(project, "a.txt"), oldText: "two", newText: "2" };
    expect(calls[1]?.content).toEqual([diff]);
    // The editor can follow along: the line of the text to change, then of the change.
    expect(calls[1]?.locations).toEqual([{ path: path.join(project, "a.txt"), line: 2 }]);
    // The edit and the command asked, each with allow once / allow always / reject.
    expect(c.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c2", "c3"]);
    expect(c.permissionRequests[0]?.toolCall.content).toEqual([diff]);
    expect(c.permissionRequests[0]?.options.map((o) => [o.optionId, o.name])).toEqual([
      ["allow_once", "Allow"],
      ["allow_always", "Always allow edit_file in this session"],
      ["allow_project", "Always allow edit_file in this project"],
      ["reject_once", "Reject"],
    ]);
    const finished = kinds(c.updates, "tool_call_update").filter(
      (u) => "status" in u && u.status === "completed",
    ) as acp.ToolCallUpdate[];
    expect(finished.map((u) => u.toolCallId)).toEqual(["c1", "c2", "c3"]);
    expect(finished[1]?.content).toEqual([diff]);
    expect(finished[1]?.locations).toEqual([{ path: path.join(project, "a.txt"), line: 2 }]);
    expect(JSON.stringify(finished[2]?.content)).toContain("hi-from-bash");
    expect(text(c.updates)).toBe("Reading.Done: a.txt now says 2.");
    expect(kinds(c.updates, "usage_update").at(-1)).toMatchObject({ used: 912 });
    const commands = await c.waitForUpdate((u) => u.sessionUpdate === "available_commands_update");
    expect("availableCommands" in commands && commands.availableCommands.map((x) => x.name)).toEqual([
      "compact",
      "init",
    ]);
    // Nothing on stdout but the protocol; the key is nowhere.
    expect(await c.close()).toBe(0);
    onlyJsonRpc(c);
    expect(c.stdoutLines.join("\n")).not.toContain("test-key-acp");
  }, 60_000);

  it('"always" feeds the permission engine like the terminal\'s: the next such call does not ask', async () => {
    const { project, env } = await world([
      { type: "reply", toolCalls: [{ id: "b1", name: "bash", arguments: { command: "ls -a" } }] },
      { type: "reply", toolCalls: [{ id: "b2", name: "bash", arguments: { command: "ls -la" } }] },
      { type: "reply", text: "ok" },
    ]);
    const c = client({ cwd: project, env, permission: allow("allow_always") });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "go" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(c.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["b1"]);
    expect(c.permissionRequests[0]?.options[1]?.name).toBe('Always allow "ls *" in this session');
    const done = kinds(c.updates, "tool_call_update") as acp.ToolCallUpdate[];
    expect(done.filter((u) => u.status === "completed").map((u) => u.toolCallId)).toEqual(["b1", "b2"]);
  }, 60_000);

  it('"always in this project" lasts: a later session of the project does not ask', async () => {
    const { project, env, home } = await world([
      { type: "reply", toolCalls: [{ id: "p1", name: "bash", arguments: { command: "ls -a" } }] },
      { type: "reply", text: "listed" },
      { type: "reply", toolCalls: [{ id: "p2", name: "bash", arguments: { command: "ls -la" } }] },
      { type: "reply", text: "listed again" },
    ]);
    const first = client({ cwd: project, env, permission: allow("allow_project") });
    await initialize(first);
    const one = await first.agent.request("session/new", { cwd: project, mcpServers: [] });
    await first.agent.request("session/prompt", {
      sessionId: one.sessionId,
      prompt: [{ type: "text", text: "ls" }],
    });
    expect(first.permissionRequests[0]?.options[2]?.name).toBe("Always allow bash(ls *) in this project");
    expect(await first.close()).toBe(0);
    expect(await readFile(path.join(home, ".yoi", "approvals.json"), "utf8")).toContain('"match": "ls *"');

    const second = client({ cwd: project, env });
    await initialize(second);
    const two = await second.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await second.agent.request("session/prompt", {
      sessionId: two.sessionId,
      prompt: [{ type: "text", text: "ls again" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(second.permissionRequests).toEqual([]);
    const done = kinds(second.updates, "tool_call_update") as acp.ToolCallUpdate[];
    expect(done.find((u) => u.toolCallId === "p2" && u.status === "completed")).toBeDefined();
  }, 60_000);

  it("session/cancel mid-stream: the prompt answers cancelled, and the log is whole", async () => {
    const { project, env, home, server } = await world([
      stalls("I am thinking about it, and the answer will take a while to write out in full."),
    ]);
    const c = client({ cwd: project, env });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const pending = c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
    await c.waitForUpdate((u) => u.sessionUpdate === "agent_message_chunk");
    await c.agent.notify("session/cancel", { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    expect(server.requests).toHaveLength(1);
    expect(await c.close()).toBe(0);
    const log = await sessionLog(home, sessionId);
    expect(log.warnings).toEqual([]);
    expect(log.records.map((r) => r.type).at(-1)).toBe("cancel");
  }, 60_000);

  it("session/cancel mid-tool stops the command; cancel during a question counts as a denial", async () => {
    const { project, env } = await world([
      {
        type: "reply",
        toolCalls: [{ id: "s1", name: "bash", arguments: { command: "sleep 30; echo never" } }],
      },
      {
        type: "reply",
        toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "b.txt", content: "b" } }],
      },
    ]);
    let asked = 0;
    const c = client({
      cwd: project,
      env,
      // The first question (bash) is allowed; the second (write_file) is never answered.
      permission: async (_request, signal) => {
        asked += 1;
        if (asked === 1) return { outcome: { outcome: "selected", optionId: "allow_once" } };
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return { outcome: { outcome: "cancelled" } };
      },
    });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const started = Date.now();
    const first = c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] });
    await c.waitForUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await c.agent.notify("session/cancel", { sessionId });
    expect((await first).stopReason).toBe("cancelled");
    // Well before the 30 s sleep would have ended.
    expect(Date.now() - started).toBeLessThan(25_000);
    const s1 = (kinds(c.updates, "tool_call_update") as acp.ToolCallUpdate[]).at(-1);
    expect(s1).toMatchObject({ toolCallId: "s1", status: "failed" });
    expect(JSON.stringify(s1?.content)).toContain("interrupted");

    const second = c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "write" }],
    });
    await c.waitForUpdate((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "w1");
    while (c.permissionRequests.length < 2) await new Promise((r) => setTimeout(r, 20));
    await c.agent.notify("session/cancel", { sessionId });
    expect((await second).stopReason).toBe("cancelled");
    await expect(readFile(path.join(project, "b.txt"), "utf8")).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it("session/load replays the history as updates, and the session goes on", async () => {
    const { project, env } = await world([
      {
        type: "reply",
        text: "Looking.",
        toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "a.txt" } }],
      },
      { type: "reply", text: "It says one and two." },
      { type: "reply", text: "Still here." },
    ]);
    const first = client({ cwd: project, env });
    await initialize(first);
    const { sessionId } = await first.agent.request("session/new", { cwd: project, mcpServers: [] });
    await first.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "what is in a.txt?" }],
    });
    expect(await first.close()).toBe(0);

    const second = client({ cwd: project, env });
    await initialize(second);
    const loaded = await second.agent.request("session/load", { sessionId, cwd: project, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("default");
    // Everything replayed arrived before the response.
    const replayed = second.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
    expect(replayed.map((u) => u.sessionUpdate).filter((k) => k !== "available_commands_update")).toEqual([
      "user_message_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
    expect(text(second.updates, "user_message_chunk")).toBe("what is in a.txt?");
    expect(text(second.updates)).toBe("Looking.It says one and two.");
    expect(replayed[2]).toMatchObject({ toolCallId: "r1", kind: "read", title: "Read a.txt" });
    expect(replayed[3]).toMatchObject({ toolCallId: "r1", status: "completed" });
    const again = await second.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "and?" }],
    });
    expect(again.stopReason).toBe("end_turn");
    expect(text(second.updates)).toContain("Still here.");

    const missing = await second.agent
      .request("session/load", {
        sessionId: "0193a1b2-0000-7000-8000-000000000000",
        cwd: project,
        mcpServers: [],
      })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: -32002 });
    expect((missing as Error).message).toMatch(/no session "0193a1b2/);
  }, 60_000);

  it("reads and writes go through the editor's buffers when it offers fs, still scoped and guarded", async () => {
    const { project, env } = await world(
      [
        {
          type: "reply",
          toolCalls: [
            { id: "f1", name: "read_file", arguments: { path: "a.txt" } },
            { id: "f2", name: "read_file", arguments: { path: "../outside.txt" } },
          ],
        },
        {
          type: "reply",
          toolCalls: [
            {
              id: "f3",
              name: "edit_file",
              arguments: { path: "a.txt", old_string: "unsaved", new_string: "saved" },
            },
          ],
        },
        { type: "reply", text: "edited the buffer" },
      ],
      { "a.txt": "on disk\n", "../outside.txt": "secret\n" },
    );
    const file = path.join(project, "a.txt");
    const buffers = new Map([[file, "unsaved buffer text\n"]]);
    const c = client({ cwd: project, env, buffers, args: ["--permission-mode", "acceptEdits"] });
    await initialize(c, FS_CAPABILITIES);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "edit" }],
    });
    expect(response.stopReason).toBe("end_turn");
    // The model saw the unsaved buffer; the outside path never reached the editor.
    const results = kinds(c.updates, "tool_call_update") as acp.ToolCallUpdate[];
    const read = results.find((u) => u.toolCallId === "f1" && u.status === "completed");
    expect(JSON.stringify(read?.content)).toContain("unsaved buffer text");
    expect(results.filter((u) => u.toolCallId === "f2").at(-1)?.status).toBe("failed");
    // Reads of the buffer (read_file, edit_file, and where the edit is for the editor to follow), one write.
    expect(c.fsCalls.filter((call) => call.startsWith("write"))).toEqual([`write ${file}`]);
    expect(c.fsCalls.every((call) => call.endsWith(` ${file}`))).toBe(true);
    expect(buffers.get(file)).toBe("saved buffer text\n");
    // The editor holds the edit; the disk is the editor's to save.
    expect(await readFile(file, "utf8")).toBe("on disk\n");
  }, 60_000);

  it("bad input gets JSON-RPC errors, never a crash, and the log keeps what was acknowledged", async () => {
    const { project, env, home } = await world([
      stalls("A slow answer that is still being written when the second prompt arrives."),
    ]);
    const c = client({ cwd: project, env });
    await initialize(c);
    c.writeRaw("this is not json\n");
    const unknown = await c.agent.request("session/fly", {}).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: -32601 });
    const relative = await c.agent
      .request("session/new", { cwd: "project", mcpServers: [] })
      .catch((e: unknown) => e);
    expect(relative).toMatchObject({ code: -32602 });
    expect((relative as Error).message).toMatch(/cwd must be an absolute path/);
    const gone = await c.agent
      .request("session/new", { cwd: path.join(project, "nowhere"), mcpServers: [] })
      .catch((e: unknown) => e);
    expect((gone as Error).message).toMatch(/cwd \/.*\/nowhere is not a directory/);
    const noSession = await c.agent
      .request("session/prompt", { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] })
      .catch((e: unknown) => e);
    expect(noSession).toMatchObject({ code: -32002, data: { sessionId: "nope" } });

    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const badMode = await c.agent
      .request("session/set_mode", { sessionId, modeId: "yolo" })
      .catch((e: unknown) => e);
    expect((badMode as Error).message).toMatch(/unknown mode "yolo"; one of default, acceptEdits, plan/);
    const first = c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "first" }] });
    await c.waitForUpdate((u) => u.sessionUpdate === "agent_message_chunk");
    const second = await c.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "second" }] })
      .catch((e: unknown) => e);
    expect(second).toMatchObject({ code: -32600 });
    expect((second as Error).message).toMatch(
      /already answering a prompt; wait for its response or send session\/cancel/,
    );
    await c.agent.notify("session/cancel", { sessionId });
    expect((await first).stopReason).toBe("cancelled");

    // The malformed line got a parse error; the process lived on and exits cleanly.
    expect(c.stdoutLines.some((l) => /"code":-32700/.test(l))).toBe(true);
    expect(await c.close()).toBe(0);
    onlyJsonRpc(c);
    const log = await sessionLog(home, sessionId);
    expect(log.warnings).toEqual([]);
    const inputs = log.records.filter((r) => r.type === "user_input");
    expect(inputs).toHaveLength(1);
  }, 60_000);

  it("the editor's MCP servers start like configured ones; commands are yoi's, the project's and MCP prompts", async () => {
    const { project, env, server } = await world([{ type: "reply", text: "hello" }], {
      ".yoi/commands/greet.md":
        "---\ndescription: Greet someone\nargument-hint: <name> <language>\n---\nSay hello to $1 in $2.\n",
    });
    const c = client({ cwd: project, env });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", {
      cwd: project,
      mcpServers: [{ name: "ev", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] }],
    });
    const withMcp = await c.waitForUpdate(
      (u) =>
        u.sessionUpdate === "available_commands_update" &&
        u.availableCommands.some((x) => x.name === "mcp__ev__args-prompt"),
    );
    const names = "availableCommands" in withMcp ? withMcp.availableCommands.map((x) => x.name) : [];
    expect(names.slice(0, 3)).toEqual(["compact", "init", "greet"]);
    expect("availableCommands" in withMcp && withMcp.availableCommands[2]).toMatchObject({
      description: "Greet someone (project)",
      input: { hint: "<name> <language>" },
    });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "/greet Ann French" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(JSON.stringify(server.requests[0])).toContain("Say hello to Ann in French.");
    const missing = await c.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/mcp__ev__args-prompt" }] })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: -32602 });
    expect((missing as Error).message).toMatch(/missing city.*nothing was sent/);
  }, 60_000);

  it("a prompt's image, linked file and embedded context reach the model; audio is refused", async () => {
    const { project, env, server } = await world([{ type: "reply", text: "seen" }], {
      "a.txt": "linked file text\n",
    });
    const c = client({ cwd: project, env });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "look at these" },
        { type: "image", mimeType: "image/png", data: ONE_PIXEL_PNG },
        { type: "resource_link", uri: pathToFileURL(path.join(project, "a.txt")).href, name: "a.txt" },
        {
          type: "resource",
          resource: { uri: pathToFileURL(path.join(project, "b.ts")).href, text: "const unsaved = 1;\n" },
        },
      ],
    });
    expect(response.stopReason).toBe("end_turn");
    const sent = JSON.stringify(server.requests[0]);
    expect(sent).toContain("[File: a.txt]");
    expect(sent).toContain("linked file text");
    expect(sent).toContain("[Context: b.ts]");
    expect(sent).toContain("const unsaved = 1;");
    expect(sent).toContain('"media_type":"image/png"');
    expect(sent).toContain(ONE_PIXEL_PNG);
    const audio = await c.agent
      .request("session/prompt", {
        sessionId,
        prompt: [{ type: "audio", mimeType: "audio/wav", data: "AAAA" }],
      })
      .catch((e: unknown) => e);
    expect(audio).toMatchObject({ code: -32602 });
    expect((audio as Error).message).toMatch(/does not take audio/);
    const empty = await c.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "  " }] })
      .catch((e: unknown) => e);
    expect((empty as Error).message).toMatch(/the prompt is empty/);
  }, 60_000);

  it("an editor that goes away while asking counts as a denial; the log is whole", async () => {
    const { project, env, home } = await world([
      {
        type: "reply",
        toolCalls: [{ id: "d1", name: "write_file", arguments: { path: "d.txt", content: "d" } }],
      },
    ]);
    const c = client({ cwd: project, env, permission: () => new Promise(() => {}) });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    void c.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write" }] })
      .catch(() => {});
    while (c.permissionRequests.length === 0) await new Promise((r) => setTimeout(r, 20));
    expect(await c.close()).toBe(0);
    await expect(readFile(path.join(project, "d.txt"), "utf8")).rejects.toThrow(/ENOENT/);
    const log = await sessionLog(home, sessionId);
    expect(log.warnings).toEqual([]);
    expect(JSON.stringify(log.records)).not.toContain('"Created d.txt');
  }, 60_000);

  it("a request before initialize, and a session without a key, are errors that say what to do", async () => {
    const { project, home } = await world([]);
    const c = client({ cwd: project, env: cleanEnv(home) });
    const early = await c.agent
      .request("session/new", { cwd: project, mcpServers: [] })
      .catch((e: unknown) => e);
    expect(early).toMatchObject({ code: -32600 });
    await initialize(c);
    const noKey = await c.agent
      .request("session/new", { cwd: project, mcpServers: [] })
      .catch((e: unknown) => e);
    expect(noKey).toMatchObject({ code: -32602 });
    expect((noKey as Error).message).toMatch(
      /no API key for anthropic: run yoi setup, or set ANTHROPIC_API_KEY/,
    );
    expect(await c.close()).toBe(0);
    onlyJsonRpc(c);
  }, 60_000);

  it("--append-system-prompt and --max-turns given to yoi acp apply to its sessions", async () => {
    const list = (id: string) => ({
      type: "reply" as const,
      toolCalls: [{ id, name: "list_dir", arguments: { path: "." } }],
    });
    const { project, env, server } = await world([list("l1"), list("l2"), list("l3")]);
    const c = client({
      cwd: project,
      env,
      args: ["--append-system-prompt", "Answer in French.", "--max-turns", "2"],
    });
    await initialize(c);
    const created = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "list it" }],
    });
    expect(response.stopReason).toBe("max_turn_requests");
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify((server.requests[0] as { system?: unknown }).system)).toContain(
      "Answer in French.",
    );
    expect(await c.close()).toBe(0);
  }, 60_000);

  it("bash output streams into its tool call while the command runs", async () => {
    const { project, env } = await world([
      {
        type: "reply",
        toolCalls: [
          { id: "o1", name: "bash", arguments: { command: "echo first-line; sleep 2; echo second-line" } },
        ],
      },
      { type: "reply", text: "ran it" },
    ]);
    const c = client({ cwd: project, env, permission: allow("allow_once") });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "run" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const updates = (kinds(c.updates, "tool_call_update") as acp.ToolCallUpdate[]).filter(
      (u) => u.toolCallId === "o1",
    );
    const done = updates.findIndex((u) => u.status === "completed");
    // Before the call completed, an update showed the first line and not yet the second.
    const live = updates.slice(0, done).map((u) => JSON.stringify(u.content ?? ""));
    expect(live.some((t) => t.includes("first-line") && !t.includes("second-line"))).toBe(true);
    expect(JSON.stringify(updates[done]?.content)).toContain("second-line");
  }, 60_000);

  it("a web search at the provider is a search tool call: running with its query, completed with the pages", async () => {
    const lines = readFileSync(
      fileURLToPath(
        new URL(
          "../../../fixtures/provider-streams/anthropic/anthropic-web-search-tool.1.chunks.txt",
          import.meta.url,
        ),
      ),
      "utf8",
    )
      .split("\n")
      .filter((l) => l.trim() !== "");
    const { project, env } = await world([{ type: "lines", lines }]);
    const c = client({
      cwd: project,
      env,
      args: ["--allow-tool", "web_search"],
      permission: allow("allow_once"),
    });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "tech news today?" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const id = "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k";
    const started = (kinds(c.updates, "tool_call") as acp.ToolCall[]).filter((u) => u.toolCallId === id);
    expect(started).toEqual([
      expect.objectContaining({
        kind: "search",
        status: "in_progress",
        title: 'Searching the web: "tech news today September 26 2025"…',
        rawInput: { query: "tech news today September 26 2025" },
      }),
    ]);
    const [done] = (kinds(c.updates, "tool_call_update") as acp.ToolCallUpdate[]).filter(
      (u) => u.toolCallId === id,
    );
    expect(done).toMatchObject({
      status: "completed",
      title: 'Searched the web: "tech news today September 26 2025" (10 results)',
    });
    expect(JSON.stringify(done?.content)).toContain("https://9to5mac.com/2025/09/22/ios-26-1-beta-1/");
    expect(text(c.updates).startsWith("Based on my search results")).toBe(true);
    onlyJsonRpc(c);
    expect(await c.close()).toBe(0);

    // session/load shows the search again, where it was, before the answer.
    const again = client({ cwd: project, env, args: ["--allow-tool", "web_search"] });
    await initialize(again);
    await again.agent.request("session/load", { sessionId, cwd: project, mcpServers: [] });
    const replayed = again.updates
      .map((n) => n.update)
      .filter((u) => u.sessionUpdate !== "available_commands_update")
      .slice(0, 4);
    expect(replayed.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
    expect(replayed[1]).toMatchObject({ toolCallId: id, kind: "search" });
    expect(replayed[2]).toMatchObject({ toolCallId: id, status: "completed" });
  }, 60_000);

  it("plan mode hands over through the editor: the chosen mode follows, and edits go on in it", async () => {
    const { project, env } = await world([
      {
        type: "reply",
        toolCalls: [{ id: "x1", name: "exit_plan_mode", arguments: { plan: "1. write c.txt" } }],
      },
      {
        type: "reply",
        toolCalls: [{ id: "x2", name: "write_file", arguments: { path: "c.txt", content: "c" } }],
      },
      { type: "reply", text: "done" },
    ]);
    const c = client({
      cwd: project,
      env,
      permission: allow("acceptEdits"),
      args: ["--permission-mode", "plan"],
    });
    await initialize(c);
    const created = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    expect(created.modes?.currentModeId).toBe("plan");
    const response = await c.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "plan it, then do it" }],
    });
    expect(response.stopReason).toBe("end_turn");
    // One question, the plan's: the write then ran without asking, in acceptEdits.
    expect(c.permissionRequests).toHaveLength(1);
    const question = c.permissionRequests[0];
    expect(question?.toolCall).toMatchObject({ kind: "switch_mode", title: "Ready to code?" });
    expect(JSON.stringify(question?.toolCall.content)).toContain("1. write c.txt");
    expect(question?.options.map((o) => o.optionId)).toEqual(["acceptEdits", "default", "reject"]);
    expect(kinds(c.updates, "current_mode_update")).toEqual([
      { sessionUpdate: "current_mode_update", currentModeId: "acceptEdits" },
    ]);
    expect(await readFile(path.join(project, "c.txt"), "utf8")).toBe("c");
  }, 60_000);

  it("set_mode plan refuses edits without asking; an unknown flag is a usage error", async () => {
    const { project, env } = await world([
      {
        type: "reply",
        toolCalls: [{ id: "p1", name: "write_file", arguments: { path: "c.txt", content: "c" } }],
      },
      { type: "reply", text: "planned" },
    ]);
    const c = client({ cwd: project, env, permission: allow("allow_once") });
    await initialize(c);
    const { sessionId } = await c.agent.request("session/new", { cwd: project, mcpServers: [] });
    await c.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    const response = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "plan" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(c.permissionRequests).toEqual([]);
    await expect(readFile(path.join(project, "c.txt"), "utf8")).rejects.toThrow(/ENOENT/);

    const bad = startAcp({ cwd: project, env, args: ["--output", "json"] });
    clients.push(bad);
    expect(await new Promise((resolve) => bad.child.on("close", resolve))).toBe(2);
    expect(bad.stderr()).toMatch(/--output does not apply to yoi acp/);
  }, 60_000);
});
