/**
 * The client is the one owner of retries, mid-stream failures included:
 * through the real SDKs against the scripted server, a stream that breaks
 * after output is sent again from the start (with a `retry` event whose
 * `discarded` voids what the broken attempt streamed) while no tool call
 * has completed, within the total budget; a stall fails within the idle
 * timeout plus the budget. Timing comes from small options, and the only
 * wall-clock check is a generous upper bound.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderKind } from "../src/item.ts";
import { frameLines } from "../src/testing/replay-server.ts";
import { type ScriptStep, startScriptedServer, WIRE_FORMATS } from "../src/testing/scripted-server.ts";
import { clientFor, collect, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const TEXT = "One, two, three, four, five, six, seven.";

/** The reply cut (closed or hanging) after about half of its events. */
function cut(provider: ProviderKind, end: "close" | "hang", toolCall = false): ScriptStep {
  const calls = toolCall ? [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }] : [];
  const lines = WIRE_FORMATS[provider].response(toolCall ? "" : TEXT, calls, { chunkSize: 4 });
  const framed = frameLines(provider, lines);
  const events = framed.split("\n\n");
  // With a tool call: keep everything up to the event that completes the call, drop the terminal events.
  const keep = toolCall
    ? events.findLastIndex((e) => /content_block_stop|output_item\.done/.test(e)) + 1
    : Math.ceil(events.length / 2);
  const kept = `${events.slice(0, keep).join("\n\n")}\n\n`;
  return { type: "raw", body: framed, truncateBytes: Buffer.byteLength(kept), end };
}

const reply: ScriptStep = { type: "reply", text: TEXT, options: { chunkSize: 4 } };

for (const provider of Object.keys(WIRE_FORMATS) as ProviderKind[]) {
  describe(`${provider}: retries after output`, () => {
    it("a connection torn mid-stream is retried from the start; the caller keeps the text once", async () => {
      const s = await startScriptedServer({ provider, script: [cut(provider, "close"), reply] });
      servers.push(s);
      const r = await collect(clientFor(provider, s.baseURL).client.stream(hello()));
      expect(r.status).toBe("completed");
      expect(r.text).toBe(TEXT);
      expect(r.retries).toHaveLength(1);
      expect(r.retries[0]).toMatchObject({ attempt: 2, discarded: true, code: "incomplete_stream" });
      // The broken attempt's block was closed before the retry.
      expect(r.aborts).toHaveLength(1);
      expect(s.requests).toHaveLength(2);
      expect(s.requests[1]).toEqual(s.requests[0]);
    });

    it("a stall after output fails within the idle timeout plus the retry budget", async () => {
      const s = await startScriptedServer({ provider, script: () => cut(provider, "hang") });
      servers.push(s);
      const idleMs = 150;
      const totalBudgetMs = 600;
      const { client } = clientFor(provider, s.baseURL, {
        retry: { maxAttempts: 50, initialDelayMs: 10, maxDelayMs: 20, totalBudgetMs },
        timeout: { firstEventMs: 5_000, idleMs },
      });
      const began = performance.now();
      const r = await collect(client.stream(hello()));
      const elapsed = performance.now() - began;
      expect(r.status).toBe("failed");
      expect(r.errors.map((e) => e.code)).toEqual(["timeout"]);
      expect(r.errors[0]!.message).toMatch(/retry budget/);
      // Bounded by the budget, not by maxAttempts (50 x 150 ms would be 7.5 s).
      expect(r.retries.length).toBeGreaterThan(0);
      expect(r.retries.length).toBeLessThan(10);
      // idle + budget, plus the watchdog's quarter-tick and a loaded machine's slack.
      expect(elapsed).toBeLessThan(idleMs * 1.25 + totalBudgetMs + 4_000);
    });
  });
}

describe("a completed tool call commits the stream", () => {
  // Chat Completions and Gemini complete a tool call only with the response: no mid-stream point after one.
  for (const provider of ["anthropic", "openai-responses"] as ProviderKind[]) {
    it(`${provider}: a failure after a finished tool call is reported, not retried`, async () => {
      const s = await startScriptedServer({ provider, script: () => cut(provider, "close", true) });
      servers.push(s);
      const r = await collect(clientFor(provider, s.baseURL).client.stream(hello()));
      expect(r.toolCalls.map((c) => c.name)).toEqual(["read"]);
      expect(r.status).toBe("failed");
      expect(r.retries).toEqual([]);
      expect(s.requests).toHaveLength(1);
    });
  }
});
