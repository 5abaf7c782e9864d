/**
 * Every recorded Anthropic stream, replayed through @anthropic-ai/sdk from a
 * local server, normalizes to what the recording says. Expected values are
 * read off the fixture files by hand (see the comments), not snapshots.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startReplayServer } from "../src/testing/replay-server.ts";
import { clientFor, collect, type Folded, fixtureLines, fixturesDir, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function replay(file: string, onRawEvent?: (payload: unknown) => void): Promise<Folded> {
  const server = await startReplayServer({ provider: "anthropic", lines: fixtureLines(`anthropic/${file}`) });
  servers.push(server);
  const { client } = clientFor("anthropic", server.baseURL, onRawEvent ? { onRawEvent } : {});
  return collect(client.stream(hello()));
}

describe("anthropic fixtures", () => {
  it("covers every file in the folder", () => {
    const files = readdirSync(new URL("anthropic/", fixturesDir)).filter((f) => f.endsWith(".txt"));
    expect(files.sort()).toEqual(Object.keys(CASES).sort());
  });

  const CASES: Record<string, (r: Folded) => void> = {
    "anthropic-text.chunks.txt": (r) => {
      expect(r.started).toMatchObject({
        model: "claude-sonnet-4-5-20250929",
        responseId: "msg_01QC4g3HwBThD4BaNtBckFDJ",
      });
      expect(r.text).toBe(
        "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
      );
      expect(r.toolCalls).toEqual([]);
      // The recording has one ping; the SDK's public stream drops Anthropic pings, so none reaches the caller.
      expect(r.events.filter((e) => e.type === "ping")).toHaveLength(0);
      // message_delta: input 12, cache 0/0, output 30.
      expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 });
      expect(r.stopReason).toBe("end_turn");
    },
    "anthropic-tool-no-args.chunks.txt": (r) => {
      expect(r.text).toBe("I'll update the issue list for you.");
      // The call streams only an empty partial_json: it must come out as {}.
      expect(r.toolCalls).toEqual([
        { id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", raw: "{}", input: {} },
      ]);
      expect(r.usage).toMatchObject({ inputTokens: 565, outputTokens: 48 });
      expect(r.stopReason).toBe("tool_use");
    },
    "anthropic-refusal.chunks.txt": (r) => {
      expect(r.text).toBe("");
      expect(r.events.filter((e) => e.type === "block_start")).toEqual([]);
      expect(r.usage).toMatchObject({ inputTokens: 18, outputTokens: 5 });
      expect(r.status).toBe("completed");
      expect(r.stopReason).toBe("refusal");
    },
    "duplicate-message-start.chunks.txt": (r) => {
      // message_start twice: still one started (checked by fold) and one text block.
      expect(r.events.filter((e) => e.type === "block_start")).toHaveLength(1);
      expect(r.text).toBe("Hello, World!");
      // message_delta carries only output_tokens: input stays 17 from message_start; no cache fields reported.
      expect(r.usage).toEqual({ inputTokens: 17, outputTokens: 227 });
      expect(r.stopReason).toBe("end_turn");
    },
    "anthropic-message-delta-input-tokens.chunks.txt": (r) => {
      expect(r.text).toBe("pong");
      // message_start says 43 input tokens, message_delta corrects it to 61: the later value wins.
      expect(r.usage).toEqual({ inputTokens: 61, outputTokens: 2 });
      expect(r.stopReason).toBe("end_turn");
    },
    "anthropic-clear-thinking.1.chunks.txt": (r) => {
      expect(r.thinking).toBe(
        "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
      );
      expect(r.replays).toHaveLength(1);
      expect(r.replays[0]!.provider).toBe("anthropic");
      expect(r.replays[0]!.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N.*BgB$/);
      expect(r.text).toBe("925 ÷ 5 = 185");
      expect(r.usage).toMatchObject({ inputTokens: 69, outputTokens: 53 });
      expect(r.stopReason).toBe("end_turn");
    },
    "anthropic-json-other-tool.1.chunks.txt": (r) => {
      expect(r.text).toBe("");
      expect(r.toolCalls).toEqual([
        {
          id: "toolu_019Zvehfe1XQWweT1pm7okyt",
          name: "weather",
          raw: '{"location": "San Francisco"}',
          input: { location: "San Francisco" },
        },
      ]);
      expect(r.usage).toMatchObject({ inputTokens: 843, outputTokens: 28 });
      expect(r.stopReason).toBe("tool_use");
    },
    "anthropic-json-tool.1.chunks.txt": (r) => {
      expect(r.toolCalls).toHaveLength(1);
      expect(r.toolCalls[0]).toMatchObject({ id: "toolu_01KFbKqPYSuAKujiL6mTfzYA", name: "json" });
      expect(r.toolCalls[0]!.input).toEqual({
        elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }],
      });
      expect(r.usage).toMatchObject({ inputTokens: 849, outputTokens: 47 });
      expect(r.stopReason).toBe("tool_use");
    },
    "anthropic-code-execution-20260120-prompt-cache.1.chunks.txt": (r) => {
      // server_tool_use and bash_code_execution_tool_result blocks are the server's business: passed over.
      expect(r.toolCalls).toEqual([]);
      expect(
        r.events.filter((e) => e.type === "block_start").map((e) => e.type === "block_start" && e.block),
      ).toEqual(["text"]);
      expect(r.text).toBe("The sum of the squares of the numbers 1 through 12 is **650**.");
      // message_delta: input 6 + cache write 3337 + cache read 6289 = 9632 in our convention.
      expect(r.usage).toEqual({
        inputTokens: 9632,
        outputTokens: 198,
        cacheReadTokens: 6289,
        cacheWriteTokens: 3337,
        reasoningTokens: 0,
      });
      expect(r.stopReason).toBe("end_turn");
    },
    "anthropic-web-search-tool.1.chunks.txt": (r) => {
      expect(r.toolCalls).toEqual([]);
      // 2402 characters of text_delta across the citation blocks.
      expect(r.text).toHaveLength(2402);
      expect(
        r.text.startsWith("Based on my search results, here are the key tech news developments from today"),
      ).toBe(true);
      expect(r.text.endsWith("marking over 20 years since their first international retail expansion.")).toBe(
        true,
      );
      expect(r.usage).toEqual({
        inputTokens: 15665,
        outputTokens: 795,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
      expect(r.stopReason).toBe("end_turn");
    },
  };

  for (const [file, check] of Object.entries(CASES)) {
    it(`replays ${file}`, async () => {
      const result = await replay(file);
      expect(result.status).toBe("completed");
      expect(result.errors).toEqual([]);
      check(result);
    });
  }

  it("shows the server tool's raw events to onRawEvent too", async () => {
    const raw: unknown[] = [];
    await replay("anthropic-web-search-tool.1.chunks.txt", (p) => raw.push(p));
    const types = raw
      .map((p) => (p as { content_block?: { type?: string } }).content_block?.type)
      .filter(Boolean);
    expect(types).toContain("server_tool_use");
    expect(types).toContain("web_search_tool_result");
  });
});
