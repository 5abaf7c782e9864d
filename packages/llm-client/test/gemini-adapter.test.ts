import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createGeminiAdapter } from "../src/adapters/gemini/index.ts";
import { buildGeminiRequest } from "../src/adapters/gemini/request.ts";
import { LlmError } from "../src/errors.ts";
import type { Request } from "../src/request.ts";
import { type ReplayServer, startReplayServer } from "../src/testing/replay-server.ts";
import { collect } from "./openai-responses-collect.ts";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}, usageMetadata?: unknown) =>
  JSON.stringify({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    ...(usageMetadata === undefined ? {} : { usageMetadata }),
    modelVersion: "gemini-x",
  });

const hi: Request = { items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }] };

async function run(lines: string[]) {
  const server = await startReplayServer({ provider: "gemini", lines });
  servers.push(server);
  const adapter = createGeminiAdapter({
    provider: "gemini",
    model: "gemini-x",
    apiKey: "k",
    baseURL: server.baseURL,
  });
  return collect(await adapter.open(hi, new AbortController().signal), "gemini");
}

async function httpError(status: number, body: unknown, headers: Record<string, string> = {}) {
  const server = createServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const adapter = createGeminiAdapter({
    provider: "gemini",
    model: "gemini-x",
    apiKey: "AIza-secret",
    baseURL: `http://127.0.0.1:${port}`,
  });
  const error = await adapter.open(hi, new AbortController().signal).catch((e: unknown) => e);
  server.close();
  return error as LlmError;
}

describe("Gemini stream normalization", () => {
  for (const [finish, stop] of [
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["BLOCKLIST", "content_filter"],
    ["SPII", "content_filter"],
    ["MAX_TOKENS", "max_tokens"],
    ["STOP", "end_turn"],
  ] as const) {
    it(`finishReason ${finish} -> ${stop}`, async () => {
      const out = await run([chunk([{ text: "abc" }]), chunk([{ text: "" }], { finishReason: finish })]);
      expect(out.status).toBe("completed");
      expect(out.stopReason).toBe(stop);
    });
  }

  it("a blocked prompt (promptFeedback, no candidates) is a content_filter stop", async () => {
    const out = await run([
      JSON.stringify({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 5 } }),
    ]);
    expect(out.stopReason).toBe("content_filter");
    expect(out.usage).toEqual({ inputTokens: 5 });
  });

  it("thought parts, then text: two blocks; a signature on a thought stays with the thinking block", async () => {
    const out = await run([
      chunk([{ text: "Let me think", thought: true }]),
      chunk([{ text: " more.", thought: true, thoughtSignature: "sig-t" }]),
      chunk([{ text: "Answer." }]),
      chunk(
        [{ text: "" }],
        { finishReason: "STOP" },
        {
          promptTokenCount: 50,
          cachedContentTokenCount: 30,
          candidatesTokenCount: 4,
          thoughtsTokenCount: 12,
        },
      ),
    ]);
    expect(out.thinking).toBe("Let me think more.");
    expect(out.text).toBe("Answer.");
    expect(out.replays).toEqual([{ provider: "gemini", providerData: { thoughtSignature: "sig-t" } }]);
    expect(out.usage).toEqual({
      inputTokens: 50,
      cacheReadTokens: 30,
      outputTokens: 16,
      reasoningTokens: 12,
    });
    expect(out.items[0]).toMatchObject({ type: "reasoning", text: "Let me think more.", provider: "gemini" });
  });

  it("a text part after a signed text part starts a new block (signed parts are never merged)", async () => {
    const out = await run([
      chunk([{ text: "one", thoughtSignature: "s1" }]),
      chunk([{ text: "two" }]),
      chunk([{ text: "" }], { finishReason: "STOP" }),
    ]);
    expect(out.items).toEqual([
      {
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "one" }],
        providerData: { thoughtSignature: "s1" },
      },
      { type: "message", role: "assistant", content: [{ type: "text", text: "two" }] },
    ]);
  });

  it("a call id given by Gemini is kept and sent back", async () => {
    const out = await run([
      chunk([{ functionCall: { id: "fc-1", name: "ls", args: { dir: "." } } }], { finishReason: "STOP" }),
    ]);
    expect(out.toolCalls[0]).toMatchObject({
      id: "fc-1",
      input: { dir: "." },
      providerData: { functionCallId: "fc-1" },
    });
    const { contents } = buildGeminiRequest({
      items: [
        ...hi.items,
        ...out.items,
        { type: "tool_result", callId: "fc-1", output: "a.txt", isError: true },
      ],
    });
    expect(contents[1]?.parts?.[0]?.functionCall).toEqual({ id: "fc-1", name: "ls", args: { dir: "." } });
    expect(contents[2]?.parts?.[0]?.functionResponse).toEqual({
      id: "fc-1",
      name: "ls",
      response: { error: "a.txt" },
    });
  });

  it("MALFORMED_FUNCTION_CALL fails the stream with a clear parse error", async () => {
    const out = await run([chunk([{ text: "" }], { finishReason: "MALFORMED_FUNCTION_CALL" })]);
    expect(out.status).toBe("failed");
    expect(out.errors[0]?.code).toBe("parse");
    expect(out.errors[0]?.message).toContain("MALFORMED_FUNCTION_CALL");
  });
});

describe("Gemini errors", () => {
  it("context overflow (400 INVALID_ARGUMENT about the token count)", async () => {
    const error = await httpError(400, {
      error: {
        code: 400,
        message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        status: "INVALID_ARGUMENT",
      },
    });
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: "context_overflow", status: 400, retryable: false });
  });

  it("429 with RetryInfo in the body gives retryAfterMs", async () => {
    const error = await httpError(429, {
      error: {
        code: 429,
        message: "Resource has been exhausted",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" }],
      },
    });
    expect(error).toMatchObject({ code: "rate_limit", status: 429, retryable: true, retryAfterMs: 7000 });
  });

  it("429 with a retry-after header wins over the body", async () => {
    const error = await httpError(
      429,
      { error: { code: 429, message: "slow", status: "RESOURCE_EXHAUSTED" } },
      { "retry-after": "3" },
    );
    expect(error.retryAfterMs).toBe(3000);
  });

  it("503 is overloaded and retryable; an invalid key is auth and never leaks the key", async () => {
    expect(
      await httpError(503, {
        error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" },
      }),
    ).toMatchObject({
      code: "overloaded",
      retryable: true,
    });
    const auth = await httpError(400, {
      error: {
        code: 400,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
        details: [{ reason: "API_KEY_INVALID" }],
      },
    });
    expect(auth).toMatchObject({ code: "auth", retryable: false });
    expect(auth.message).not.toContain("AIza-secret");
  });
});

describe("Gemini request building", () => {
  it("system prompt + system messages, images as inlineData / fileData, budget, stop sequences, sorted tools", () => {
    const { contents, config, warnings } = buildGeminiRequest({
      system: "be brief",
      items: [
        { type: "message", role: "system", content: [{ type: "text", text: "more rules" }] },
        {
          type: "message",
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", mediaType: "image/png", data: "AAAA" },
            { type: "image", mediaType: "image/jpeg", url: "gs://bucket/cat.jpg" },
          ],
        },
      ],
      tools: [
        { name: "b", description: "B", parameters: { type: "object" } },
        { name: "a", description: "A", parameters: { type: "object" } },
      ],
      serverTools: [{ googleSearch: {} }],
      settings: {
        maxTokens: 64,
        temperature: 0.2,
        stopSequences: ["END"],
        reasoning: { budgetTokens: 1024 },
        parallelToolCalls: true,
      },
    });
    expect(config.systemInstruction).toBe("be brief\n\nmore rules");
    expect(contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "look" },
          { inlineData: { mimeType: "image/png", data: "AAAA" } },
          { fileData: { mimeType: "image/jpeg", fileUri: "gs://bucket/cat.jpg" } },
        ],
      },
    ]);
    expect(config.tools).toEqual([
      {
        functionDeclarations: [
          { name: "a", description: "A", parametersJsonSchema: { type: "object" } },
          { name: "b", description: "B", parametersJsonSchema: { type: "object" } },
        ],
      },
      { googleSearch: {} },
    ]);
    expect(config).toMatchObject({
      maxOutputTokens: 64,
      temperature: 0.2,
      stopSequences: ["END"],
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    expect(warnings.map((w) => w.detail?.setting)).toEqual(["parallelToolCalls"]);
  });

  it("a tool result with no name and no matching call is a clear error", () => {
    expect(() =>
      buildGeminiRequest({ items: [{ type: "tool_result", callId: "zz", output: "x", isError: false }] }),
    ).toThrow(/set ToolResultItem.name/);
  });

  it("tool call arguments that are not a JSON object are a clear error", () => {
    expect(() =>
      buildGeminiRequest({ items: [{ type: "tool_call", callId: "c", name: "f", arguments: "[1,2]" }] }),
    ).toThrow(/not a JSON object/);
  });

  it("function responses go back in call order (Gemini pairs same-name calls by position)", () => {
    const { contents } = buildGeminiRequest({
      items: [
        { type: "message", role: "user", content: [{ type: "text", text: "two cities" }] },
        { type: "tool_call", callId: "c1", name: "weather", arguments: '{"city":"Paris"}' },
        { type: "tool_call", callId: "c2", name: "weather", arguments: '{"city":"Tokyo"}' },
        { type: "tool_result", callId: "c2", output: "rain", isError: false },
        { type: "tool_result", callId: "c1", output: "sun", isError: false },
        { type: "message", role: "user", content: [{ type: "text", text: "and?" }] },
      ],
    });
    expect(contents[2]?.parts).toEqual([
      { functionResponse: { name: "weather", response: { output: "sun" } } },
      { functionResponse: { name: "weather", response: { output: "rain" } } },
      { text: "and?" },
    ]);
  });
});
