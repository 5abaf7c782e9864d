/**
 * Server-side web search through the real SDKs against local servers: the
 * recorded Anthropic and OpenAI Responses streams, and a Gemini server
 * speaking the documented `groundingMetadata` shape. Each provider's search
 * becomes `server_tool` events and citations on text block stops, and the
 * items built from them go back to Anthropic whole (encrypted content and
 * citation indices included) and to no one else.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildAnthropicRequest } from "../src/adapters/anthropic/request.ts";
import { buildResponsesRequest } from "../src/adapters/openai-responses/request.ts";
import { createClient } from "../src/client.ts";
import type { Event, ServerToolEvent } from "../src/event.ts";
import type { Citation, Item, ServerToolItem, TextPart } from "../src/item.ts";
import { userMessage } from "../src/item.ts";
import { type ReplayServer, startReplayServer } from "../src/testing/replay-server.ts";
import { clientFor, collect, FAST, fixtureLines } from "./stream-helpers.ts";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(provider: "anthropic" | "openai-responses" | "gemini", lines: string[]) {
  const server = await startReplayServer({ provider, lines });
  servers.push(server);
  return server;
}

/** The last state of each server tool call, in the order the calls started. */
function serverTools(events: Event[]): ServerToolItem[] {
  const byIndex = new Map<number, ServerToolItem>();
  for (const e of events) if (e.type === "server_tool") byIndex.set(e.index, e.item);
  return [...byIndex.values()];
}

/** Text blocks with their citations, as the worker turns them into message parts. */
function textParts(events: Event[]): TextPart[] {
  const text = new Map<number, string>();
  const parts: TextPart[] = [];
  for (const e of events) {
    if (e.type === "block_delta" && e.delta === "text") text.set(e.index, (text.get(e.index) ?? "") + e.text);
    if (e.type === "block_stop" && e.block === "text") {
      const part: TextPart = { type: "text", text: text.get(e.index) ?? "" };
      if (e.citations) part.citations = e.citations;
      parts.push(part);
    }
  }
  return parts;
}

describe("Anthropic web search (recorded stream)", () => {
  const lines = fixtureLines("anthropic/anthropic-web-search-tool.1.chunks.txt");

  it("reports the search when its query is complete, then its ten results", async () => {
    const server = await serve("anthropic", lines);
    const { client } = clientFor("anthropic", server.baseURL);
    const out = await collect(client.stream({ items: [userMessage("tech news today?")] }));
    expect(out.status).toBe("completed");
    const events = out.events.filter((e): e is ServerToolEvent => e.type === "server_tool");
    expect(events).toHaveLength(2);
    // Both at the call's block index 0; the first comes before the result block (index 1) starts.
    expect(events.map((e) => [e.index, e.item.status])).toEqual([
      [0, "running"],
      [0, "completed"],
    ]);
    expect(events[0]!.item).toMatchObject({
      callId: "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k",
      name: "web_search",
      arguments: '{"query": "tech news today September 26 2025"}',
      sources: [],
      provider: "anthropic",
    });
    const done = events[1]!.item;
    expect(done.sources).toHaveLength(10);
    expect(done.sources[1]).toEqual({
      url: "https://future.forem.com/junyu_fang_a216509a97501d/fang-junyus-technology-weekly-september-26-2025-2ndd",
      title: "Fang Junyu's Technology Weekly - September 26, 2025 - Future",
      pageAge: "3 hours ago",
    });
    // The raw result block is kept for the next request, encrypted content and all.
    expect(done.providerData?.resultType).toBe("web_search_tool_result");
    const content = done.providerData?.content as { encrypted_content: string }[];
    expect(content).toHaveLength(10);
    expect(content[0]!.encrypted_content.startsWith("ErkeCioICBgCIiRiY2JjZWJjMy1lYTFh")).toBe(true);
  });

  it("puts the citations_delta of each cited block on its stop", async () => {
    const server = await serve("anthropic", lines);
    const { client } = clientFor("anthropic", server.baseURL);
    const out = await collect(client.stream({ items: [userMessage("tech news today?")] }));
    const parts = textParts(out.events);
    expect(parts).toHaveLength(19);
    const cited = parts.filter((p) => p.citations);
    // 14 citations_delta in 9 blocks, 4 distinct pages.
    expect(cited).toHaveLength(9);
    const citations = cited.flatMap((p) => p.citations!);
    expect(citations).toHaveLength(14);
    expect(new Set(citations.map((c) => c.url)).size).toBe(4);
    expect(citations[0]).toMatchObject({
      url: "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/",
      title: "The all-new Apple Ginza opens this Friday, September 26, in Tokyo - Apple",
      citedText:
        "Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district.",
      provider: "anthropic",
      providerData: { type: "web_search_result_location" },
    });
    expect(typeof citations[0]!.providerData?.encryptedIndex).toBe("string");
    expect(cited[0]!.text.startsWith("Apple today announced the grand reopening")).toBe(true);
  });

  it("sends the search and its results back on the next request, with the cited text", async () => {
    const server = await serve("anthropic", lines);
    const { client } = clientFor("anthropic", server.baseURL);
    const first = await collect(client.stream({ items: [userMessage("tech news today?")] }));
    const [search] = serverTools(first.events);
    const history: Item[] = [
      userMessage("tech news today?"),
      search!,
      { type: "message", role: "assistant", content: textParts(first.events) },
      userMessage("and the second story?"),
    ];
    await collect(client.stream({ items: history }));
    const body = server.requests[1] as { messages: { role: string; content: Record<string, unknown>[] }[] };
    const assistant = body.messages[1]!;
    expect(assistant.role).toBe("assistant");
    expect(assistant.content[0]).toEqual({
      type: "server_tool_use",
      id: "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k",
      name: "web_search",
      input: { query: "tech news today September 26 2025" },
    });
    const result = assistant.content[1]!;
    expect(result.type).toBe("web_search_tool_result");
    expect(result.tool_use_id).toBe("srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k");
    // Exactly what the server sent: the recorded block's content.
    const recorded = lines
      .map((l) => JSON.parse(l) as { content_block?: { type: string; content?: unknown } })
      .find((p) => p.content_block?.type === "web_search_tool_result")!.content_block!.content;
    expect(result.content).toEqual(recorded);
    const cited = assistant.content.filter((b) => Array.isArray(b.citations));
    expect(cited).toHaveLength(9);
    expect((cited[0]!.citations as Record<string, unknown>[])[0]).toMatchObject({
      type: "web_search_result_location",
      url: "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/",
      encrypted_index: expect.stringMatching(/^Eo8BCioICBgCIiRiY2JjZWJjMy1lYTFh/),
    });
  });

  it("sends no call without its result, and no other provider's search or citations", () => {
    const running: ServerToolItem = {
      type: "server_tool",
      callId: "srvtoolu_cut",
      name: "web_search",
      arguments: '{"query":"x"}',
      status: "running",
      sources: [],
      provider: "anthropic",
    };
    const foreign: ServerToolItem = {
      ...running,
      callId: "ws_1",
      status: "completed",
      provider: "openai-responses",
    };
    const citation: Citation = { url: "https://example.com/", provider: "openai-responses" };
    const { params } = buildAnthropicRequest("claude-sonnet-4-5", {
      items: [
        userMessage("q"),
        running,
        foreign,
        {
          type: "message",
          role: "assistant",
          content: [{ type: "text", text: "A.", citations: [citation] }],
        },
        userMessage("more"),
      ],
    });
    expect(params.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "A." }] });
  });
});

describe("OpenAI Responses web search (recorded stream)", () => {
  const lines = fixtureLines("openai-responses/openai-web-search-tool.1.chunks.txt");

  it("reports each web_search_call as it starts and what it did when done", async () => {
    const server = await serve("openai-responses", lines);
    const client = createClient({
      provider: "openai-responses",
      model: "gpt-5-mini",
      apiKey: "k",
      baseURL: server.baseURL,
      ...FAST,
    });
    const out = await collect(client.stream({ items: [userMessage("tech news?")] }));
    expect(out.status).toBe("completed");
    const events = out.events.filter((e): e is ServerToolEvent => e.type === "server_tool");
    // Six calls, each announced (running, no input yet) and finished.
    expect(events).toHaveLength(12);
    const calls = serverTools(out.events);
    expect(calls.map((c) => c.status)).toEqual(Array(6).fill("completed"));
    expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([
      { action: "search", query: "tech news today December 5 2025" },
      { action: "search", query: 'site:theverge.com "December 5, 2025" "technology"' },
      {
        action: "open_page",
        url: "https://techcrunch.com/2025/12/05/petco-confirms-security-lapse-exposed-customers-personal-data/",
      },
      {
        action: "find_in_page",
        url: "https://www.wired.com/story/the-big-interview-2025-recap",
        pattern: "vercel",
      },
      {
        action: "find_in_page",
        url: "https://www.wired.com/story/the-big-interview-2025-recap",
        pattern: "Vercel",
      },
      {
        action: "find_in_page",
        url: "https://techcrunch.com/2025/12/05/petco-confirms-security-lapse-exposed-customers-personal-data/",
        pattern: "vercel",
      },
    ]);
    expect(calls.map((c) => c.sources.length)).toEqual([10, 11, 1, 1, 1, 1]);
    expect(calls[0]!.callId).toBe("ws_0cc96ac817fdc57e006933370e71cc81989ece73cbdfe67d25");
    // The answer's url_citation annotations arrive on its block stop.
    const [part] = textParts(out.events);
    expect(part!.citations).toHaveLength(12);
    expect(part!.citations![0]).toEqual({
      url: "https://techcrunch.com/2025/12/05/petco-confirms-security-lapse-exposed-customers-personal-data/?utm_source=openai",
      title: "Petco confirms security lapse exposed customers’ personal data | TechCrunch",
      provider: "openai-responses",
      providerData: { startIndex: 277, endIndex: 411 },
    });
  });

  it("sends web_search back neither as an item nor by id (store: false), only the answer", async () => {
    const search: ServerToolItem = {
      type: "server_tool",
      callId: "ws_1",
      name: "web_search",
      arguments: '{"query":"q"}',
      status: "completed",
      sources: [{ url: "https://example.com/" }],
      provider: "openai-responses",
    };
    const { params } = buildResponsesRequest("gpt-5-mini", {
      items: [
        userMessage("q"),
        search,
        {
          type: "message",
          role: "assistant",
          content: [
            {
              type: "text",
              text: "A.",
              citations: [{ url: "https://example.com/", provider: "openai-responses" }],
            },
          ],
        },
      ],
      serverTools: [{ type: "web_search" }],
    });
    expect(params.input).toEqual([
      { role: "user", content: [{ type: "input_text", text: "q" }] },
      { role: "assistant", content: "A." },
    ]);
    expect(params.tools).toEqual([{ type: "web_search" }]);
    // The pages each search saw are asked for; without the tool they are not.
    expect(params.include).toEqual(["reasoning.encrypted_content", "web_search_call.action.sources"]);
    const plain = buildResponsesRequest("gpt-5-mini", { items: [userMessage("q")] });
    expect(plain.params.include).toEqual(["reasoning.encrypted_content"]);
  });
});

describe("Gemini Google Search grounding (documented groundingMetadata)", () => {
  const uefa = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXuefa";
  const aljazeera = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9wXalj";
  const lines = [
    JSON.stringify({
      candidates: [{ content: { role: "model", parts: [{ text: "Spain won Euro 2024" }] }, index: 0 }],
      modelVersion: "gemini-2.5-flash",
    }),
    JSON.stringify({
      candidates: [
        {
          content: { role: "model", parts: [{ text: ", beating England 2-1 in the final." }] },
          finishReason: "STOP",
          index: 0,
          groundingMetadata: {
            webSearchQueries: ["UEFA Euro 2024 winner", "who won euro 2024"],
            searchEntryPoint: { renderedContent: "<style>...</style><div>...</div>" },
            groundingChunks: [
              { web: { uri: uefa, title: "uefa.com" } },
              { web: { uri: aljazeera, title: "aljazeera.com" } },
            ],
            groundingSupports: [
              {
                segment: { startIndex: 0, endIndex: 19, text: "Spain won Euro 2024" },
                groundingChunkIndices: [0],
                confidenceScores: [0.98],
              },
              {
                segment: { startIndex: 21, endIndex: 54, text: "beating England 2-1 in the final." },
                groundingChunkIndices: [0, 1],
                confidenceScores: [0.95, 0.9],
              },
            ],
            retrievalMetadata: {},
          },
        },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 14, toolUsePromptTokenCount: 80 },
      modelVersion: "gemini-2.5-flash",
    }),
  ];

  it("sends googleSearch, and reports the queries, the pages and the supports as citations", async () => {
    const server = await serve("gemini", lines);
    const client = createClient({
      provider: "gemini",
      model: "gemini-2.5-flash",
      apiKey: "k",
      baseURL: server.baseURL,
      ...FAST,
    });
    const out = await collect(
      client.stream({ items: [userMessage("Who won Euro 2024?")], serverTools: [{ googleSearch: {} }] }),
    );
    expect((server.requests[0] as { tools?: unknown[] }).tools).toEqual([{ googleSearch: {} }]);
    expect(out.status).toBe("completed");
    expect(out.text).toBe("Spain won Euro 2024, beating England 2-1 in the final.");
    const [search] = serverTools(out.events);
    expect(search).toMatchObject({
      name: "web_search",
      arguments: JSON.stringify({ queries: ["UEFA Euro 2024 winner", "who won euro 2024"] }),
      status: "completed",
      sources: [
        { url: uefa, title: "uefa.com" },
        { url: aljazeera, title: "aljazeera.com" },
      ],
      provider: "gemini",
    });
    const [part] = textParts(out.events);
    expect(part!.citations).toEqual([
      { url: uefa, title: "uefa.com", citedText: "Spain won Euro 2024", provider: "gemini" },
      { url: uefa, title: "uefa.com", citedText: "beating England 2-1 in the final.", provider: "gemini" },
      {
        url: aljazeera,
        title: "aljazeera.com",
        citedText: "beating England 2-1 in the final.",
        provider: "gemini",
      },
    ]);
    // Gemini counts the search's prompt tokens apart; they are input.
    expect(out.usage.inputTokens).toBe(92);
  });

  it("a response without grounding has no server tool and no citations", async () => {
    const server = await serve("gemini", [
      JSON.stringify({
        candidates: [{ content: { role: "model", parts: [{ text: "Hi." }] }, finishReason: "STOP" }],
      }),
    ]);
    const client = createClient({
      provider: "gemini",
      model: "gemini-2.5-flash",
      apiKey: "k",
      baseURL: server.baseURL,
      ...FAST,
    });
    const out = await collect(client.stream({ items: [userMessage("hi")] }));
    expect(serverTools(out.events)).toEqual([]);
    expect(textParts(out.events)[0]!.citations).toBeUndefined();
  });
});
