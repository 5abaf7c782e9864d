import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createGeminiAdapter } from "../src/adapters/gemini/index.ts";
import type { Request } from "../src/request.ts";
import { type ReplayServer, startReplayServer } from "../src/testing/replay-server.ts";
import { type Collected, collect, fixtureLines, fixturesDir } from "./openai-responses-collect.ts";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const request: Request = {
  items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }],
};

async function replay(lines: string[]): Promise<Collected> {
  const server = await startReplayServer({ provider: "gemini", lines });
  servers.push(server);
  const adapter = createGeminiAdapter({
    provider: "gemini",
    model: "gemini-3-pro-preview",
    apiKey: "k",
    baseURL: server.baseURL,
  });
  const stream = await adapter.open(request, new AbortController().signal);
  return collect(stream, "gemini");
}

/** The thought signatures of a recording, in order, read straight from the payloads. */
function signatures(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const chunk = JSON.parse(line) as {
      candidates?: { content?: { parts?: { thoughtSignature?: string }[] } }[];
    };
    for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
      if (part.thoughtSignature) out.push(part.thoughtSignature);
    }
  }
  return out;
}

describe("Gemini fixtures replay to the right normalized stream", () => {
  it("covers every fixture file", () => {
    expect(readdirSync(new URL("gemini/", fixturesDir)).sort()).toEqual([
      "google-reasoning.chunks.txt",
      "google-stream-no-args-tool-call.chunks.txt",
      "google-text.chunks.txt",
      "google-tool-call-gemini3.chunks.txt",
      "google-tool-call.chunks.txt",
    ]);
  });

  it("text: one text block, signature kept on it, thoughts counted in output", async () => {
    const lines = fixtureLines("gemini/google-text.chunks.txt");
    const out = await replay(lines);
    expect(out.text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    expect(out.stopReason).toBe("end_turn");
    expect(out.status).toBe("completed");
    // candidates 23 + thoughts 185 = output 208; prompt 9.
    expect(out.usage).toEqual({ inputTokens: 9, outputTokens: 208, reasoningTokens: 185 });
    expect(out.items).toEqual([
      {
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: out.text }],
        providerData: { thoughtSignature: signatures(lines)[0] },
      },
    ]);
    expect(out.events[0]).toEqual({
      type: "status",
      status: "started",
      model: "gemini-3-pro-preview",
      responseId: "bH6LaZW8Fp_3nsEPqtaSwQ4",
    });
  });

  it("reasoning model text: final usage, signature on the text block", async () => {
    const lines = fixtureLines("gemini/google-reasoning.chunks.txt");
    const out = await replay(lines);
    expect(out.text).toBe(
      'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
    );
    expect(out.usage).toEqual({ inputTokens: 9, outputTokens: 29 + 256, reasoningTokens: 256 });
    expect(out.items[0]).toMatchObject({ providerData: { thoughtSignature: signatures(lines)[0] } });
    expect(out.stopReason).toBe("end_turn");
  });

  for (const file of ["google-tool-call.chunks.txt", "google-tool-call-gemini3.chunks.txt"]) {
    it(`${file}: whole-arguments call, generated id, signature on the call, tool_use stop`, async () => {
      const lines = fixtureLines(`gemini/${file}`);
      const out = await replay(lines);
      expect(out.toolCalls).toHaveLength(1);
      const call = out.toolCalls[0];
      expect(call?.name).toBe("weather");
      expect(call?.input).toEqual({ location: "San Francisco" });
      expect(call?.id).toMatch(/^call_[0-9a-f-]{36}$/);
      expect(call?.providerData).toEqual({ thoughtSignature: signatures(lines)[0] });
      // One block_start, exactly one input_json delta holding the whole JSON, one block_stop.
      const deltas = out.events.filter((e) => e.type === "block_delta");
      expect(deltas).toEqual([
        { type: "block_delta", index: 0, delta: "input_json", text: '{"location":"San Francisco"}' },
      ]);
      expect(out.stopReason).toBe("tool_use");
      expect(out.text).toBe("");
    });
  }

  it("gemini 3 tool call: usage with thoughts", async () => {
    const out = await replay(fixtureLines("gemini/google-tool-call-gemini3.chunks.txt"));
    expect(out.usage).toEqual({ inputTokens: 29, outputTokens: 15 + 804, reasoningTokens: 804 });
  });

  it("streamed function-call arguments: thought, no-arg call, three calls of one function with unique ids", async () => {
    const lines = fixtureLines("gemini/google-stream-no-args-tool-call.chunks.txt");
    const out = await replay(lines);
    expect(out.thinking.startsWith("**Processing User Requests**")).toBe(true);
    expect(out.toolCalls.map((c) => [c.name, c.input])).toEqual([
      ["read_theme", {}],
      ["read_screen", { id: "A" }],
      ["read_screen", { id: "B" }],
      ["read_screen", { id: "C" }],
    ]);
    const ids = out.toolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(4);
    expect(out.toolCalls[0]?.providerData).toEqual({ thoughtSignature: signatures(lines)[0] });
    expect(out.toolCalls[1]?.providerData).toBeUndefined();
    expect(out.stopReason).toBe("tool_use");
    expect(out.usage).toEqual({ inputTokens: 249, outputTokens: 58 + 183, reasoningTokens: 183 });
    // Thinking block then four tool blocks, indices in order of appearance.
    expect(out.events.filter((e) => e.type === "block_start").map((e) => e.block)).toEqual([
      "thinking",
      "tool_use",
      "tool_use",
      "tool_use",
      "tool_use",
    ]);
    expect(out.replays).toEqual([{ provider: "gemini" }]);
  });
});
