import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIResponsesAdapter } from "../src/adapters/openai-responses/index.ts";
import type { Request } from "../src/request.ts";
import { type ReplayServer, startReplayServer } from "../src/testing/replay-server.ts";
import {
  type Collected,
  collect,
  fixtureLines,
  fixturesDir,
  splitResponses,
} from "./openai-responses-collect.ts";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const request: Request = {
  items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }],
};

async function replay(lines: string[]): Promise<Collected> {
  const server = await startReplayServer({ provider: "openai-responses", lines });
  servers.push(server);
  const adapter = createOpenAIResponsesAdapter({
    provider: "openai-responses",
    model: "gpt-5.1",
    apiKey: "test-key",
    baseURL: server.baseURL,
  });
  const stream = await adapter.open(request, new AbortController().signal);
  return collect(stream, "openai-responses");
}

/** The final text of a recording, from its `output_text.done` events (independent of the deltas). */
function doneText(lines: string[]): string {
  let text = "";
  for (const line of lines) {
    const payload = JSON.parse(line) as { type: string; text?: string };
    if (payload.type === "response.output_text.done") text += payload.text ?? "";
  }
  return text;
}

describe("OpenAI Responses fixtures replay to the right normalized stream", () => {
  it("covers every fixture file", () => {
    const files = readdirSync(new URL("openai-responses/", fixturesDir)).sort();
    expect(files).toEqual([
      "openai-apply-patch-tool-delete.1.chunks.txt",
      "openai-custom-tool.1.chunks.txt",
      "openai-error.1.chunks.txt",
      "openai-reasoning-encrypted-content.1.chunks.txt",
      "openai-web-search-tool.1.chunks.txt",
    ]);
  });

  it("apply_patch: a built-in tool item is passed over, the stream completes", async () => {
    const out = await replay(fixtureLines("openai-responses/openai-apply-patch-tool-delete.1.chunks.txt"));
    expect(out.status).toBe("completed");
    expect(out.stopReason).toBe("end_turn");
    expect(out.toolCalls).toEqual([]);
    expect(out.text).toBe("");
    expect(out.usage).toEqual({ inputTokens: 24, outputTokens: 0, cacheReadTokens: 0, reasoningTokens: 0 });
    expect(out.events[0]).toEqual({
      type: "status",
      status: "started",
      model: "gpt-5.1-2025-11-13",
      responseId: "resp_delete_001",
    });
  });

  it("custom tool: raw input deltas, custom kind, tool_use stop", async () => {
    const out = await replay(fixtureLines("openai-responses/openai-custom-tool.1.chunks.txt"));
    expect(out.toolCalls).toEqual([
      {
        id: "call_custom_sql_001",
        name: "write_sql",
        input: "SELECT * FROM users WHERE age > 25",
        raw: "SELECT * FROM users WHERE age > 25",
        kind: "custom",
      },
    ]);
    const deltas = out.events.filter((e) => e.type === "block_delta").map((e) => e.text);
    expect(deltas).toEqual(["SELECT * ", "FROM users ", "WHERE age > 25"]);
    expect(out.stopReason).toBe("tool_use");
    expect(out.usage).toEqual({ inputTokens: 50, outputTokens: 20, cacheReadTokens: 0, reasoningTokens: 0 });
  });

  it("error event: a typed, non-retryable quota error and a failed status", async () => {
    const out = await replay(fixtureLines("openai-responses/openai-error.1.chunks.txt"));
    expect(out.status).toBe("failed");
    expect(out.stopReason).toBe("error");
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatchObject({ code: "rate_limit", retryable: false });
    expect(out.errors[0]?.message).toContain("You exceeded your current quota");
    expect(out.errors[0]?.message).toContain("billing");
  });

  it("reasoning + encrypted content: four responses, each normalized", async () => {
    const responses = splitResponses(
      fixtureLines("openai-responses/openai-reasoning-encrypted-content.1.chunks.txt"),
    );
    expect(responses).toHaveLength(4);
    const outs: Collected[] = [];
    for (const lines of responses) outs.push(await replay(lines));

    const [first, second, third, fourth] = outs as [Collected, Collected, Collected, Collected];
    expect(first.thinking).toBe(
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    );
    expect(first.replays).toHaveLength(1);
    const replay0 = first.replays[0];
    expect(replay0?.provider).toBe("openai-responses");
    expect(replay0?.summary).toEqual([first.thinking]);
    expect(replay0?.providerData).toEqual({
      itemId: "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9",
    });
    // The encrypted content of output_item.done (the complete one), not of output_item.added.
    expect(replay0?.encryptedContent?.startsWith("gAAAAABpPDIVOKrsHNZ0Gws")).toBe(true);
    expect(first.toolCalls).toEqual([
      {
        id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        name: "calculator",
        input: { a: 12, b: 7, op: "add" },
        raw: '{"a":12,"b":7,"op":"add"}',
        kind: "function",
      },
    ]);
    expect(first.stopReason).toBe("tool_use");
    expect(first.usage).toEqual({
      inputTokens: 134,
      outputTokens: 28,
      cacheReadTokens: 0,
      reasoningTokens: 0,
    });
    // Block indices follow first appearance: reasoning 0, tool call 1.
    expect(first.events.filter((e) => e.type === "block_start").map((e) => [e.index, e.block])).toEqual([
      [0, "thinking"],
      [1, "tool_use"],
    ]);

    expect(second.toolCalls.map((c) => c.input)).toEqual([{ a: 19, b: 3, op: "multiply" }]);
    expect(second.usage.inputTokens).toBe(221);
    expect(third.toolCalls.map((c) => c.input)).toEqual([{ a: 57, b: 10, op: "multiply" }]);
    expect(third.toolCalls[0]?.id).toBe("call_Zl5vIMnD7dVAjgU6FkhmiCZh");
    expect(fourth.text).toBe("The final result is **570**.");
    expect(fourth.text).toBe(doneText(responses[3] ?? []));
    expect(fourth.toolCalls).toEqual([]);
    expect(fourth.stopReason).toBe("end_turn");
    expect(fourth.usage).toEqual({
      inputTokens: 299,
      outputTokens: 12,
      cacheReadTokens: 0,
      reasoningTokens: 0,
    });
  });

  it("web search: cited text intact, cached and reasoning usage", async () => {
    const lines = fixtureLines("openai-responses/openai-web-search-tool.1.chunks.txt");
    const out = await replay(lines);
    expect(out.status).toBe("completed");
    expect(out.stopReason).toBe("end_turn");
    expect(out.toolCalls).toEqual([]);
    expect(out.text).toBe(doneText(lines));
    expect(out.text.startsWith("I checked today’s tech headlines")).toBe(true);
    expect(out.text.endsWith("pull out more details now?")).toBe(true);
    // Seven reasoning items without summary or encrypted content (recorded with store: true).
    expect(out.replays).toHaveLength(7);
    expect(out.replays.every((r) => r.encryptedContent === undefined && r.summary === undefined)).toBe(true);
    expect(out.usage).toEqual({
      inputTokens: 31073,
      outputTokens: 4416,
      cacheReadTokens: 3712,
      reasoningTokens: 3712,
    });
    // The text block is the 14th (after seven reasoning blocks and six web search calls), its index is stable.
    const textStart = out.events.find((e) => e.type === "block_start" && e.block === "text");
    expect(textStart).toMatchObject({ index: 13 });
  });
});
