/**
 * The fault tests of the core issue, for the OpenAI Responses and Gemini
 * adapters: each drives the real SDK through `createClient` against the
 * scripted server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../src/client.ts";
import type { Event } from "../src/event.ts";
import { userMessage } from "../src/item.ts";
import type { ClientOptions, ClientWarning } from "../src/request.ts";
import { frameLines } from "../src/testing/replay-server.ts";
import {
  type ScriptedServer,
  type ScriptStep,
  startScriptedServer,
  WIRE_FORMATS,
} from "../src/testing/scripted-server.ts";
import { abortOnRetry, collect, FAST } from "./stream-helpers.ts";

type Provider = "openai-responses" | "gemini";

const TEXT = "Grüße — héllo 🌍 日本語 done.";

export function runFaultSuite(provider: Provider): void {
  const wire = WIRE_FORMATS[provider];
  const servers: ScriptedServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function setup(script: ScriptStep[], extra: Partial<ClientOptions> = {}) {
    const server = await startScriptedServer({ provider, script, validate: true, splitPauseMs: 0 });
    servers.push(server);
    const warnings: ClientWarning[] = [];
    const client = createClient({
      provider,
      model: provider === "gemini" ? "gemini-test" : "gpt-test",
      apiKey: "test-key",
      baseURL: server.baseURL,
      ...FAST,
      onWarning: (w) => warnings.push(w),
      ...extra,
    });
    return { server, client, warnings };
  }

  const okLines = () => wire.response(TEXT, [], { chunkSize: 5 });
  const framed = () => Buffer.from(frameLines(provider, okLines()), "utf8");

  describe(`${provider} faults`, () => {
    it("a malformed JSON payload is a parse error, not a crash", async () => {
      const lines = okLines();
      const body =
        frameLines(provider, lines.slice(0, 3)) +
        (provider === "openai-responses" ? "event: response.output_text.delta\n" : "") +
        'data: {"type": "response.output_text.delta", "delta": \n\n' +
        frameLines(provider, lines.slice(3));
      const { client } = await setup([{ type: "raw", body }]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors[0]?.code).toBe("parse");
    });

    it("a stream cut before its terminal event is incomplete_stream, never a success", async () => {
      const lines = okLines();
      // One attempt: how the failure is reported (mid-stream retries: test/retry-midstream.test.ts).
      const { client } = await setup([{ type: "lines", lines: lines.slice(0, -1) }], {
        retry: { maxAttempts: 1 },
      });
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors.map((e) => e.code)).toEqual(["incomplete_stream"]);
      expect(out.text.length).toBeGreaterThan(0);
    });

    it("the socket closed mid-stream fails the stream with incomplete_stream", async () => {
      const bytes = framed();
      const { client } = await setup(
        [
          {
            type: "raw",
            body: bytes.toString("utf8"),
            truncateBytes: Math.floor(bytes.length * 0.6),
            end: "close",
          },
        ],
        { retry: { maxAttempts: 1 } },
      );
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors[0]?.code).toBe("incomplete_stream");
    });

    it("429 with retry-after, then success: waits as told and succeeds", async () => {
      const { client, server } = await setup([
        { type: "error", status: 429, message: "slow down", headers: { "retry-after-ms": "40" } },
        { type: "lines", lines: okLines() },
      ]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("completed");
      expect(out.text).toBe(TEXT);
      expect(server.requests).toHaveLength(2);
      expect(out.retries[0]).toMatchObject({ code: "rate_limit", status: 429, delayMs: 40 });
    });

    it("503 then success", async () => {
      const { client, server } = await setup([
        { type: "error", status: 503, message: "overloaded" },
        { type: "lines", lines: okLines() },
      ]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("completed");
      expect(out.text).toBe(TEXT);
      expect(server.requests).toHaveLength(2);
      expect(out.retries[0]).toMatchObject({ code: "overloaded" });
    });

    it("529 (overloaded) then success: retried as overloaded", async () => {
      const { client, server } = await setup([
        { type: "error", status: 529, message: "Overloaded" },
        { type: "lines", lines: okLines() },
      ]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("completed");
      expect(out.text).toBe(TEXT);
      expect(out.errors).toEqual([]);
      expect(server.requests).toHaveLength(2);
      expect(out.retries).toHaveLength(1);
      expect(out.retries[0]).toMatchObject({ code: "overloaded", status: 529, attempt: 2 });
    });

    if (provider === "openai-responses") {
      it("an overloaded error event before any output is retried, then succeeds", async () => {
        const { client, server } = await setup([
          {
            type: "raw",
            body: 'event: error\ndata: {"type":"error","code":"server_is_overloaded","message":"The server is overloaded","sequence_number":0}\n\n',
          },
          { type: "lines", lines: okLines() },
        ]);
        const out = await collect(client.stream({ items: [userMessage("hi")] }));
        expect(out.status).toBe("completed");
        expect(out.text).toBe(TEXT);
        expect(out.events.filter((e) => e.type === "status" && e.status === "started")).toHaveLength(1);
        expect(server.requests).toHaveLength(2);
        expect(out.retries[0]).toMatchObject({ code: "overloaded" });
      });
    }

    it("a retry-after above the cap fails fast with a message that says so", async () => {
      const { client, server } = await setup([
        { type: "error", status: 429, message: "slow down", headers: { "retry-after": "300" } },
        { type: "lines", lines: okLines() },
      ]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors).toHaveLength(1);
      expect(out.errors[0]).toMatchObject({ code: "rate_limit", status: 429, retryAfterMs: 300_000 });
      expect(out.errors[0]?.message).toMatch(/asked to wait 300 s .*retry\.maxRetryAfterMs/);
      expect(out.errors[0]?.message).not.toContain("test-key");
      expect(out.retries).toEqual([]);
      expect(server.requests).toHaveLength(1);
    });

    it("aborting during the backoff returns at once with status cancelled", async () => {
      const controller = new AbortController();
      const { client, server } = await setup(
        [
          { type: "error", status: 503, message: "busy", headers: { "retry-after": "60" } },
          { type: "lines", lines: okLines() },
        ],
        {
          // A 60 s wait within the cap: only the abort can end it before the test times out.
          retry: { ...FAST.retry, maxRetryAfterMs: 120_000, totalBudgetMs: 600_000 },
        },
      );
      const out = await collect(
        abortOnRetry(
          client.stream({ items: [userMessage("hi")] }, { signal: controller.signal }),
          controller,
        ),
      );
      expect(out.events.map((e) => e.type)).toEqual(["status", "retry", "status"]);
      expect(out.status).toBe("cancelled");
      expect(server.requests).toHaveLength(1);
    });

    it("401 is not retried and says it is an auth problem", async () => {
      const { client, server } = await setup([
        { type: "error", status: 401, message: "bad key" },
        { type: "lines", lines: okLines() },
      ]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors[0]).toMatchObject({ code: "auth", retryable: false, status: 401 });
      expect(out.errors[0]?.message).not.toContain("test-key");
      expect(server.requests).toHaveLength(1);
    });

    it("headers then nothing: the first-event timeout fails the stream", async () => {
      const { client } = await setup([{ type: "silence" }], {
        retry: { maxAttempts: 1 },
        timeout: { firstEventMs: 150, idleMs: 5_000 },
      });
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("failed");
      expect(out.errors[0]?.code).toBe("timeout");
    });

    it("abort mid-stream: block_abort for the open block, status cancelled", async () => {
      const bytes = framed();
      const { client } = await setup([
        {
          type: "raw",
          body: bytes.toString("utf8"),
          truncateBytes: Math.floor(bytes.length * 0.7),
          end: "hang",
        },
      ]);
      const controller = new AbortController();
      const events: Event[] = [];
      for await (const event of client.stream(
        { items: [userMessage("hi")] },
        { signal: controller.signal },
      )) {
        events.push(event);
        if (event.type === "block_delta") controller.abort();
      }
      const last = events.at(-1);
      expect(last).toEqual({ type: "status", status: "cancelled" });
      expect(events.some((e) => e.type === "block_abort" && e.reason === "cancelled")).toBe(true);
    });

    it("a stream split at every byte offset (inside multi-byte UTF-8 too) normalizes the same", async () => {
      const bytes = framed();
      const every = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
      const { client } = await setup([{ type: "raw", body: bytes.toString("utf8"), splitAt: every }]);
      const out = await collect(client.stream({ items: [userMessage("hi")] }));
      expect(out.status).toBe("completed");
      expect(out.text).toBe(TEXT);
    });

    it("one cut inside each multi-byte character, one request each", async () => {
      const bytes = framed();
      const cuts: number[] = [];
      for (let i = 0; i < bytes.length; i++) {
        const byte = bytes[i] ?? 0;
        if ((byte & 0xc0) === 0x80) cuts.push(i); // a continuation byte: the cut lands inside a character
      }
      expect(cuts.length).toBeGreaterThan(10);
      const script: ScriptStep[] = cuts.map((cut) => ({
        type: "raw",
        body: bytes.toString("utf8"),
        splitAt: [cut],
      }));
      const { client } = await setup(script);
      for (let i = 0; i < cuts.length; i++) {
        const out = await collect(client.stream({ items: [userMessage("hi")] }));
        expect(out.text, `cut at byte ${cuts[i]}`).toBe(TEXT);
      }
    });
  });
}
