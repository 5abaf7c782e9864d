import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIResponsesAdapter } from "../src/adapters/openai-responses/index.ts";
import { buildResponsesRequest } from "../src/adapters/openai-responses/request.ts";
import { LlmError } from "../src/errors.ts";
import type { Item } from "../src/item.ts";
import type { ClientWarning, Request } from "../src/request.ts";
import { type ReplayServer, startReplayServer } from "../src/testing/replay-server.ts";
import { collect } from "./openai-responses-collect.ts";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const j = (value: unknown) => JSON.stringify(value);
const created = j({ type: "response.created", response: { id: "resp_1", model: "gpt-5", output: [] } });
const usage = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 60 },
  output_tokens: 40,
  output_tokens_details: { reasoning_tokens: 25 },
};

async function run(
  lines: string[],
  request: Request = { items: [{ type: "message", role: "user", content: [{ type: "text", text: "x" }] }] },
) {
  const server = await startReplayServer({ provider: "openai-responses", lines });
  servers.push(server);
  const adapter = createOpenAIResponsesAdapter({
    provider: "openai-responses",
    model: "gpt-5",
    apiKey: "k",
    baseURL: server.baseURL,
  });
  return collect(await adapter.open(request, new AbortController().signal), "openai-responses");
}

describe("OpenAI Responses stream normalization", () => {
  it("incomplete with max_output_tokens is a max_tokens stop: text kept, a cut tool call aborted", async () => {
    const out = await run([
      created,
      j({
        type: "response.content_part.added",
        output_index: 0,
        content_index: 0,
        item_id: "m",
        part: { type: "output_text", text: "" },
      }),
      j({
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        item_id: "m",
        delta: "partial",
      }),
      j({
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "function_call", id: "fc", call_id: "c1", name: "f", arguments: "" },
      }),
      j({ type: "response.function_call_arguments.delta", output_index: 1, item_id: "fc", delta: '{"a":' }),
      j({
        type: "response.incomplete",
        response: { id: "resp_1", usage, incomplete_details: { reason: "max_output_tokens" } },
      }),
    ]);
    expect(out.status).toBe("completed");
    expect(out.stopReason).toBe("max_tokens");
    expect(out.text).toBe("partial");
    expect(out.toolCalls).toEqual([]);
    expect(out.events.filter((e) => e.type === "block_abort")).toEqual([
      { type: "block_abort", index: 1, block: "tool_use", reason: "max_tokens" },
    ]);
    // input includes cached (OpenAI's convention already), output includes reasoning.
    expect(out.usage).toEqual({
      inputTokens: 100,
      cacheReadTokens: 60,
      outputTokens: 40,
      reasoningTokens: 25,
    });
  });

  it("response.failed maps its error code to a typed error", async () => {
    const out = await run([
      created,
      j({
        type: "response.failed",
        response: {
          id: "resp_1",
          error: {
            code: "context_length_exceeded",
            message: "Your input exceeds the context window of this model.",
          },
        },
      }),
    ]);
    expect(out.status).toBe("failed");
    expect(out.errors[0]).toMatchObject({ code: "context_overflow", retryable: false });
  });

  it("a refusal part is text with a refusal stop reason", async () => {
    const out = await run([
      created,
      j({
        type: "response.content_part.added",
        output_index: 0,
        content_index: 0,
        item_id: "m",
        part: { type: "refusal", refusal: "" },
      }),
      j({
        type: "response.refusal.delta",
        output_index: 0,
        content_index: 0,
        item_id: "m",
        delta: "I can't help with that.",
      }),
      j({
        type: "response.content_part.done",
        output_index: 0,
        content_index: 0,
        item_id: "m",
        part: { type: "refusal" },
      }),
      j({ type: "response.completed", response: { id: "resp_1", usage } }),
    ]);
    expect(out.text).toBe("I can't help with that.");
    expect(out.stopReason).toBe("refusal");
  });

  it("two function calls (one with no arguments) get their own stable blocks; unknown events are passed over", async () => {
    const out = await run([
      created,
      j({
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "function_call", id: "fa", call_id: "ca", name: "ls", arguments: "" },
      }),
      j({
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "function_call", id: "fb", call_id: "cb", name: "read", arguments: "" },
      }),
      j({
        type: "response.function_call_arguments.delta",
        output_index: 1,
        item_id: "fb",
        delta: '{"path":',
      }),
      j({ type: "response.some_future_event", output_index: 1, whatever: true }),
      j({
        type: "response.function_call_arguments.delta",
        output_index: 1,
        item_id: "fb",
        delta: '"a.txt"}',
      }),
      j({
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "function_call", id: "fa", call_id: "ca", name: "ls", arguments: "" },
      }),
      j({
        type: "response.output_item.done",
        output_index: 1,
        item: { type: "function_call", id: "fb", call_id: "cb", name: "read", arguments: '{"path":"a.txt"}' },
      }),
      j({ type: "response.completed", response: { id: "resp_1", usage } }),
    ]);
    expect(out.toolCalls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["ca", "ls", {}],
      ["cb", "read", { path: "a.txt" }],
    ]);
    expect(out.stopReason).toBe("tool_use");
  });

  it("an HTTP 400 about the context window is context_overflow, thrown by open()", async () => {
    const { createServer } = await import("node:http");
    const server = createServer((_req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(
        j({
          error: {
            message: "This model's maximum context length is 128000 tokens.",
            type: "invalid_request_error",
            code: "context_length_exceeded",
          },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const adapter = createOpenAIResponsesAdapter({
      provider: "openai-responses",
      model: "gpt-5",
      apiKey: "sk-secret-123456789",
      baseURL: `http://127.0.0.1:${port}/v1`,
    });
    const error = await adapter.open({ items: [] }, new AbortController().signal).catch((e: unknown) => e);
    server.close();
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: "context_overflow", status: 400, retryable: false });
    expect((error as Error).message).not.toContain("sk-secret");
  });

  it("no API key: a clear auth error naming OPENAI_API_KEY", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const adapter = createOpenAIResponsesAdapter({ provider: "openai-responses", model: "gpt-5" });
      await expect(adapter.open({ items: [] }, new AbortController().signal)).rejects.toThrow(
        /OPENAI_API_KEY/,
      );
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe("OpenAI Responses request building", () => {
  const history: Item[] = [
    { type: "message", role: "system", content: [{ type: "text", text: "extra rules" }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
        { type: "image", mediaType: "image/jpeg", url: "https://example.com/cat.jpg" },
      ],
    },
    { type: "tool_call", callId: "c_sql", name: "write_sql", arguments: "SELECT 1", kind: "custom" },
    { type: "tool_result", callId: "c_sql", output: "1", isError: false },
    { type: "message", role: "assistant", content: [{ type: "text", text: "It is a cat." }] },
  ];

  it("maps messages, images, custom tool calls and results; tools sorted; settings passed", () => {
    const { params, warnings } = buildResponsesRequest("gpt-5", {
      system: "be brief",
      items: history,
      tools: [
        { name: "zeta", description: "z", parameters: { type: "object" } },
        { name: "alpha", description: "a", parameters: { type: "object" } },
        { name: "write_sql", description: "sql", parameters: {}, kind: "custom" },
      ],
      serverTools: [{ type: "web_search" }],
      settings: { maxTokens: 500, cacheKey: "k1", parallelToolCalls: false, reasoning: { effort: "high" } },
    });
    expect(params).toMatchObject({
      model: "gpt-5",
      store: false,
      // With web_search offered, the pages each search saw are asked for too.
      include: ["reasoning.encrypted_content", "web_search_call.action.sources"],
      instructions: "be brief",
      max_output_tokens: 500,
      prompt_cache_key: "k1",
      parallel_tool_calls: false,
      reasoning: { effort: "high", summary: "auto" },
    });
    expect(params.tools?.map((t) => ("name" in t ? t.name : t.type))).toEqual([
      "alpha",
      "write_sql",
      "zeta",
      "web_search",
    ]);
    expect(params.input).toEqual([
      { role: "system", content: [{ type: "input_text", text: "extra rules" }] },
      {
        role: "user",
        content: [
          { type: "input_text", text: "what is this?" },
          { type: "input_image", detail: "auto", image_url: "data:image/png;base64,iVBORw0KGgo=" },
          { type: "input_image", detail: "auto", image_url: "https://example.com/cat.jpg" },
        ],
      },
      { type: "custom_tool_call", call_id: "c_sql", name: "write_sql", input: "SELECT 1" },
      { type: "custom_tool_call_output", call_id: "c_sql", output: "1" },
      { role: "assistant", content: "It is a cat." },
    ]);
    expect(warnings).toEqual([]);
  });

  it("settings the API cannot take are dropped with a warning", () => {
    const warnings: ClientWarning[] = buildResponsesRequest("gpt-5", {
      items: [],
      settings: { stopSequences: ["END"], reasoning: { budgetTokens: 2000 } },
    }).warnings;
    expect(warnings.map((w) => w.detail?.setting)).toEqual(["stopSequences", "reasoning.budgetTokens"]);
  });

  it("asks for encrypted reasoning only from reasoning models (others reject the include with a 400)", () => {
    const include = (model: string) => buildResponsesRequest(model, { items: [] }).params.include;
    expect(include("gpt-4o")).toBeUndefined();
    expect(include("gpt-4.1-mini")).toBeUndefined();
    expect(include("gpt-5-chat-latest")).toBeUndefined();
    expect(include("o3")).toEqual(["reasoning.encrypted_content"]);
    expect(include("gpt-5.1-codex")).toEqual(["reasoning.encrypted_content"]);
    expect(include("my-proxy/gpt-5-mini")).toEqual(["reasoning.encrypted_content"]);
    const caps = {
      tools: true,
      parallelTools: true,
      reasoning: "none" as const,
      vision: true,
      promptCaching: true,
    };
    expect(buildResponsesRequest("gpt-5", { items: [] }, caps).params.include).toBeUndefined();
  });

  it("drops a reasoning item that is not followed by the output it led to", () => {
    const rs = (id: string): Item => ({
      type: "reasoning",
      text: "",
      encryptedContent: `enc-${id}`,
      provider: "openai-responses",
      providerData: { itemId: id },
    });
    const { params, warnings } = buildResponsesRequest("gpt-5", {
      items: [
        { type: "message", role: "user", content: [{ type: "text", text: "search" }] },
        rs("rs_search"), // its web_search_call is a server item we do not keep
        rs("rs_answer"),
        { type: "message", role: "assistant", content: [{ type: "text", text: "found it" }] },
        rs("rs_cut"), // the turn was cut after its reasoning
        { type: "message", role: "user", content: [{ type: "text", text: "again" }] },
      ],
    });
    expect((params.input as { id?: string }[]).filter((i) => i.id !== undefined).map((i) => i.id)).toEqual([
      "rs_answer",
    ]);
    expect(warnings[0]?.detail).toEqual({ count: 2 });
  });
});
