/**
 * Stream shapes the recordings do not cover, served through the real SDKs:
 * interleaved parallel tool calls, compatible-server quirks, refusals,
 * redacted thinking, context overflow and mid-stream errors.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderKind } from "../src/item.ts";
import { type ScriptStep, startScriptedServer } from "../src/testing/scripted-server.ts";
import { clientFor, collect, type Folded, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Every request gets `step`; one attempt (the client's retries have their own tests). */
async function run(provider: ProviderKind, step: ScriptStep): Promise<Folded> {
  const s = await startScriptedServer({ provider, script: () => step });
  servers.push(s);
  return collect(clientFor(provider, s.baseURL, { retry: { maxAttempts: 1 } }).client.stream(hello()));
}

const chunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: "c1",
    model: "local",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });

describe("openai-chat streams", () => {
  it("interleaved parallel tool-call deltas are assembled by index", async () => {
    const r = await run("openai-chat", {
      type: "lines",
      lines: [
        chunk({ role: "assistant", content: "Checking both." }),
        chunk({
          tool_calls: [
            { index: 0, id: "call_a", type: "function", function: { name: "weather", arguments: "" } },
          ],
        }),
        chunk({
          tool_calls: [
            { index: 1, id: "call_b", type: "function", function: { name: "time", arguments: '{"tz"' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: ':"UTC"}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
        chunk({}, "tool_calls"),
      ],
    });
    expect(r.text).toBe("Checking both.");
    expect(r.toolCalls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["call_a", "weather", { city: "Oslo" }],
      ["call_b", "time", { tz: "UTC" }],
    ]);
    // Both calls were open at once: their deltas interleave in the event stream.
    const deltas = r.events
      .filter((e) => e.type === "block_delta" && e.delta === "input_json")
      .map((e) => e.type === "block_delta" && e.index);
    expect(deltas).toEqual([2, 1, 2, 1]);
    expect(r.stopReason).toBe("tool_use");
    // A compatible server that sends no usage: none is reported, nothing fails.
    expect(r.usage).toEqual({});
  });

  it("a server numbering every call 0 (new id), argument-less calls and finish 'stop' (Ollama style)", async () => {
    const r = await run("openai-chat", {
      type: "lines",
      lines: [
        chunk({
          role: "assistant",
          tool_calls: [{ index: 0, id: "x1", function: { name: "list", arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, id: "x2", function: { name: "read", arguments: '{"p":1}' } }] }),
        chunk({}, "stop"),
      ],
    });
    expect(r.toolCalls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["x1", "list", {}],
      ["x2", "read", { p: 1 }],
    ]);
    expect(r.stopReason).toBe("tool_use");
  });

  it("a refusal is text with stop reason refusal; vLLM-style `reasoning` is thinking", async () => {
    const r = await run("openai-chat", {
      type: "lines",
      lines: [
        chunk({ reasoning: "Policy says no." }),
        chunk({ refusal: "I can't help with that." }),
        chunk({}, "stop"),
      ],
    });
    expect(r.thinking).toBe("Policy says no.");
    expect(r.text).toBe("I can't help with that.");
    expect(r.stopReason).toBe("refusal");
  });

  it("length and content_filter finish reasons", async () => {
    const length = await run("openai-chat", {
      type: "lines",
      lines: [chunk({ content: "abc" }), chunk({}, "length")],
    });
    expect(length.stopReason).toBe("max_tokens");
    const filtered = await run("openai-chat", {
      type: "lines",
      lines: [chunk({ content: "a" }), chunk({}, "content_filter")],
    });
    expect(filtered.stopReason).toBe("content_filter");
  });

  it("context overflow is recognised (OpenAI code, vLLM and llama.cpp wording)", async () => {
    const bodies = [
      {
        error: {
          message: "This model's maximum context length is 128000 tokens.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
      {
        object: "error",
        message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
        type: "BadRequestError",
        code: 400,
      },
      {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
        },
      },
    ];
    for (const body of bodies) {
      const r = await run("openai-chat", { type: "error", status: 400, body });
      expect(r.errors[0]).toMatchObject({ code: "context_overflow", status: 400, retryable: false });
    }
  });

  it("an error payload mid-stream fails the stream with its classification", async () => {
    const r = await run("openai-chat", {
      type: "raw",
      body: `data: ${chunk({ content: "par" })}\n\ndata: {"error":{"message":"The server had an error","type":"server_error"}}\n\n`,
    });
    expect(r.text).toBe("par");
    expect(r.status).toBe("failed");
    expect(r.errors[0]!.code).toBe("server");
  });
});

describe("anthropic streams", () => {
  const start = JSON.stringify({
    type: "message_start",
    message: { id: "m1", model: "claude", usage: { input_tokens: 3, output_tokens: 1 } },
  });

  it("redacted thinking carries its data for replay", async () => {
    const r = await run("anthropic", {
      type: "lines",
      lines: [
        start,
        JSON.stringify({
          type: "content_block_start",
          index: 0,
          content_block: { type: "redacted_thinking", data: "EncRypted==" },
        }),
        JSON.stringify({ type: "content_block_stop", index: 0 }),
        JSON.stringify({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
        JSON.stringify({
          type: "content_block_delta",
          index: 1,
          delta: { type: "text_delta", text: "Done." },
        }),
        JSON.stringify({ type: "content_block_stop", index: 1 }),
        JSON.stringify({
          type: "message_delta",
          delta: { stop_reason: "max_tokens" },
          usage: { output_tokens: 9 },
        }),
        JSON.stringify({ type: "message_stop" }),
      ],
    });
    expect(r.replays).toEqual([{ provider: "anthropic", redacted: true, encryptedContent: "EncRypted==" }]);
    expect(r.text).toBe("Done.");
    expect(r.stopReason).toBe("max_tokens");
  });

  it("an unknown event type and an unknown block type are passed over", async () => {
    const r = await run("anthropic", {
      type: "lines",
      lines: [
        start,
        JSON.stringify({ type: "brand_new_event", payload: { x: 1 } }),
        JSON.stringify({
          type: "content_block_start",
          index: 0,
          content_block: { type: "hologram", data: {} },
        }),
        JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "hologram_delta", x: 1 } }),
        JSON.stringify({ type: "content_block_stop", index: 0 }),
        JSON.stringify({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
        JSON.stringify({
          type: "content_block_delta",
          index: 1,
          delta: { type: "text_delta", text: "fine" },
        }),
        JSON.stringify({ type: "content_block_stop", index: 1 }),
        JSON.stringify({
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: { output_tokens: 2 },
        }),
        JSON.stringify({ type: "message_stop" }),
      ],
    });
    expect(r.status).toBe("completed");
    expect(r.text).toBe("fine");
  });

  it("'prompt is too long' is context_overflow; an error event after output fails (retries off)", async () => {
    const overflow = await run("anthropic", {
      type: "error",
      status: 400,
      message: "prompt is too long: 208310 tokens > 200000 maximum",
    });
    expect(overflow.errors[0]).toMatchObject({ code: "context_overflow", status: 400 });

    const s = await startScriptedServer({
      provider: "anthropic",
      script: [
        {
          type: "raw",
          body:
            `event: message_start\ndata: ${start}\n\n` +
            `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
            `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}}\n\n` +
            `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
        },
      ],
    });
    servers.push(s);
    const r = await collect(
      clientFor("anthropic", s.baseURL, { retry: { maxAttempts: 1 } }).client.stream(hello()),
    );
    expect(r.text).toBe("Hal");
    expect(r.errors[0]).toMatchObject({ code: "overloaded", retryable: true });
    expect(r.aborts).toHaveLength(1);
    expect(s.requests).toHaveLength(1);
  });
});
