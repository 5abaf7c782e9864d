/**
 * Every recorded Chat Completions stream, replayed through the openai SDK
 * from a local server, normalizes to what the recording says (values read
 * off the fixture files; see the comments).
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startReplayServer } from "../src/testing/replay-server.ts";
import { clientFor, collect, type Folded, fixtureLines, fixturesDir, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function replay(file: string): Promise<Folded> {
  const server = await startReplayServer({
    provider: "openai-chat",
    lines: fixtureLines(`openai-chat/${file}`),
  });
  servers.push(server);
  // A compatible-server base URL (127.0.0.1): the portable request subset is sent.
  const { client } = clientFor("openai-chat", server.baseURL);
  return collect(client.stream(hello()));
}

describe("openai-chat fixtures", () => {
  const CASES: Record<string, (r: Folded) => void> = {
    "openai-text.chunks.txt": (r) => {
      expect(r.started).toMatchObject({
        model: "gpt-4.1-nano-2025-04-14",
        responseId: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
      });
      // 1724 characters of content deltas.
      expect(r.text).toHaveLength(1724);
      expect(r.text.startsWith("**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually")).toBe(true);
      expect(r.text.endsWith("shared human experiences and mutual respect.")).toBe(true);
      expect(r.thinking).toBe("");
      expect(r.toolCalls).toEqual([]);
      // The final usage chunk: prompt 16, completion 300, cached 0, reasoning 0.
      expect(r.usage).toEqual({ inputTokens: 16, outputTokens: 300, cacheReadTokens: 0, reasoningTokens: 0 });
      expect(r.stopReason).toBe("end_turn");
    },
    "xai-tool-call.chunks.txt": (r) => {
      // reasoning_content deltas (1069 characters) become one thinking block before the call.
      expect(r.thinking).toHaveLength(1069);
      expect(r.thinking.startsWith("First, the user is asking about the weather in San Francisco")).toBe(
        true,
      );
      expect(r.text).toBe("");
      expect(r.toolCalls).toEqual([
        {
          id: "call_79382389",
          name: "weather",
          raw: '{"location":"San Francisco"}',
          input: { location: "San Francisco" },
        },
      ]);
      // xAI reports reasoning beside the completion (total 560 = 307 + 26 + 227): output = 26 + 227.
      expect(r.usage).toEqual({
        inputTokens: 307,
        outputTokens: 253,
        cacheReadTokens: 306,
        reasoningTokens: 227,
      });
      expect(r.stopReason).toBe("tool_use");
    },
    "azure-model-router.1.chunks.txt": (r) => {
      // The first chunk is Azure's prompt_filter_results with no choices.
      expect(r.text).toBe("Capital of Denmark.");
      // OpenAI counts reasoning inside completion_tokens (78 of which 64 reasoning): unchanged.
      expect(r.usage).toEqual({ inputTokens: 15, outputTokens: 78, cacheReadTokens: 0, reasoningTokens: 64 });
      expect(r.stopReason).toBe("end_turn");
    },
  };

  it("covers every file in the folder", () => {
    const files = readdirSync(new URL("openai-chat/", fixturesDir)).filter((f) => f.endsWith(".txt"));
    expect(files.sort()).toEqual(Object.keys(CASES).sort());
  });

  for (const [file, check] of Object.entries(CASES)) {
    it(`replays ${file}`, async () => {
      const result = await replay(file);
      expect(result.status).toBe("completed");
      expect(result.errors).toEqual([]);
      check(result);
    });
  }
});
