/**
 * Every recorded provider stream, served from 127.0.0.1 and read by the real
 * SDK through `createClient`, then dispatched by the Timeline, yields the
 * text, reasoning and tool calls the llm-client fixture tests expect (values
 * copied from those tests, which read them off the recordings).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createClient, type ProviderKind, type Usage, userMessage } from "@yoi/llm-client";
import { startReplayServer } from "@yoi/llm-client/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  createTextCollector,
  createThinkingCollector,
  createToolCallCollector,
  createTurnCollector,
  createUsageCollector,
  onTextDelta,
  onThinkingDelta,
  Timeline,
  type TurnResult,
} from "../src/index.ts";

const fixturesDir = new URL("../../../fixtures/provider-streams/", import.meta.url);

function fixtureLines(relative: string): string[] {
  return readFileSync(new URL(relative, fixturesDir), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** The Responses recording with four responses holds one per request; serve them one at a time. */
function splitResponses(lines: string[]): string[][] {
  const out: string[][] = [];
  for (const line of lines) {
    if ((JSON.parse(line) as { type: string }).type === "response.created") out.push([]);
    out.at(-1)?.push(line);
  }
  return out;
}

type TextExpectation = string | { length: number; start: string; end: string };

interface ExpectedCall {
  name: string;
  args: Record<string, unknown>;
  /** Exact id, or a pattern for generated ids. */
  id: string | RegExp;
  argumentsJson?: string;
  toolKind?: "function" | "custom";
}

interface Row {
  provider: ProviderKind;
  file: string;
  /** For recordings that hold several responses: which one. */
  response?: number;
  text: TextExpectation;
  thinking?: TextExpectation;
  calls: ExpectedCall[];
  usage?: Usage;
  status?: "completed" | "failed";
  stopReason: TurnResult["stopReason"];
  check?: (r: Replayed) => void;
}

const ROWS: Row[] = [
  // ---- anthropic ----
  {
    provider: "anthropic",
    file: "anthropic-text.chunks.txt",
    text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
    calls: [],
    usage: { inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
    stopReason: "end_turn",
  },
  {
    provider: "anthropic",
    file: "anthropic-tool-no-args.chunks.txt",
    text: "I'll update the issue list for you.",
    calls: [{ id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", args: {}, argumentsJson: "{}" }],
    stopReason: "tool_use",
  },
  {
    provider: "anthropic",
    file: "anthropic-refusal.chunks.txt",
    text: "",
    calls: [],
    stopReason: "refusal",
  },
  {
    provider: "anthropic",
    file: "duplicate-message-start.chunks.txt",
    text: "Hello, World!",
    calls: [],
    usage: { inputTokens: 17, outputTokens: 227 },
    stopReason: "end_turn",
  },
  {
    provider: "anthropic",
    file: "anthropic-message-delta-input-tokens.chunks.txt",
    text: "pong",
    calls: [],
    usage: { inputTokens: 61, outputTokens: 2 },
    stopReason: "end_turn",
  },
  {
    provider: "anthropic",
    file: "anthropic-clear-thinking.1.chunks.txt",
    text: "925 ÷ 5 = 185",
    thinking: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
    calls: [],
    stopReason: "end_turn",
    check: (r) => {
      const [thinking] = r.turn.blocks;
      expect(thinking?.kind).toBe("thinking");
      if (thinking?.kind !== "thinking") return;
      expect(thinking.replay?.provider).toBe("anthropic");
      expect(thinking.replay?.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N.*BgB$/);
    },
  },
  {
    provider: "anthropic",
    file: "anthropic-json-other-tool.1.chunks.txt",
    text: "",
    calls: [
      {
        id: "toolu_019Zvehfe1XQWweT1pm7okyt",
        name: "weather",
        args: { location: "San Francisco" },
        argumentsJson: '{"location": "San Francisco"}',
      },
    ],
    stopReason: "tool_use",
  },
  {
    provider: "anthropic",
    file: "anthropic-json-tool.1.chunks.txt",
    text: "",
    calls: [
      {
        id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        name: "json",
        args: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
      },
    ],
    stopReason: "tool_use",
  },
  {
    provider: "anthropic",
    file: "anthropic-code-execution-20260120-prompt-cache.1.chunks.txt",
    text: "The sum of the squares of the numbers 1 through 12 is **650**.",
    calls: [],
    usage: {
      inputTokens: 9632,
      outputTokens: 198,
      cacheReadTokens: 6289,
      cacheWriteTokens: 3337,
      reasoningTokens: 0,
    },
    stopReason: "end_turn",
  },
  {
    provider: "anthropic",
    file: "anthropic-web-search-tool.1.chunks.txt",
    text: {
      length: 2402,
      start: "Based on my search results, here are the key tech news developments from today",
      end: "marking over 20 years since their first international retail expansion.",
    },
    calls: [],
    usage: { inputTokens: 15665, outputTokens: 795, cacheReadTokens: 0, cacheWriteTokens: 0 },
    stopReason: "end_turn",
    check: (r) => {
      // The search (call and result at the call's place), then 19 text blocks, 9 of them cited.
      const [search, ...rest] = r.turn.blocks;
      expect(search?.kind).toBe("server_tool");
      if (search?.kind !== "server_tool") return;
      expect(search.item).toMatchObject({ name: "web_search", status: "completed" });
      expect(search.item.sources).toHaveLength(10);
      expect(rest.map((b) => b.kind)).toEqual(new Array(19).fill("text"));
      expect(rest.filter((b) => b.kind === "text" && b.citations !== undefined)).toHaveLength(9);
    },
  },
  // ---- openai-chat ----
  {
    provider: "openai-chat",
    file: "openai-text.chunks.txt",
    text: {
      length: 1724,
      start: "**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually",
      end: "shared human experiences and mutual respect.",
    },
    thinking: "",
    calls: [],
    usage: { inputTokens: 16, outputTokens: 300, cacheReadTokens: 0, reasoningTokens: 0 },
    stopReason: "end_turn",
  },
  {
    provider: "openai-chat",
    file: "xai-tool-call.chunks.txt",
    text: "",
    thinking: {
      length: 1069,
      start: "First, the user is asking about the weather in San Francisco",
      end: "",
    },
    calls: [
      {
        id: "call_79382389",
        name: "weather",
        args: { location: "San Francisco" },
        argumentsJson: '{"location":"San Francisco"}',
      },
    ],
    usage: { inputTokens: 307, outputTokens: 253, cacheReadTokens: 306, reasoningTokens: 227 },
    stopReason: "tool_use",
  },
  {
    provider: "openai-chat",
    file: "azure-model-router.1.chunks.txt",
    text: "Capital of Denmark.",
    calls: [],
    usage: { inputTokens: 15, outputTokens: 78, cacheReadTokens: 0, reasoningTokens: 64 },
    stopReason: "end_turn",
  },
  // ---- openai-responses ----
  {
    provider: "openai-responses",
    file: "openai-apply-patch-tool-delete.1.chunks.txt",
    text: "",
    calls: [],
    usage: { inputTokens: 24, outputTokens: 0, cacheReadTokens: 0, reasoningTokens: 0 },
    stopReason: "end_turn",
  },
  {
    provider: "openai-responses",
    file: "openai-custom-tool.1.chunks.txt",
    text: "",
    calls: [
      {
        id: "call_custom_sql_001",
        name: "write_sql",
        args: {},
        argumentsJson: "SELECT * FROM users WHERE age > 25",
        toolKind: "custom",
      },
    ],
    usage: { inputTokens: 50, outputTokens: 20, cacheReadTokens: 0, reasoningTokens: 0 },
    stopReason: "tool_use",
  },
  {
    provider: "openai-responses",
    file: "openai-error.1.chunks.txt",
    text: "",
    calls: [],
    status: "failed",
    stopReason: "error",
    check: (r) => {
      expect(r.turn.errors).toHaveLength(1);
      expect(r.turn.errors[0]).toMatchObject({ code: "rate_limit", retryable: false });
      expect(r.turn.errors[0]?.message).toContain("You exceeded your current quota");
    },
  },
  {
    provider: "openai-responses",
    file: "openai-reasoning-encrypted-content.1.chunks.txt",
    response: 0,
    text: "",
    thinking:
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    calls: [
      {
        id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        name: "calculator",
        args: { a: 12, b: 7, op: "add" },
        argumentsJson: '{"a":12,"b":7,"op":"add"}',
        toolKind: "function",
      },
    ],
    usage: { inputTokens: 134, outputTokens: 28, cacheReadTokens: 0, reasoningTokens: 0 },
    stopReason: "tool_use",
    check: (r) => {
      const [thinking] = r.turn.blocks;
      if (thinking?.kind !== "thinking") throw new Error("expected a thinking block first");
      expect(thinking.replay?.provider).toBe("openai-responses");
      expect(thinking.replay?.summary).toEqual([thinking.text]);
      expect(thinking.replay?.encryptedContent?.startsWith("gAAAAABpPDIVOKrsHNZ0Gws")).toBe(true);
    },
  },
  {
    provider: "openai-responses",
    file: "openai-reasoning-encrypted-content.1.chunks.txt",
    response: 1,
    text: "",
    calls: [{ id: /^call_/, name: "calculator", args: { a: 19, b: 3, op: "multiply" } }],
    stopReason: "tool_use",
  },
  {
    provider: "openai-responses",
    file: "openai-reasoning-encrypted-content.1.chunks.txt",
    response: 2,
    text: "",
    calls: [
      { id: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", name: "calculator", args: { a: 57, b: 10, op: "multiply" } },
    ],
    stopReason: "tool_use",
  },
  {
    provider: "openai-responses",
    file: "openai-reasoning-encrypted-content.1.chunks.txt",
    response: 3,
    text: "The final result is **570**.",
    calls: [],
    usage: { inputTokens: 299, outputTokens: 12, cacheReadTokens: 0, reasoningTokens: 0 },
    stopReason: "end_turn",
  },
  {
    provider: "openai-responses",
    file: "openai-web-search-tool.1.chunks.txt",
    text: { length: -1, start: "I checked today’s tech headlines", end: "pull out more details now?" },
    calls: [],
    usage: { inputTokens: 31073, outputTokens: 4416, cacheReadTokens: 3712, reasoningTokens: 3712 },
    stopReason: "end_turn",
    check: (r) => {
      // Reasoning and a web search call, six times, then reasoning and the text block with its citations.
      expect(r.turn.blocks.map((b) => b.kind)).toEqual([
        ...new Array(6).fill(["thinking", "server_tool"]).flat(),
        "thinking",
        "text",
      ]);
      const searches = r.turn.blocks.flatMap((b) => (b.kind === "server_tool" ? [b.item] : []));
      // Each call's place is kept at its start and filled with its finished state.
      expect(searches.map((s) => s.status)).toEqual(new Array(6).fill("completed"));
      expect(JSON.parse(searches[0]!.arguments)).toEqual({
        action: "search",
        query: "tech news today December 5 2025",
      });
      const text = r.turn.blocks.at(-1);
      expect(text?.kind === "text" ? text.citations?.length : undefined).toBe(12);
      expect(r.turn.text).toBe(
        doneText(fixtureLines("openai-responses/openai-web-search-tool.1.chunks.txt")),
      );
    },
  },
  // ---- gemini ----
  {
    provider: "gemini",
    file: "google-text.chunks.txt",
    text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
    calls: [],
    usage: { inputTokens: 9, outputTokens: 208, reasoningTokens: 185 },
    stopReason: "end_turn",
    check: (r) => {
      const [text] = r.turn.blocks;
      expect(text).toMatchObject({ kind: "text", providerData: { thoughtSignature: expect.any(String) } });
    },
  },
  {
    provider: "gemini",
    file: "google-reasoning.chunks.txt",
    text: 'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
    calls: [],
    usage: { inputTokens: 9, outputTokens: 29 + 256, reasoningTokens: 256 },
    stopReason: "end_turn",
  },
  {
    provider: "gemini",
    file: "google-tool-call.chunks.txt",
    text: "",
    calls: [
      {
        id: /^call_[0-9a-f-]{36}$/,
        name: "weather",
        args: { location: "San Francisco" },
        argumentsJson: '{"location":"San Francisco"}',
      },
    ],
    stopReason: "tool_use",
    check: (r) => expect(r.turn.toolCalls[0]?.providerData).toEqual({ thoughtSignature: expect.any(String) }),
  },
  {
    provider: "gemini",
    file: "google-tool-call-gemini3.chunks.txt",
    text: "",
    calls: [
      {
        id: /^call_[0-9a-f-]{36}$/,
        name: "weather",
        args: { location: "San Francisco" },
        argumentsJson: '{"location":"San Francisco"}',
      },
    ],
    usage: { inputTokens: 29, outputTokens: 15 + 804, reasoningTokens: 804 },
    stopReason: "tool_use",
  },
  {
    provider: "gemini",
    file: "google-stream-no-args-tool-call.chunks.txt",
    text: "",
    thinking: { length: -1, start: "**Processing User Requests**", end: "" },
    calls: [
      { id: /^call_/, name: "read_theme", args: {} },
      { id: /^call_/, name: "read_screen", args: { id: "A" } },
      { id: /^call_/, name: "read_screen", args: { id: "B" } },
      { id: /^call_/, name: "read_screen", args: { id: "C" } },
    ],
    usage: { inputTokens: 249, outputTokens: 58 + 183, reasoningTokens: 183 },
    stopReason: "tool_use",
    check: (r) => {
      expect(new Set(r.turn.toolCalls.map((c) => c.id)).size).toBe(4);
      expect(r.turn.blocks.map((b) => b.kind)).toEqual([
        "thinking",
        "tool_call",
        "tool_call",
        "tool_call",
        "tool_call",
      ]);
    },
  },
];

/** The final text of a Responses recording, from its `output_text.done` events. */
function doneText(lines: string[]): string {
  let text = "";
  for (const line of lines) {
    const payload = JSON.parse(line) as { type: string; text?: string };
    if (payload.type === "response.output_text.done") text += payload.text ?? "";
  }
  return text;
}

interface Replayed {
  turn: TurnResult;
  timeline: Timeline;
  text: ReturnType<ReturnType<typeof createTextCollector>["result"]>;
  thinking: ReturnType<ReturnType<typeof createThinkingCollector>["result"]>;
  tools: ReturnType<ReturnType<typeof createToolCallCollector>["result"]>;
  usageDeliveries: Usage[];
  uiText: string;
  uiThinking: string;
  lifecycle: { opened: number; closed: number; perBlock: Map<number, string[]> };
}

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function replay(row: Row): Promise<Replayed> {
  let lines = fixtureLines(`${row.provider}/${row.file}`);
  if (row.response !== undefined) lines = splitResponses(lines)[row.response] ?? [];
  const server = await startReplayServer({ provider: row.provider, lines });
  servers.push(server);
  const client = createClient({
    provider: row.provider,
    model:
      row.provider === "anthropic" ? "claude-test" : row.provider === "gemini" ? "gemini-test" : "gpt-test",
    apiKey: "test-key",
    baseURL: server.baseURL,
    retry: { maxAttempts: 1 },
    timeout: { firstEventMs: 10_000, idleMs: 10_000 },
  });

  const timeline = new Timeline();
  const turn = createTurnCollector();
  const text = createTextCollector();
  const thinking = createThinkingCollector();
  const tools = createToolCallCollector();
  const usageDeliveries: Usage[] = [];
  const usage = createUsageCollector({ onUsage: (u) => usageDeliveries.push(u) });
  for (const c of [turn, text, thinking, tools, usage]) c.register(timeline);
  let uiText = "";
  let uiThinking = "";
  timeline.on(
    "text",
    onTextDelta((t) => {
      uiText += t;
    }),
  );
  timeline.on(
    "thinking",
    onThinkingDelta((t) => {
      uiThinking += t;
    }),
  );
  // Lifecycle checker on every block kind: one start, then deltas, then one end, per block.
  const lifecycle = { opened: 0, closed: 0, perBlock: new Map<number, string[]>() };
  for (const kind of ["text", "thinking", "tool_use"] as const) {
    timeline.on(kind, {
      name: `lifecycle:${kind}`,
      createScope: (start) => {
        lifecycle.opened++;
        const phases: string[] = [];
        lifecycle.perBlock.set(start.index, phases);
        return phases;
      },
      onEvent(phases, e) {
        phases.push(e.phase);
        if (e.phase === "stop" || e.phase === "abort") lifecycle.closed++;
      },
    });
  }

  await timeline.consume(client.stream({ items: [userMessage("hello")] }));
  return {
    turn: turn.result(),
    timeline,
    text: text.result(),
    thinking: thinking.result(),
    tools: tools.result(),
    usageDeliveries,
    uiText,
    uiThinking,
    lifecycle,
  };
}

function expectText(actual: string, expected: TextExpectation): void {
  if (typeof expected === "string") {
    expect(actual).toBe(expected);
    return;
  }
  if (expected.length >= 0) expect(actual).toHaveLength(expected.length);
  expect(actual.startsWith(expected.start)).toBe(true);
  expect(actual.endsWith(expected.end)).toBe(true);
}

describe("recorded provider streams through llm-client and the Timeline", () => {
  it("the table covers every recording", () => {
    for (const provider of ["anthropic", "openai-chat", "openai-responses", "gemini"] as const) {
      const files = readdirSync(new URL(`${provider}/`, fixturesDir)).filter((f) => f.endsWith(".txt"));
      const covered = new Set(ROWS.filter((r) => r.provider === provider).map((r) => r.file));
      expect([...covered].sort(), provider).toEqual(files.sort());
    }
  });

  for (const row of ROWS) {
    const name = `${row.provider}/${row.file}${row.response === undefined ? "" : ` (response ${row.response + 1})`}`;
    it(name, async () => {
      const r = await replay(row);
      const { turn } = r;

      expect(turn.status).toBe(row.status ?? "completed");
      expect(turn.stopReason).toBe(row.stopReason);
      if (row.status !== "failed") expect(turn.errors).toEqual([]);
      expectText(turn.text, row.text);
      if (row.thinking !== undefined) {
        const reasoning = turn.blocks.flatMap((b) => (b.kind === "thinking" ? [b.text] : [])).join("");
        expectText(reasoning, row.thinking);
        expect(r.thinking.blocks.map((b) => b.text).join("")).toBe(reasoning);
        expect(r.uiThinking).toBe(reasoning);
      }
      expect(turn.toolCalls).toHaveLength(row.calls.length);
      row.calls.forEach((want, i) => {
        const got = turn.toolCalls[i]!;
        expect(got.name).toBe(want.name);
        expect(got.args).toEqual(want.args);
        if (typeof want.id === "string") expect(got.id).toBe(want.id);
        else expect(got.id).toMatch(want.id);
        if (want.argumentsJson !== undefined) expect(got.argumentsJson).toBe(want.argumentsJson);
        if (want.toolKind !== undefined) expect(got.toolKind).toBe(want.toolKind);
      });
      if (row.usage !== undefined) expect(turn.usage).toEqual(row.usage);
      row.check?.(r);

      // Every collector and callback agrees with the turn collector.
      expect(r.text.text).toBe(turn.text);
      expect(r.uiText).toBe(turn.text);
      expect(r.tools.calls.map(({ index: _i, ...c }) => c)).toEqual(
        turn.toolCalls.map(({ kind: _k, index: _i, ...c }) => c),
      );
      expect(r.usageDeliveries).toEqual(turn.usage === undefined ? [] : [turn.usage]);
      // Nothing was cut, nothing failed, every scope was created and dropped once.
      expect(turn.aborted).toEqual([]);
      expect(r.tools.aborted).toEqual([]);
      expect(r.timeline.handlerErrors).toEqual([]);
      expect(r.timeline.openBlocks()).toEqual([]);
      expect(r.lifecycle.closed).toBe(r.lifecycle.opened);
      for (const phases of r.lifecycle.perBlock.values()) {
        expect(phases[0]).toBe("start");
        expect(phases.at(-1)).toBe("stop");
        expect(phases.slice(1, -1).every((p) => p === "delta")).toBe(true);
      }
    });
  }
});
