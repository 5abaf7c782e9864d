// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the config syntax under test.
/**
 * MCP servers in a pod, against the real reference servers (stdio and
 * Streamable HTTP) and a small server on the official SDK, with the model
 * played by a scripted Anthropic server on 127.0.0.1 through the real SDK.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { createClient, type Item } from "@yoi/llm-client";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { type ConfigInput, ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import { trackedChildren } from "../../src/mcp/child-reaper.ts";
import { Pod, type PodOptions } from "../../src/pod.ts";
import { tempDir } from "../helpers.ts";
import { startAuthServer } from "./fixtures/auth-http-server.ts";
import { alive, everythingStdio, FILESYSTEM, MEMORY, NODE, startEverythingHttp } from "./servers.ts";

const FIXTURE = new URL("./fixtures/changing-server.mjs", import.meta.url).pathname;
const servers: ScriptedServer[] = [];
const pods: Pod[] = [];
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
  for (const stop of stops.splice(0)) await stop();
});

async function model(
  script: ScriptStep[] | ((index: number, body: unknown) => ScriptStep),
): Promise<ScriptedServer> {
  const s = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(s);
  return s;
}

async function openPod(
  s: ScriptedServer,
  config: ConfigInput,
  options: Partial<PodOptions> = {},
): Promise<Pod> {
  const dir = await tempDir();
  const pod = await Pod.create({
    config: ConfigSchema.parse(config),
    cwd: dir,
    dataDir: path.join(dir, ".data"),
    client: createClient({
      provider: "anthropic",
      model: "claude-haiku-4-5",
      apiKey: "test-key",
      baseURL: s.baseURL,
      retry: { maxAttempts: 1 },
    }),
    ...options,
  });
  pods.push(pod);
  return pod;
}

const allowMcp = { permissions: { rules: [{ tool: "mcp__*", action: "allow" as const }] } };

function results(history: readonly Item[]): Record<string, { output: string; isError: boolean }> {
  const out: Record<string, { output: string; isError: boolean }> = {};
  for (const item of history)
    if (item.type === "tool_result") out[item.callId] = { output: item.output, isError: item.isError };
  return out;
}

function toolsSent(
  s: ScriptedServer,
  index: number,
): { name: string; input_schema: Record<string, unknown> }[] {
  return (
    (s.requests[index] as { tools?: { name: string; input_schema: Record<string, unknown> }[] }).tools ?? []
  );
}

describe("MCP servers in a pod", () => {
  it("a subagent (task) gets the MCP tools of the servers that are up, under the same rules", async () => {
    const s = await model([
      {
        type: "reply",
        toolCalls: [
          { id: "t_task", name: "task", arguments: { description: "echo", prompt: "echo via mcp" } },
        ],
      },
      // the child's turns
      {
        type: "reply",
        toolCalls: [{ id: "c_echo", name: "mcp__ev__echo", arguments: { message: "from child" } }],
      },
      { type: "reply", text: "child heard: Echo: from child" },
      // the parent's last turn
      { type: "reply", text: "done" },
    ]);
    const pod = await openPod(s, { mcpServers: { ev: everythingStdio() }, ...allowMcp });
    const result = await pod.run("delegate");
    expect(result.status).toBe("completed");
    // The child's request offered the MCP tool, and its result reached the child.
    expect(toolsSent(s, 1).map((t) => t.name)).toContain("mcp__ev__echo");
    expect(JSON.stringify(s.requests[2])).toContain("Echo: from child");
    expect(results(pod.history).t_task?.output).toContain("child heard: Echo: from child");
  }, 60_000);

  it("offers a stdio server's tools as mcp__<server>__<tool> with their JSON Schema and maps every kind of result", async () => {
    const s = await model([
      {
        type: "reply",
        toolCalls: [
          { id: "t_echo", name: "mcp__ev__echo", arguments: { message: "hello mcp" } },
          { id: "t_sum", name: "mcp__ev__get-sum", arguments: { a: 2, b: 40 } },
          { id: "t_img", name: "mcp__ev__get-tiny-image", arguments: {} },
          { id: "t_struct", name: "mcp__ev__get-structured-content", arguments: { location: "Chicago" } },
          { id: "t_links", name: "mcp__ev__get-resource-links", arguments: { count: 2 } },
          { id: "t_bad", name: "mcp__ev__get-sum", arguments: { a: "two" } },
        ],
      },
      { type: "reply", text: "done" },
    ]);
    const pod = await openPod(s, { mcpServers: { ev: everythingStdio() }, ...allowMcp });
    const result = await pod.run("use the tools");
    expect(result.status).toBe("completed");
    const sum = toolsSent(s, 0).find((t) => t.name === "mcp__ev__get-sum");
    expect(sum?.input_schema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
    });
    const r = results(pod.history);
    expect(r.t_echo).toEqual({ output: "Echo: hello mcp", isError: false });
    expect(r.t_sum?.output).toContain("42");
    expect(r.t_img?.output).toMatch(/\[image: image\/png, [\d.]+ (KB|bytes), kept as \[blob:[0-9a-f-]{36}\]/);
    expect(r.t_struct?.output).toMatch(/"temperature"/);
    expect(r.t_links?.output).toMatch(
      /\[resource link: .*<demo:\/\/resource\/dynamic\/text\/2>.*attach with @ev:demo:\/\/resource\/dynamic\/text\/2\]/,
    );
    // The server rejects bad arguments; the model gets its message as an error result.
    expect(r.t_bad?.isError).toBe(true);
    expect(r.t_bad?.output).toMatch(/b|number|Invalid/i);
    // The image bytes are kept and readable.
    const blobId = /blob:([0-9a-f-]{36})/.exec(r.t_img!.output)![1]!;
    const stored = await pod.worker.tools
      .find((t) => t.name === "inspect")!
      .execute({ blob_id: blobId, selector: "key:mimeType" }, {} as never);
    expect(String(stored)).toContain("image/png");
  }, 90_000);

  it("asks before an MCP tool by default and honours name globs in rules", async () => {
    const s = await model([
      { type: "reply", toolCalls: [{ id: "a", name: "mcp__ev__echo", arguments: { message: "x" } }] },
      { type: "reply", text: "ok" },
      { type: "reply", toolCalls: [{ id: "b", name: "mcp__ev__echo", arguments: { message: "y" } }] },
      { type: "reply", text: "ok" },
    ]);
    const asked: string[] = [];
    const pod = await openPod(
      s,
      {
        mcpServers: { ev: everythingStdio() },
        permissions: { rules: [{ tool: "mcp__other__*", action: "allow" }] },
      },
      {
        ask: async (request) => {
          asked.push(request.tool);
          return asked.length === 1 ? "deny" : "allow";
        },
      },
    );
    await pod.run("first");
    expect(asked).toEqual(["mcp__ev__echo"]);
    expect(results(pod.history).a?.isError).toBe(true);
    await pod.run("second");
    expect(results(pod.history).b).toEqual({ output: "Echo: y", isError: false });
  }, 90_000);

  it("talks Streamable HTTP, with ${VAR} headers expanded and never written to the session log", async () => {
    const http = await startEverythingHttp();
    stops.push(http.stop);
    const s = await model([
      {
        type: "reply",
        toolCalls: [{ id: "h", name: "mcp__web__echo", arguments: { message: "over http" } }],
      },
      { type: "reply", text: "ok" },
    ]);
    const pod = await openPod(
      s,
      {
        mcpServers: { web: { url: http.url, headers: { Authorization: "Bearer ${DOCS_TOKEN}" } } },
        ...allowMcp,
      },
      { env: { ...process.env, DOCS_TOKEN: "secret-token-123" } },
    );
    await pod.run("go");
    expect(results(pod.history).h).toEqual({ output: "Echo: over http", isError: false });
    expect(pod.mcp.status()[0]).toMatchObject({ name: "web", state: "ready", transport: "http" });
    await pod.flush();
    const { readFile } = await import("node:fs/promises");
    const log = await readFile(pod.log!.path, "utf8");
    expect(log).not.toContain("secret-token-123");
    expect(log).not.toContain("DOCS_TOKEN");
  }, 90_000);

  it("sends ${VAR} headers to an HTTP server that requires them; a wrong token is one message naming the server", async () => {
    const auth = await startAuthServer("tok-1234567");
    stops.push(auth.close);
    const s = await model([
      { type: "reply", toolCalls: [{ id: "w", name: "mcp__docs__whoami", arguments: {} }] },
      { type: "reply", text: "ok" },
    ]);
    const pod = await openPod(
      s,
      {
        mcpServers: {
          docs: { url: auth.url, headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
          stale: { url: auth.url, headers: { Authorization: "Bearer wrong" } },
          unset: { url: auth.url, headers: { Authorization: "Bearer ${NOT_SET_ANYWHERE}" } },
        },
        ...allowMcp,
      },
      { env: { DOCS_TOKEN: "tok-1234567" } },
    );
    const alerts: string[] = [];
    pod.alerts.subscribe((a) => alerts.push(a.message));
    await pod.run("who am I");
    expect(results(pod.history).w).toEqual({ output: "authorized as tok-…", isError: false });
    const states = Object.fromEntries(pod.mcp.status().map((st) => [st.name, st.state]));
    expect(states).toEqual({ docs: "ready", stale: "failed", unset: "failed" });
    expect(alerts.find((a) => a.includes('"stale"'))).toBe(
      'MCP server "stale" refused the connection with HTTP 401 (check its headers: the token may be wrong or missing); the session goes on without it',
    );
    expect(alerts.find((a) => a.includes('"unset"'))).toBe(
      'MCP server "unset" is not configured: ${NOT_SET_ANYWHERE} is not set in the environment (set it, or write ${NOT_SET_ANYWHERE:-default}); the session goes on without it',
    );
  }, 90_000);

  it("stores a 6 MB result (filesystem server) and the model reads it back with inspect", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "big.txt");
    // 6 MB: over the SDK default buffer once the server sends it as text and as structured content.
    await writeFile(file, `${`${"x".repeat(99)}\n`.repeat(60_000)}the end\n`);
    const blobIn = (body: unknown) =>
      /(?:blob:|ref=)([0-9a-f-]{36})/.exec(JSON.stringify(body))?.[1] ?? "none";
    const s = await model((index, body): ScriptStep => {
      if (index === 0)
        return {
          type: "reply",
          toolCalls: [{ id: "big", name: "mcp__fs__read_text_file", arguments: { path: file } }],
        };
      if (index === 1)
        return {
          type: "reply",
          toolCalls: [
            {
              id: "look",
              name: "inspect",
              arguments: { blob_id: blobIn(body), selector: "lines:60001-60001" },
            },
          ],
        };
      return { type: "reply", text: "ok" };
    });
    const pod = await openPod(s, {
      mcpServers: { fs: { command: NODE, args: [FILESYSTEM, dir] } },
      ...allowMcp,
    });
    await pod.run("read the big file");
    const r = results(pod.history);
    expect(r.big?.isError).toBe(false);
    // Stored, as a built-in tool's large output is: history holds a bounded view and the ref.
    expect(r.big?.output).toMatch(/(blob:|ref=)[0-9a-f-]{36}/);
    expect(r.big!.output.length).toBeLessThan(100_000);
    expect(r.look).toEqual({ output: expect.stringContaining("the end"), isError: false });
  }, 90_000);

  it("uses the memory server across calls", async () => {
    const s = await model([
      {
        type: "reply",
        toolCalls: [
          {
            id: "c",
            name: "mcp__mem__create_entities",
            arguments: {
              entities: [{ name: "yoi", entityType: "project", observations: ["written in TypeScript"] }],
            },
          },
        ],
      },
      { type: "reply", toolCalls: [{ id: "r", name: "mcp__mem__read_graph", arguments: {} }] },
      { type: "reply", text: "ok" },
    ]);
    const dir = await tempDir();
    const pod = await openPod(s, {
      mcpServers: {
        mem: { command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") } },
      },
      ...allowMcp,
    });
    await pod.run("remember");
    expect(results(pod.history).r?.output).toContain("written in TypeScript");
  }, 90_000);

  it("cancels a long-running call with the turn", async () => {
    const s = await model([
      {
        type: "reply",
        toolCalls: [
          {
            id: "long",
            name: "mcp__ev__trigger-long-running-operation",
            arguments: { duration: 60, steps: 60 },
          },
        ],
      },
      { type: "reply", text: "never" },
    ]);
    const pod = await openPod(s, { mcpServers: { ev: everythingStdio() }, ...allowMcp });
    pod.subscribe((event) => {
      if (event.type === "tool_call_start") setTimeout(() => pod.cancel("stop"), 500);
    });
    const started = Date.now();
    const result = await pod.run("go");
    expect(result.status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(30_000);
    // The server is still usable afterwards.
    expect(pod.mcp.status()[0]?.state).toBe("ready");
  }, 90_000);

  it("honours tools/list_changed and reports a server that dies once, with its stderr, then goes on", async () => {
    const s = await model([
      { type: "reply", toolCalls: [{ id: "add", name: "mcp__ch__add_tool", arguments: {} }] },
      { type: "reply", toolCalls: [{ id: "late", name: "mcp__ch__late", arguments: {} }] },
      { type: "reply", toolCalls: [{ id: "die", name: "mcp__ch__die", arguments: {} }] },
      { type: "reply", text: "after death" },
      { type: "reply", text: "still here" },
    ]);
    const pod = await openPod(s, { mcpServers: { ch: { command: NODE, args: [FIXTURE] } }, ...allowMcp });
    const alerts: string[] = [];
    pod.alerts.subscribe((a) => alerts.push(`${a.level} ${a.source}: ${a.message}`));
    await pod.run("change");
    expect(toolsSent(s, 0).map((t) => t.name)).not.toContain("mcp__ch__late");
    expect(toolsSent(s, 1).map((t) => t.name)).toContain("mcp__ch__late");
    expect(results(pod.history).late?.output).toBe("late tool ran");
    // Wait for the exit to be noticed.
    for (let i = 0; i < 100 && pod.mcp.status()[0]?.state !== "failed"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(pod.mcp.status()[0]).toMatchObject({ state: "failed" });
    const reported = alerts.filter((a) => a.includes('"ch"'));
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatch(
      /^error mcp: MCP server "ch" stopped unexpectedly.*dying on purpose.*goes on without it/,
    );
    const result = await pod.run("next");
    expect(result.status).toBe("completed");
    expect(
      toolsSent(s, 4)
        .map((t) => t.name)
        .some((n) => n.startsWith("mcp__ch__")),
    ).toBe(false);
  }, 90_000);

  it("a malformed entry, a missing binary, a garbage server and one not there: one message each naming it; the session goes on", async () => {
    const s = await model([{ type: "reply", text: "fine" }]);
    // A web server that is no MCP server: 200 with a page.
    const { createServer } = await import("node:http");
    const web = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end("<html>hi</html>"),
    );
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    stops.push(() => new Promise((resolve) => web.close(() => resolve())));
    const webPort = (web.address() as { port: number }).port;
    // A port nothing listens on (bound, then released): the system's reason, not fetch's "fetch failed", is shown.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const gonePort = (gone.address() as { port: number }).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const pod = await openPod(s, {
      mcpServers: {
        typo: { comand: "node" },
        missing: { command: "/nonexistent/yoi-mcp-server" },
        junk: { command: NODE, args: [FIXTURE, "garbage"] },
        notmcp: { url: `http://127.0.0.1:${webPort}/mcp` },
        gone: { url: `http://127.0.0.1:${gonePort}/mcp` },
        crash: { command: NODE, args: ["-e", "console.error('boom: no API_URL set'); process.exit(1)"] },
        ev: everythingStdio(),
      },
    });
    const alerts: string[] = [];
    pod.alerts.subscribe((a) => alerts.push(a.message));
    await pod.mcp.ready();
    const result = await pod.run("hello");
    expect(result.status).toBe("completed");
    expect(alerts.find((a) => a.startsWith("mcpServers.typo"))).toBe(
      'mcpServers.typo: expected "command" (a program yoi starts) or "url" (a Streamable HTTP server); neither is set (found "comand"); the server is skipped (fix the entry in your config)',
    );
    expect(alerts.find((a) => a.includes('"missing"'))).toMatch(
      /MCP server "missing" could not start: the program "\/nonexistent\/yoi-mcp-server" was not found/,
    );
    expect(alerts.find((a) => a.includes('"junk"'))).toMatch(
      /MCP server "junk" answered something that is not MCP.*stderr ends: garbage server: about to talk nonsense/,
    );
    expect(alerts.find((a) => a.includes('"notmcp"'))).toBe(
      'MCP server "notmcp" answered something that is not MCP (Unexpected content type: text/html); the session goes on without it',
    );
    expect(alerts.find((a) => a.includes('"gone"'))).toBe(
      `MCP server "gone" could not be reached at http://127.0.0.1:${gonePort}/mcp (connect ECONNREFUSED 127.0.0.1:${gonePort}); the session goes on without it`,
    );
    expect(alerts.find((a) => a.includes('"crash"'))).toBe(
      'MCP server "crash" exited before it finished starting; its stderr ends: boom: no API_URL set; the session goes on without it',
    );
    expect(alerts.filter((a) => /typo|missing|junk|notmcp|gone|crash/.test(a))).toHaveLength(6);
    const states = Object.fromEntries(pod.mcp.status().map((st) => [st.name, st.state]));
    expect(states).toEqual({
      typo: "failed",
      missing: "failed",
      junk: "failed",
      notmcp: "failed",
      gone: "failed",
      crash: "failed",
      ev: "ready",
    });
    expect(toolsSent(s, 0).some((t) => t.name === "mcp__ev__echo")).toBe(true);
  }, 90_000);

  it("ends stdio server processes when the pod closes", async () => {
    const s = await model([]);
    const before = new Set(trackedChildren());
    const pod = await openPod(s, { mcpServers: { ev: everythingStdio() } });
    await pod.mcp.ready();
    const pids = trackedChildren().filter((p) => !before.has(p));
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(true);
    await pod.close();
    expect(alive(pids[0]!)).toBe(false);
    expect(trackedChildren()).not.toContain(pids[0]);
  }, 90_000);

  it("attaches a resource with @<server>:<uri> and renders a prompt", async () => {
    const s = await model([{ type: "reply", text: "seen" }]);
    const pod = await openPod(s, { mcpServers: { ev: everythingStdio() } });
    await pod.mcp.ready();
    await pod.run("look at @ev:demo://resource/dynamic/text/1 please");
    const attached = pod.history.find((i) => i.type === "message" && i.role === "system");
    expect(JSON.stringify(attached)).toContain("[Resource: ev:demo://resource/dynamic/text/1]");
    expect(pod.mcp.prompts().map((p) => p.command)).toContain("mcp__ev__args-prompt");
    const text = await pod.mcp.renderPrompt("mcp__ev__args-prompt", "Tokyo");
    expect(text).toContain("Tokyo");
    await expect(pod.mcp.renderPrompt("mcp__ev__args-prompt", "")).rejects.toThrow(
      /missing city: usage \/mcp__ev__args-prompt <city> \[state\]/,
    );
  }, 90_000);
});
