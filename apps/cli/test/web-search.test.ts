/**
 * `yoi -p` with web search, black-box on the shipped bundle against a
 * scripted Anthropic server that replays a recorded web search answer and
 * checks every request like the API: the sources are shown under the
 * answer, `--output json` / stream-json carry the search and the
 * citations, the next request of the session sends the search blocks back,
 * and without an allow (the default ask, or a deny rule) the tool is not
 * in the request.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { type ScriptedServer, type ScriptStep, startScriptedServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, FIXTURES, jsonLines, runYoi, tempWorld } from "./helpers.ts";
import { post, type ServeProcess, sseEvents, startServe } from "./serve-helpers.ts";
import { TmuxSession, waitForFile, yoiCommand } from "./tmux.ts";

const SEARCH = readFileSync(path.join(FIXTURES, "anthropic/anthropic-web-search-tool.1.chunks.txt"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "");

const servers: ScriptedServer[] = [];
const sessions: TmuxSession[] = [];
const hosts: ServeProcess[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const h of hosts.splice(0)) await h.kill();
  for (const s of servers.splice(0)) await s.close();
});

async function world(script: ScriptStep[]) {
  const server = await startScriptedServer({ provider: "anthropic", script, validate: true });
  servers.push(server);
  const { home, project } = await tempWorld();
  const env = cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.baseURL });
  const yoi = (args: string[]) =>
    runYoi(["--model", "anthropic/claude-haiku-4-5", ...args], { cwd: project, env });
  return { server, yoi };
}

/** The web search server tools a request offered. */
function searchTools(body: unknown): unknown[] {
  return ((body as { tools?: { type?: string }[] }).tools ?? []).filter((t) =>
    t.type?.startsWith("web_search"),
  );
}

const CITED = [
  "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/",
  "https://future.forem.com/junyu_fang_a216509a97501d/fang-junyus-technology-weekly-september-26-2025-2ndd",
  "https://future.forem.com/om_shree_0709/major-tech-news-september-25-2025-5h38",
  "https://9to5mac.com/2025/09/22/ios-26-1-beta-1/",
];

describe("yoi -p with web search (scripted Anthropic server)", () => {
  it("shows the sources under the answer; the next request sends the search back", async () => {
    const { server, yoi } = await world([
      { type: "lines", lines: SEARCH },
      { type: "reply", text: "The Ginza store came first." },
    ]);
    const first = await yoi(["-p", "--allow-tool", "web_search", "tech news today?"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(searchTools(server.requests[0])).toEqual([
      { type: "web_search_20250305", name: "web_search", max_uses: 5, cache_control: { type: "ephemeral" } },
    ]);
    const [answer, sources] = first.stdout.split("\n\nSources:\n");
    expect(answer!.startsWith("Based on my search results, here are the key tech news developments")).toBe(
      true,
    );
    expect(sources!.trimEnd().split("\n")).toEqual([
      `  [1] The all-new Apple Ginza opens this Friday, September 26, in Tokyo - Apple — ${CITED[0]}`,
      `  [2] Fang Junyu's Technology Weekly - September 26, 2025 - Future — ${CITED[1]}`,
      `  [3] 📰 Major Tech News: September 25, 2025 - Future — ${CITED[2]}`,
      `  [4] Apple releases first iOS 26.1 developer beta for iPhone - 9to5Mac — ${CITED[3]}`,
    ]);

    const second = await yoi(["-c", "-p", "--allow-tool", "web_search", "which story came first?"]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("The Ginza store came first.\n");
    const assistant = (server.requests[1] as { messages: { role: string; content: { type: string }[] }[] })
      .messages[1]!;
    expect(assistant.role).toBe("assistant");
    expect(assistant.content.slice(0, 2).map((b) => b.type)).toEqual([
      "server_tool_use",
      "web_search_tool_result",
    ]);
    expect(JSON.stringify(assistant)).toContain('"encrypted_content":"ErkeCioICBgCIiRiY2JjZWJjMy1lYTFh');
    // The scripted server checks a server_tool_use travels with its result, as the API does.
    expect(server.rejections).toEqual([]);
  });

  it("--output stream-json carries the search as it runs and the citations in the result", async () => {
    const { yoi } = await world([{ type: "lines", lines: SEARCH }]);
    const run = await yoi([
      "-p",
      "--output",
      "stream-json",
      "--allow-tool",
      "web_search",
      "tech news today?",
    ]);
    expect(run.code).toBe(0);
    const events = jsonLines(run.stdout);
    const searches = events.filter((e) => e.type === "server_tool");
    expect(searches.map((e) => [e.status, e.input, (e.sources as unknown[]).length])).toEqual([
      ["running", { query: "tech news today September 26 2025" }, 0],
      ["completed", { query: "tech news today September 26 2025" }, 10],
    ]);
    expect(searches[1]).toMatchObject({ id: "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k", name: "web_search" });
    const result = events.at(-1)!;
    expect(result.type).toBe("result");
    expect((result.citations as { url: string }[]).map((c) => c.url)).toEqual(CITED);
    // The search comes before the answer's text.
    expect(events.findIndex((e) => e.type === "server_tool")).toBeLessThan(
      events.findIndex((e) => e.type === "text"),
    );
  });

  it("--output json: the result carries the citations", async () => {
    const { yoi } = await world([{ type: "lines", lines: SEARCH }]);
    const run = await yoi(["-p", "--output", "json", "--allow-tool", "web_search", "tech news today?"]);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { citations: { url: string; title: string }[] };
    expect(result.citations.map((c) => c.url)).toEqual(CITED);
    expect(result.citations[3]!.title).toBe(
      "Apple releases first iOS 26.1 developer beta for iPhone - 9to5Mac",
    );
  });

  it("not in the request by default (ask) or with a deny rule, even beside an allow", async () => {
    const { server, yoi } = await world([
      { type: "reply", text: "No search." },
      { type: "reply", text: "No search either." },
    ]);
    const plain = await yoi(["-p", "tech news today?"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe("No search.\n");
    expect(searchTools(server.requests[0])).toEqual([]);
    const denied = await yoi(["-p", "--allow-tool", "web_search", "--deny-tool", "web_search", "tech news?"]);
    expect(denied.code).toBe(0);
    expect(searchTools(server.requests[1])).toEqual([]);
    // Nothing is said about it: the model never asked for a search.
    expect(plain.stderr + denied.stderr).toBe("");
  });
});

describe("yoi -p with web search (OpenAI Responses, recorded stream)", () => {
  it("prints what the answer cites; the next request sends the answer, not the search items", async () => {
    const lines = readFileSync(
      path.join(FIXTURES, "openai-responses/openai-web-search-tool.1.chunks.txt"),
      "utf8",
    )
      .split("\n")
      .filter((l) => l.trim() !== "");
    const server = await startScriptedServer({
      provider: "openai-responses",
      script: [
        { type: "lines", lines },
        { type: "reply", text: "Netflix and Warner Bros." },
      ],
      validate: true,
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const env = cleanEnv(home, { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseURL });
    const yoi = (args: string[]) =>
      runYoi(["--model", "openai/gpt-5-mini", "--allow-tool", "web_search", ...args], { cwd: project, env });
    const first = await yoi(["-p", "--output", "json", "tech news today?"]);
    expect(first.code).toBe(0);
    expect((server.requests[0] as { tools?: unknown[] }).tools).toContainEqual({ type: "web_search" });
    const result = JSON.parse(first.stdout) as { text: string; citations: { url: string }[] };
    expect(result.text.startsWith("I checked today’s tech headlines")).toBe(true);
    // 12 annotations on 7 pages, each url once.
    expect(result.citations).toHaveLength(7);
    const second = await yoi(["-c", "-p", "which deal was biggest?"]);
    expect(second.code).toBe(0);
    const input = (server.requests[1] as { input: { type?: string; role?: string }[] }).input;
    expect(input.some((i) => i.type === "web_search_call")).toBe(false);
    expect(input.filter((i) => i.role === "assistant")).toHaveLength(1);
    expect(server.rejections).toEqual([]);
  });
});

describe("yoi serve with web search", () => {
  it("the run's stream carries the search and the result its citations", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "lines", lines: SEARCH }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const env = cleanEnv(home, { ANTHROPIC_API_KEY: "test-key", YOI_TRUST_PROJECT: "1" });
    const host = await startServe(["--allow-tool", "web_search"], env, project);
    hosts.push(host);
    const created = await post(`${host.url}/v1/sessions`, {
      model: "anthropic/claude-haiku-4-5",
      baseUrl: server.baseURL,
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const run = await post(`${host.url}/v1/sessions/${id}/runs`, { prompt: "tech news today?" });
    expect(run.status).toBe(200);
    const data: Record<string, unknown>[] = [];
    for await (const event of sseEvents(run)) data.push(event.data as Record<string, unknown>);
    expect(data.filter((e) => e.type === "server_tool").map((e) => e.status)).toEqual([
      "running",
      "completed",
    ]);
    expect(data.at(-1)).toMatchObject({ type: "result", status: "completed" });
    expect((data.at(-1)!.citations as { url: string }[]).map((c) => c.url)).toEqual(CITED);
    expect(searchTools(server.requests[0])).toHaveLength(1);
  });
});

describe.skipIf(!TmuxSession.available())("the interactive screen (tmux)", () => {
  it("shows the search with its query and result count, and the sources under the answer", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [{ type: "lines", lines: SEARCH }],
    });
    servers.push(server);
    const { home, project } = await tempWorld();
    const out = path.join(home, "run");
    const tty = TmuxSession.start(
      yoiCommand({ project, home, baseURL: server.baseURL, args: ["--allow-tool", "web_search"], out }),
      { width: 200, height: 120 },
    );
    sessions.push(tty);
    await tty.waitFor(/^›\s*$/m);
    tty.type("tech news today?");
    tty.keys("Enter");
    const screen = await tty.waitFor("[4] Apple releases first iOS 26.1");
    expect(screen).toContain('✓ Searched the web: "tech news today September 26 2025" (10 results)');
    // The search line comes before the answer, the sources after it.
    const searched = screen.indexOf("Searched the web");
    const answer = screen.indexOf("Based on my search results");
    const sources = screen.indexOf("Sources:");
    expect(searched).toBeGreaterThanOrEqual(0);
    expect(answer).toBeGreaterThan(searched);
    expect(sources).toBeGreaterThan(answer);
    expect(screen).toContain(
      `[1] The all-new Apple Ginza opens this Friday, September 26, in Tokyo - Apple — ${CITED[0]}`,
    );
    tty.type("/exit");
    tty.keys("Enter");
    expect(await waitForFile(`${out}.exit`)).toBe("EXIT=0\n");
  }, 120_000);
});
