/**
 * What the Anthropic and OpenAI Chat adapters send for a history with a
 * system prompt, images, reasoning from two providers, parallel tool calls
 * and their results — captured by the scripted server, which also checks
 * the body the way the real API does (`validate: true`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildAnthropicRequest } from "../src/adapters/anthropic/request.ts";
import { buildOpenAIChatRequest } from "../src/adapters/openai-chat/request.ts";
import { assistantMessage, type Item, systemMessage, userMessage } from "../src/item.ts";
import type { Request } from "../src/request.ts";
import { startScriptedServer } from "../src/testing/scripted-server.ts";
import { clientFor, collect } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const PNG = "iVBORw0KGgo=";
const HISTORY: Item[] = [
  systemMessage("Be terse."),
  {
    type: "message",
    role: "user",
    content: [
      { type: "text", text: "What is in these files?" },
      { type: "image", mediaType: "image/png", data: PNG },
    ],
  },
  { type: "reasoning", provider: "anthropic", text: "Let me look.", signature: "sig-1" },
  { type: "reasoning", provider: "anthropic", text: "", redacted: true, encryptedContent: "opaque-data" },
  {
    type: "reasoning",
    provider: "openai-responses",
    text: "",
    summary: ["other provider"],
    encryptedContent: "enc",
  },
  assistantMessage("Reading both."),
  { type: "tool_call", callId: "call_a", name: "read", arguments: '{"path":"a.txt"}' },
  { type: "tool_call", callId: "call_b", name: "read", arguments: '{"path":"b.txt"}' },
  // Parallel tools finish in any order.
  { type: "tool_result", callId: "call_b", output: "B", isError: false },
  { type: "tool_result", callId: "call_a", output: "no such file", isError: true },
  userMessage("Thanks"),
];

const REQUEST: Request = {
  system: "You are yoi.",
  items: HISTORY,
  tools: [
    { name: "zeta", description: "last by name", parameters: { type: "object", properties: {} } },
    {
      name: "read",
      description: "read a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    },
  ],
  settings: { maxTokens: 1000, stopSequences: ["END"], parallelToolCalls: true, cacheKey: "session-1" },
};

describe("anthropic request shape", () => {
  it("groups, pairs, replays its own reasoning and places cache breakpoints", async () => {
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(s);
    const { client, warnings } = clientFor("anthropic", s.baseURL);
    const r = await collect(client.stream(REQUEST));
    expect(s.rejections).toEqual([]);
    expect(r.status).toBe("completed");
    const EPH = { type: "ephemeral" };
    expect(s.requests[0]).toEqual({
      model: "claude-test",
      max_tokens: 1000,
      stream: true,
      stop_sequences: ["END"],
      system: [
        { type: "text", text: "You are yoi." },
        { type: "text", text: "Be terse.", cache_control: EPH },
      ],
      tools: [
        { name: "read", description: "read a file", input_schema: REQUEST.tools![1]!.parameters },
        {
          name: "zeta",
          description: "last by name",
          input_schema: REQUEST.tools![0]!.parameters,
          cache_control: EPH,
        },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these files?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Let me look.", signature: "sig-1" },
            { type: "redacted_thinking", data: "opaque-data" },
            { type: "text", text: "Reading both." },
            { type: "tool_use", id: "call_a", name: "read", input: { path: "a.txt" } },
            { type: "tool_use", id: "call_b", name: "read", input: { path: "b.txt" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_b", content: "B" },
            { type: "tool_result", tool_use_id: "call_a", content: "no such file", is_error: true },
            { type: "text", text: "Thanks", cache_control: EPH },
          ],
        },
      ],
    });
    // The OpenAI reasoning item is not sent, and the caller is told.
    expect(warnings.map((w) => w.code)).toEqual(["dropped_reasoning"]);
  });

  it("sends the thinking budget with room for the answer and honours promptCache: off", async () => {
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(s);
    const { client, warnings } = clientFor("anthropic", s.baseURL, { model: "claude-sonnet-4-5" });
    await collect(
      client.stream({
        ...REQUEST,
        settings: {
          maxTokens: 2000,
          reasoning: { budgetTokens: 4000 },
          temperature: 0.5,
          promptCache: { enabled: false },
        },
      }),
    );
    const body = s.requests[0] as Record<string, unknown>;
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 4000 });
    expect(body.max_tokens).toBe(6000);
    expect(body.temperature).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain("cache_control");
    expect(warnings.filter((w) => w.code === "unsupported_setting").map((w) => w.detail?.setting)).toEqual([
      "temperature",
    ]);
  });

  it("an effort is sent as adaptive thinking at that effort", () => {
    const { params, warnings } = buildAnthropicRequest("claude-next", {
      items: [userMessage("hi")],
      settings: { reasoning: { effort: "minimal" } },
    });
    expect(params.thinking).toEqual({ type: "adaptive" });
    expect(params.output_config).toEqual({ effort: "low" });
    expect(warnings).toEqual([]);
  });

  it("the scripted server rejects a broken history like the API would (and the client repairs it first)", async () => {
    const s = await startScriptedServer({
      provider: "anthropic",
      validate: true,
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(s);
    const { client, warnings } = clientFor("anthropic", s.baseURL);
    // A call whose result never arrived (a crash between call and result).
    const r = await collect(
      client.stream({
        items: [
          userMessage("go"),
          { type: "tool_call", callId: "x", name: "read", arguments: "{}" },
          userMessage("again"),
        ],
      }),
    );
    expect(r.status).toBe("completed");
    expect(s.rejections).toEqual([]);
    expect(warnings.map((w) => w.code)).toContain("repaired_history");
    const messages = (s.requests[0] as { messages: { content: { type: string; is_error?: boolean }[] }[] })
      .messages;
    expect(messages[2]!.content[0]).toMatchObject({ type: "tool_result", is_error: true });
  });
});

describe("openai-chat request shape", () => {
  it("sends messages in order, tool messages after the call, images as data URLs, no reasoning", async () => {
    const s = await startScriptedServer({
      provider: "openai-chat",
      validate: true,
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(s);
    const { client, warnings } = clientFor("openai-chat", s.baseURL);
    const r = await collect(client.stream(REQUEST));
    expect(s.rejections).toEqual([]);
    expect(r.status).toBe("completed");
    expect(s.requests[0]).toEqual({
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      // A compatible server (127.0.0.1): the portable max_tokens, no prompt_cache_key.
      max_tokens: 1000,
      stop: ["END"],
      parallel_tool_calls: true,
      tools: [
        {
          type: "function",
          function: { name: "read", description: "read a file", parameters: REQUEST.tools![1]!.parameters },
        },
        {
          type: "function",
          function: { name: "zeta", description: "last by name", parameters: REQUEST.tools![0]!.parameters },
        },
      ],
      messages: [
        // A compatible server gets one leading system message (many templates reject a second).
        { role: "system", content: "You are yoi.\n\nBe terse." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these files?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
        {
          role: "assistant",
          content: "Reading both.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } },
            { id: "call_b", type: "function", function: { name: "read", arguments: '{"path":"b.txt"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_b", content: "B" },
        { role: "tool", tool_call_id: "call_a", content: "Error: no such file" },
        { role: "user", content: "Thanks" },
      ],
    });
    const dropped = warnings.filter((w) => w.code === "dropped_reasoning");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.detail).toEqual({ count: 2 });
  });

  it("sends OpenAI-only fields to OpenAI itself", () => {
    const { params, warnings } = buildOpenAIChatRequest(
      "gpt-5",
      { ...REQUEST, settings: { ...REQUEST.settings, reasoning: { effort: "low" } } },
      { openai: true },
    );
    expect(params.max_completion_tokens).toBe(1000);
    expect(params.max_tokens).toBeUndefined();
    expect(params.prompt_cache_key).toBe("session-1");
    expect(params.reasoning_effort).toBe("low");
    expect(warnings.map((w) => w.code)).toEqual(["dropped_reasoning"]);
  });

  it("a growing history gives the messages a fresh conversion gives, and none is shared with another request's changes", () => {
    const items: Item[] = [
      { type: "message", role: "user", content: [{ type: "text", text: "Read both" }] },
      { type: "message", role: "assistant", content: [{ type: "text", text: "Reading." }] },
      { type: "tool_call", callId: "c1", name: "read", arguments: "" },
      { type: "tool_result", callId: "c1", name: "read", output: "one", isError: false },
      { type: "tool_call", callId: "c2", name: "read", arguments: '{"path":"b"}' },
    ];
    const fresh = (history: Item[]) =>
      buildOpenAIChatRequest("m", { items: structuredClone(history) }, { openai: false }).params.messages;
    const build = (history: Item[]) =>
      buildOpenAIChatRequest("m", { items: history.slice() }, { openai: false }).params.messages;
    // The last run is open (its result is not there yet): a later request sees it grown.
    expect(build(items)).toEqual(fresh(items));
    items.push({ type: "tool_call", callId: "c3", name: "read", arguments: "{}" });
    items.push({ type: "tool_result", callId: "c2", name: "read", output: "two", isError: true });
    items.push({
      type: "tool_result",
      callId: "c3",
      name: "read",
      output: "three",
      isError: false,
      images: [{ type: "image", mediaType: "image/png", data: "AA==" }],
    });
    // A system message that a compatible server gets as text appended to the user message before it.
    items.push({ type: "message", role: "user", content: [{ type: "text", text: "Now the last" }] });
    items.push({ type: "message", role: "system", content: [{ type: "text", text: "Be brief." }] });
    const second = build(items);
    expect(second).toEqual(fresh(items));
    expect(second[3]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "c2", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
        { id: "c3", type: "function", function: { name: "read", arguments: "{}" } },
      ],
    });
    expect(second.at(-1)).toEqual({
      role: "user",
      content: "Now the last\n\n<system-reminder>\nBe brief.\n</system-reminder>",
    });
    // Built again, the same (the user message that took the reminder was not kept and changed twice).
    expect(build(items)).toEqual(second);
  });

  it("the scripted server answers 400 in OpenAI's shape for a tool message without its call", async () => {
    const s = await startScriptedServer({
      provider: "openai-chat",
      validate: true,
      script: [{ type: "reply", text: "ok" }],
    });
    servers.push(s);
    const response = await fetch(`${s.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "tool", tool_call_id: "nope", content: "x" },
        ],
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("must be a response to a preceeding message with 'tool_calls'");
    expect(s.rejections).toHaveLength(1);
  });
});

/** The Items a worker would commit from a folded stream. */
function committed(r: Awaited<ReturnType<typeof collect>>, provider: "anthropic" | "openai-chat"): Item[] {
  const items: Item[] = [];
  for (const replay of r.replays) {
    items.push({
      type: "reasoning",
      provider,
      text: r.thinking,
      ...(replay.signature ? { signature: replay.signature } : {}),
    });
  }
  if (r.text !== "") items.push(assistantMessage(r.text));
  for (const call of r.toolCalls)
    items.push({ type: "tool_call", callId: call.id, name: call.name, arguments: call.raw });
  return items;
}

for (const provider of ["anthropic", "openai-chat"] as const) {
  describe(`${provider} multi-turn tool loop against a validating server`, () => {
    it("sends a second request the API accepts, with the calls, their results and the reasoning", async () => {
      const s = await startScriptedServer({
        provider,
        validate: true,
        script: [
          {
            type: "reply",
            text: "Let me check.",
            toolCalls: [
              { id: "t1", name: "read", arguments: { path: "a.txt" } },
              { id: "t2", name: "list", arguments: {} },
            ],
            options: {
              thinking: "I need both files.",
              usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100 },
            },
          },
          { type: "reply", text: "All done." },
        ],
      });
      servers.push(s);
      const { client, warnings } = clientFor(provider, s.baseURL);
      const history: Item[] = [userMessage("Summarize a.txt and the folder.")];
      const first = await collect(client.stream({ items: history, tools: REQUEST.tools }));
      expect(first.stopReason).toBe("tool_use");
      expect(first.usage).toMatchObject({ inputTokens: 120, outputTokens: 30, cacheReadTokens: 100 });
      expect(first.toolCalls.map((c) => c.input)).toEqual([{ path: "a.txt" }, {}]);
      history.push(...committed(first, provider));
      history.push({ type: "tool_result", callId: "t2", output: "a.txt b.txt", isError: false });
      history.push({ type: "tool_result", callId: "t1", output: "hello", isError: false });
      const second = await collect(client.stream({ items: history, tools: REQUEST.tools }));
      expect(s.rejections).toEqual([]);
      expect(second.text).toBe("All done.");
      const body = JSON.stringify(s.requests[1]);
      if (provider === "anthropic") {
        // Its own signed thinking goes back; nothing is reported dropped.
        expect(body).toContain('"signature":"sig-scripted"');
        expect(warnings.filter((w) => w.code === "dropped_reasoning")).toEqual([]);
      } else {
        // Chat cannot take reasoning back: dropped, and said so.
        expect(body).not.toContain("I need both files.");
        expect(warnings.filter((w) => w.code === "dropped_reasoning")).toHaveLength(1);
      }
    });
  });
}
