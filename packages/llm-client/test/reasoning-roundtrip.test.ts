import { afterEach, describe, expect, it } from "vitest";
import { createAnthropicAdapter } from "../src/adapters/anthropic/index.ts";
import { createGeminiAdapter } from "../src/adapters/gemini/index.ts";
import { createOpenAIResponsesAdapter } from "../src/adapters/openai-responses/index.ts";
import type { Item, ToolCallItem } from "../src/item.ts";
import type { ClientWarning, Request, ToolSpec } from "../src/request.ts";
import { anthropicWire } from "../src/testing/wire-anthropic.ts";
import { geminiWire, scriptedThoughtSignature } from "../src/testing/wire-gemini.ts";
import { openAIResponsesWire, scriptedEncryptedContent } from "../src/testing/wire-openai-responses.ts";
import { collect, fixtureLines, splitResponses, startSequenceServer } from "./openai-responses-collect.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const calculator: ToolSpec = {
  name: "calculator",
  description: "Computes a op b",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string" } },
    required: ["a", "b", "op"],
  },
};

function runCalculator(call: ToolCallItem): string {
  const { a, b, op } = JSON.parse(call.arguments) as { a: number; b: number; op: string };
  return String(op === "add" ? a + b : op === "multiply" ? a * b : Number.NaN);
}

type Input = Record<string, unknown>;

describe("OpenAI Responses: reasoning comes back encrypted, with its summary", () => {
  it("replays the recorded four-request calculator exchange through the SDK", async () => {
    const responses = splitResponses(
      fixtureLines("openai-responses/openai-reasoning-encrypted-content.1.chunks.txt"),
    );
    const server = await startSequenceServer(openAIResponsesWire, responses);
    closers.push(server.close);
    const warnings: ClientWarning[] = [];
    const adapter = createOpenAIResponsesAdapter({
      provider: "openai-responses",
      model: "gpt-5-mini",
      apiKey: "k",
      baseURL: server.baseURL,
      onWarning: (w) => warnings.push(w),
    });
    const items: Item[] = [
      {
        type: "message",
        role: "user",
        content: [{ type: "text", text: "Compute (12 + 7) * 3 * 10 with the tool." }],
      },
    ];
    let finalText = "";
    for (let turn = 0; turn < 4; turn++) {
      const request: Request = {
        system: "Use the calculator.",
        items,
        tools: [calculator],
        settings: { reasoning: { effort: "low" }, cacheKey: "session-42" },
      };
      const out = await collect(
        await adapter.open(request, new AbortController().signal),
        "openai-responses",
      );
      expect(out.errors).toEqual([]);
      items.push(...out.items);
      for (const item of out.items) {
        if (item.type === "tool_call") {
          items.push({
            type: "tool_result",
            callId: item.callId,
            output: runCalculator(item),
            isError: false,
          });
        }
      }
      finalText = out.text;
    }
    expect(finalText).toBe("The final result is **570**.");
    expect(server.requests).toHaveLength(4);
    expect(warnings).toEqual([]);

    const first = server.requests[0] as Input;
    expect(first).toMatchObject({
      model: "gpt-5-mini",
      store: false,
      include: ["reasoning.encrypted_content"],
      stream: true,
      instructions: "Use the calculator.",
      prompt_cache_key: "session-42",
      reasoning: { effort: "low", summary: "auto" },
    });

    // The second request carries the reasoning item exactly as output_item.done gave it, before its call.
    const recordedDone = responses[0]
      ?.map((line) => JSON.parse(line) as { type: string; item?: Input })
      .find((e) => e.type === "response.output_item.done" && e.item?.type === "reasoning")?.item;
    expect(recordedDone).toBeDefined();
    const input = (server.requests[1] as { input: Input[] }).input;
    expect(input.map((i) => i.type ?? `message:${String(i.role)}`)).toEqual([
      "message:user",
      "reasoning",
      "function_call",
      "function_call_output",
    ]);
    expect(input[1]).toEqual({
      type: "reasoning",
      id: recordedDone?.id,
      summary: recordedDone?.summary,
      encrypted_content: recordedDone?.encrypted_content,
    });
    expect(input[2]).toEqual({
      type: "function_call",
      call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
      name: "calculator",
      arguments: '{"a":12,"b":7,"op":"add"}',
    });
    expect(input[3]).toEqual({
      type: "function_call_output",
      call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
      output: "19",
    });
    const last = (server.requests[3] as { input: Input[] }).input;
    expect(last.filter((i) => i.type === "function_call_output").map((i) => i.output)).toEqual([
      "19",
      "57",
      "570",
    ]);
  });

  it("scripted: thinking summary deltas and encrypted content round-trip", async () => {
    const thinking = "Let me think — 🤔 carefully.";
    const server = await startSequenceServer(openAIResponsesWire, [
      openAIResponsesWire.response(
        "",
        [{ id: "call_1", name: "calculator", arguments: { a: 1, b: 2, op: "add" } }],
        {
          thinking,
          chunkSize: 3,
        },
      ),
      openAIResponsesWire.response("3"),
    ]);
    closers.push(server.close);
    const adapter = createOpenAIResponsesAdapter({
      provider: "openai-responses",
      model: "o4",
      apiKey: "k",
      baseURL: server.baseURL,
    });
    const items: Item[] = [{ type: "message", role: "user", content: [{ type: "text", text: "1+2?" }] }];
    const out = await collect(
      await adapter.open({ items, tools: [calculator] }, new AbortController().signal),
      "openai-responses",
    );
    expect(out.thinking).toBe(thinking);
    expect(out.replays[0]).toMatchObject({
      encryptedContent: scriptedEncryptedContent(thinking),
      summary: [thinking],
    });
    items.push(...out.items, { type: "tool_result", callId: "call_1", output: "3", isError: false });
    const second = await collect(
      await adapter.open({ items, tools: [calculator] }, new AbortController().signal),
      "openai-responses",
    );
    expect(second.text).toBe("3");
    const input = (server.requests[1] as { input: Input[] }).input;
    expect(input[1]).toMatchObject({
      type: "reasoning",
      encrypted_content: scriptedEncryptedContent(thinking),
      summary: [{ type: "summary_text", text: thinking }],
    });
  });
});

describe("Anthropic: signed thinking and redacted thinking come back verbatim", () => {
  it("a recorded thinking block (signature) and a redacted block return before the tool_use", async () => {
    const recorded = fixtureLines("anthropic/anthropic-clear-thinking.1.chunks.txt");
    const recordedSignature = recorded
      .map((line) => JSON.parse(line) as { delta?: { type?: string; signature?: string } })
      .find((e) => e.delta?.type === "signature_delta")?.delta?.signature;
    expect(recordedSignature).toBeTruthy();
    const j = (value: unknown) => JSON.stringify(value);
    // A turn with a redacted thinking block and a tool call, in the Messages wire format.
    const toolTurn = [
      j({
        type: "message_start",
        message: {
          id: "msg_2",
          type: "message",
          role: "assistant",
          model: "claude-x",
          content: [],
          usage: { input_tokens: 20, output_tokens: 1 },
        },
      }),
      j({
        type: "content_block_start",
        index: 0,
        content_block: { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
      }),
      j({ type: "content_block_stop", index: 0 }),
      j({
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_9", name: "calculator", input: {} },
      }),
      j({
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: '{"a":2,"b":3,"op":"add"}' },
      }),
      j({ type: "content_block_stop", index: 1 }),
      j({
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 30 },
      }),
      j({ type: "message_stop" }),
    ];
    const server = await startSequenceServer(anthropicWire, [
      recorded,
      toolTurn,
      anthropicWire.response("5"),
    ]);
    closers.push(server.close);
    const adapter = createAnthropicAdapter({
      provider: "anthropic",
      model: "claude-x",
      apiKey: "k",
      baseURL: server.baseURL,
    });
    const items: Item[] = [
      { type: "message", role: "user", content: [{ type: "text", text: "think, then add 2 and 3" }] },
    ];
    for (let turn = 0; turn < 3; turn++) {
      const out = await collect(
        await adapter.open(
          { items, tools: [calculator], settings: { reasoning: { budgetTokens: 2048 }, maxTokens: 4096 } },
          new AbortController().signal,
        ),
        "anthropic",
      );
      expect(out.errors).toEqual([]);
      items.push(...out.items);
      for (const item of out.items) {
        if (item.type === "tool_call")
          items.push({
            type: "tool_result",
            callId: item.callId,
            output: runCalculator(item),
            isError: false,
          });
      }
      if (turn === 0)
        items.push({ type: "message", role: "user", content: [{ type: "text", text: "now use the tool" }] });
    }
    const second = (server.requests[1] as { messages: { role: string; content: Input[] }[] }).messages;
    expect(second[1]?.role).toBe("assistant");
    expect(second[1]?.content.find((b) => b.type === "thinking")).toMatchObject({
      type: "thinking",
      signature: recordedSignature,
    });
    const third = (server.requests[2] as { messages: { role: string; content: Input[] }[] }).messages;
    const toolTurnBack = third.find(
      (m) => m.role === "assistant" && m.content.some((b) => b.type === "tool_use"),
    );
    expect(toolTurnBack?.content.map((b) => b.type)).toEqual(["redacted_thinking", "tool_use"]);
    expect(toolTurnBack?.content[0]).toEqual({
      type: "redacted_thinking",
      data: "EmwKAhgBEgy3va3pzix/LafPsn4a",
    });
    expect(third.at(-1)?.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_9",
      content: "5",
    });
  });
});

describe("Gemini: thought signatures go back on the part that carried them", () => {
  it("a recorded Gemini 3 call's signature returns on the functionCall; text signature on the text part", async () => {
    const callLines = fixtureLines("gemini/google-tool-call-gemini3.chunks.txt");
    const recordedSignature = (
      JSON.parse(callLines[0] ?? "{}") as {
        candidates: { content: { parts: { thoughtSignature: string }[] } }[];
      }
    ).candidates[0]?.content.parts[0]?.thoughtSignature;
    const server = await startSequenceServer(geminiWire, [
      callLines,
      geminiWire.response("It is sunny in San Francisco."),
      geminiWire.response("You're welcome."),
    ]);
    closers.push(server.close);
    const adapter = createGeminiAdapter({
      provider: "gemini",
      model: "gemini-3-pro-preview",
      apiKey: "k",
      baseURL: server.baseURL,
    });
    const weather: ToolSpec = {
      name: "weather",
      description: "Weather for a location",
      parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    };
    const items: Item[] = [
      { type: "message", role: "user", content: [{ type: "text", text: "Weather in SF?" }] },
    ];
    const first = await collect(
      await adapter.open(
        { system: "Be brief.", items, tools: [weather], settings: { reasoning: { effort: "high" } } },
        new AbortController().signal,
      ),
      "gemini",
    );
    items.push(...first.items);
    const call = first.items.find((i): i is ToolCallItem => i.type === "tool_call");
    expect(call).toBeDefined();
    // No name on the result: the adapter looks it up from the call.
    items.push({ type: "tool_result", callId: call?.callId ?? "", output: "sunny, 18°C", isError: false });
    const second = await collect(
      await adapter.open({ items, tools: [weather] }, new AbortController().signal),
      "gemini",
    );
    expect(second.text).toBe("It is sunny in San Francisco.");
    expect(second.errors).toEqual([]);
    items.push(...second.items, {
      type: "message",
      role: "user",
      content: [{ type: "text", text: "Thanks" }],
    });
    const third = await collect(
      await adapter.open({ items, tools: [weather] }, new AbortController().signal),
      "gemini",
    );
    expect(third.errors).toEqual([]);

    const firstBody = server.requests[0] as Input;
    expect(firstBody).toMatchObject({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { thinkingConfig: { thinkingLevel: "HIGH", includeThoughts: true } },
    });
    const contents = (server.requests[1] as { contents: Input[] }).contents;
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "Weather in SF?" }] },
      {
        role: "model",
        parts: [
          {
            functionCall: { name: "weather", args: { location: "San Francisco" } },
            thoughtSignature: recordedSignature,
          },
        ],
      },
      {
        role: "user",
        parts: [{ functionResponse: { name: "weather", response: { output: "sunny, 18°C" } } }],
      },
    ]);
    const thirdContents = (server.requests[2] as { contents: Input[] }).contents;
    expect(thirdContents[3]).toEqual({
      role: "model",
      parts: [
        {
          text: "It is sunny in San Francisco.",
          thoughtSignature: scriptedThoughtSignature("text:It is sunny in San Francisco."),
        },
      ],
    });
  });

  it("the same function twice in one response: unique ids, both answered, counts match", async () => {
    const server = await startSequenceServer(geminiWire, [
      geminiWire.response("", [
        { id: "x", name: "weather", arguments: { location: "Paris" } },
        { id: "y", name: "weather", arguments: { location: "Tokyo" } },
      ]),
      geminiWire.response("Both done."),
    ]);
    closers.push(server.close);
    const adapter = createGeminiAdapter({
      provider: "gemini",
      model: "gemini-3-flash",
      apiKey: "k",
      baseURL: server.baseURL,
    });
    const items: Item[] = [
      { type: "message", role: "user", content: [{ type: "text", text: "Paris and Tokyo?" }] },
    ];
    const first = await collect(await adapter.open({ items }, new AbortController().signal), "gemini");
    const ids = first.toolCalls.map((c) => c.id);
    expect(first.toolCalls.map((c) => c.input)).toEqual([{ location: "Paris" }, { location: "Tokyo" }]);
    expect(new Set(ids).size).toBe(2);
    items.push(...first.items);
    for (const c of first.toolCalls) {
      items.push({
        type: "tool_result",
        callId: c.id,
        name: "weather",
        output: `ok ${String((c.input as { location: string }).location)}`,
        isError: false,
      });
    }
    const second = await collect(await adapter.open({ items }, new AbortController().signal), "gemini");
    expect(second.errors).toEqual([]);
    expect(second.text).toBe("Both done.");
    const contents = (server.requests[1] as { contents: { role: string; parts: Input[] }[] }).contents;
    expect(contents[1]?.parts.map((p) => (p.functionCall as Input).args)).toEqual([
      { location: "Paris" },
      { location: "Tokyo" },
    ]);
    expect(contents[2]?.parts.map((p) => (p.functionResponse as { response: unknown }).response)).toEqual([
      { output: "ok Paris" },
      { output: "ok Tokyo" },
    ]);
  });

  it("the scripted server rejects what the real API rejects", () => {
    const call = { role: "model", parts: [{ functionCall: { name: "f", args: {} }, thoughtSignature: "s" }] };
    const user = { role: "user", parts: [{ text: "hi" }] };
    expect(
      geminiWire.validate({
        contents: [user, call, { role: "user", parts: [{ functionResponse: { name: "g", response: {} } }] }],
      }),
    ).toMatch(/do not match/);
    expect(geminiWire.validate({ contents: [user, call, user] })).toMatch(
      /immediately before a function response/,
    );
    expect(
      geminiWire.validate({
        contents: [
          user,
          { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
          { role: "user", parts: [{ functionResponse: { name: "f", response: {} } }] },
        ],
      }),
    ).toMatch(/thought_signature/);
    expect(
      openAIResponsesWire.validate({
        model: "m",
        input: [{ type: "function_call_output", call_id: "c", output: "x" }],
      }),
    ).toMatch(/No tool call found/);
    expect(
      openAIResponsesWire.validate({
        model: "m",
        input: [
          { type: "reasoning", id: "rs_1", summary: [] },
          { role: "user", content: "x" },
        ],
      }),
    ).toMatch(/not persisted/);
  });
});

/** A history produced by the three providers' shapes, with reasoning each receiver may or may not verify. */
function mixedHistory(): Item[] {
  return [
    { type: "message", role: "user", content: [{ type: "text", text: "List files, then read a.txt" }] },
    { type: "reasoning", text: "I should list.", signature: "anthropic-sig", provider: "anthropic" },
    { type: "reasoning", text: "", encryptedContent: "opaque", redacted: true, provider: "anthropic" },
    { type: "tool_call", callId: "toolu_1", name: "ls", arguments: "{}" },
    { type: "tool_result", callId: "toolu_1", output: "a.txt", isError: false },
    {
      type: "reasoning",
      text: "Now read it.",
      summary: ["Now read it."],
      encryptedContent: "gAAAA-openai",
      provider: "openai-responses",
      providerData: { itemId: "rs_9" },
    },
    { type: "tool_call", callId: "call_2", name: "read", arguments: '{"path":"a.txt"}' },
    { type: "tool_result", callId: "call_2", output: "hello", isError: false },
    { type: "reasoning", text: "Done.", provider: "gemini", providerData: { thoughtSignature: "gem-sig" } },
    { type: "message", role: "assistant", content: [{ type: "text", text: "a.txt says hello" }] },
    { type: "message", role: "user", content: [{ type: "text", text: "thanks" }] },
  ];
}

describe("cross-provider history: unverifiable reasoning is dropped, pairing stays intact", () => {
  it("to OpenAI Responses: only its own encrypted reasoning goes, calls and outputs paired", async () => {
    const server = await startSequenceServer(openAIResponsesWire, [openAIResponsesWire.response("ok")]);
    closers.push(server.close);
    const warnings: ClientWarning[] = [];
    const adapter = createOpenAIResponsesAdapter({
      provider: "openai-responses",
      model: "gpt-5",
      apiKey: "k",
      baseURL: server.baseURL,
      onWarning: (w) => warnings.push(w),
    });
    const out = await collect(
      await adapter.open({ items: mixedHistory() }, new AbortController().signal),
      "openai-responses",
    );
    expect(out.errors).toEqual([]);
    const input = (server.requests[0] as { input: Input[] }).input;
    expect(input.map((i) => i.type ?? `message:${String(i.role)}`)).toEqual([
      "message:user",
      "function_call",
      "function_call_output",
      "reasoning",
      "function_call",
      "function_call_output",
      "message:assistant",
      "message:user",
    ]);
    expect(input[3]).toMatchObject({ id: "rs_9", encrypted_content: "gAAAA-openai" });
    expect(JSON.stringify(input)).not.toContain("I should list.");
    expect(warnings.map((w) => w.code)).toEqual(["dropped_reasoning"]);
    expect(warnings[0]?.detail).toEqual({ count: 3 });
  });

  it("to Gemini: only Gemini-signed reasoning goes, foreign calls get the documented placeholder signature", async () => {
    const server = await startSequenceServer(geminiWire, [geminiWire.response("ok")]);
    closers.push(server.close);
    const warnings: ClientWarning[] = [];
    const adapter = createGeminiAdapter({
      provider: "gemini",
      model: "gemini-3-pro-preview",
      apiKey: "k",
      baseURL: server.baseURL,
      onWarning: (w) => warnings.push(w),
    });
    const out = await collect(
      await adapter.open({ items: mixedHistory() }, new AbortController().signal),
      "gemini",
    );
    expect(out.errors).toEqual([]);
    const contents = (server.requests[0] as { contents: Input[] }).contents;
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "List files, then read a.txt" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "ls", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "ls", response: { output: "a.txt" } } }] },
      {
        role: "model",
        parts: [
          {
            functionCall: { name: "read", args: { path: "a.txt" } },
            thoughtSignature: "skip_thought_signature_validator",
          },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "read", response: { output: "hello" } } }] },
      {
        role: "model",
        parts: [{ text: "Done.", thought: true, thoughtSignature: "gem-sig" }, { text: "a.txt says hello" }],
      },
      { role: "user", parts: [{ text: "thanks" }] },
    ]);
    expect(warnings.map((w) => w.code)).toEqual(["dropped_reasoning"]);
    expect(warnings[0]?.detail).toEqual({ count: 3 });
  });
});

describe("cross-provider history to Anthropic", () => {
  it("keeps only Anthropic-signed and redacted thinking; tool_use/tool_result pairing intact", async () => {
    const server = await startSequenceServer(anthropicWire, [anthropicWire.response("ok")]);
    closers.push(server.close);
    const warnings: ClientWarning[] = [];
    const adapter = createAnthropicAdapter({
      provider: "anthropic",
      model: "claude-x",
      apiKey: "k",
      baseURL: server.baseURL,
      onWarning: (w) => warnings.push(w),
    });
    const out = await collect(
      await adapter.open({ items: mixedHistory() }, new AbortController().signal),
      "anthropic",
    );
    expect(out.errors).toEqual([]);
    const messages = (server.requests[0] as { messages: { role: string; content: Input[] }[] }).messages;
    const body = JSON.stringify(messages);
    expect(body).toContain("anthropic-sig");
    expect(body).toContain('"redacted_thinking"');
    expect(body).not.toContain("gAAAA-openai");
    expect(body).not.toContain("gem-sig");
    const uses = messages.flatMap((m) => m.content.filter((b) => b.type === "tool_use").map((b) => b.id));
    const results = messages.flatMap((m) =>
      m.content.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id),
    );
    expect(uses).toEqual(["toolu_1", "call_2"]);
    expect(results).toEqual(["toolu_1", "call_2"]);
    expect(warnings.map((w) => w.code)).toContain("dropped_reasoning");
  });
});
