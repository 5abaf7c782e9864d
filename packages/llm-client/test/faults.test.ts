/**
 * The fault suite of the core issue, for the Anthropic and OpenAI Chat
 * adapters, through the real SDKs against the scripted server. Timing comes
 * from small options (backoffs, timeouts), never from wall-clock assertions.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Event } from "../src/event.ts";
import type { ProviderKind } from "../src/item.ts";
import { frameLines } from "../src/testing/replay-server.ts";
import { type ScriptStep, startScriptedServer, WIRE_FORMATS } from "../src/testing/scripted-server.ts";
import { abortOnRetry, clientFor, collect, FAST, fold, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
/** One attempt: these tests are about how a failure is reported (retries: test/retry-midstream.test.ts). */
const ONE = { retry: { maxAttempts: 1 } };
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface ProviderCase {
  provider: ProviderKind;
  /** The status the provider uses for "overloaded". */
  overloadedStatus: number;
  /** Framed bytes of a stream that stops right before its terminal marker. */
  withoutTerminal(lines: string[]): string;
  /** Framed bytes whose second payload is not JSON. */
  malformed(lines: string[]): string;
  /** Framed bytes of an error event before any output, when the provider has one. */
  inStreamOverloaded?: string;
}

const CASES: ProviderCase[] = [
  {
    provider: "anthropic",
    overloadedStatus: 529,
    withoutTerminal: (lines) => frameLines("anthropic", lines.slice(0, -1)),
    malformed: (lines) => {
      const framed = frameLines("anthropic", lines.slice(0, 3));
      return `${framed}event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"\n\n`;
    },
    inStreamOverloaded:
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
  },
  {
    provider: "openai-chat",
    overloadedStatus: 503,
    // No finish_reason, no usage, no [DONE].
    withoutTerminal: (lines) => frameLines("openai-chat", lines.slice(0, -2)).replace("data: [DONE]\n\n", ""),
    malformed: (lines) =>
      `${frameLines("openai-chat", lines.slice(0, 2)).replace("data: [DONE]\n\n", "")}data: {"choices":[{"index":0,\n\n`,
  },
];

async function server(provider: ProviderKind, script: ScriptStep[]) {
  const s = await startScriptedServer({ provider, script });
  servers.push(s);
  return s;
}

const reply = (text = "Hello there, world.") => ({ type: "reply", text, options: { chunkSize: 4 } }) as const;

for (const c of CASES) {
  const wire = WIRE_FORMATS[c.provider];
  const lines = wire.response("Hello there, world.", [], { chunkSize: 4 });
  // The first four payloads (start, "Hell"...) and then a connection that stays open.
  const stalled: ScriptStep = {
    type: "raw",
    body: frameLines(c.provider, lines.slice(0, 4)).replace("data: [DONE]\n\n", ""),
    end: "hang",
  };

  describe(`${c.provider} faults`, () => {
    it("a malformed JSON payload fails the stream with a parse error", async () => {
      const s = await server(c.provider, [{ type: "raw", body: c.malformed(lines) }]);
      const r = await collect(clientFor(c.provider, s.baseURL).client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("parse");
      expect(r.text).toBe("Hell");
      expect(r.aborts.map((a) => a.block)).toEqual(["text"]);
      expect(s.requests).toHaveLength(1);
    });

    it("a stream cut before its terminal event is incomplete_stream, not a success", async () => {
      const s = await server(c.provider, [{ type: "raw", body: c.withoutTerminal(lines) }]);
      const r = await collect(clientFor(c.provider, s.baseURL, ONE).client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors.map((e) => e.code)).toEqual(["incomplete_stream"]);
      expect(r.text).toBe("Hello there, world.");
      expect(s.requests).toHaveLength(1);
    });

    it("a socket closed mid-stream aborts the open block and fails", async () => {
      const full = Buffer.byteLength(frameLines(c.provider, lines));
      const s = await server(c.provider, [
        { type: "lines", lines, truncateBytes: Math.floor(full * 0.6), end: "close" },
      ]);
      const r = await collect(clientFor(c.provider, s.baseURL, ONE).client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("incomplete_stream");
      expect(r.aborts.length).toBeGreaterThan(0);
      expect("Hello there, world.".startsWith(r.text)).toBe(true);
      expect(s.requests).toHaveLength(1);
    });

    it("a socket closed before any output is retried", async () => {
      const s = await server(c.provider, [{ type: "lines", lines, truncateBytes: 0, end: "close" }, reply()]);
      const { client } = clientFor(c.provider, s.baseURL);
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("completed");
      expect(r.text).toBe("Hello there, world.");
      expect(r.retries).toHaveLength(1);
    });

    it("429 with retry-after is retried after the server's delay, then succeeds", async () => {
      const s = await server(c.provider, [
        { type: "error", status: 429, headers: { "retry-after-ms": "30" }, message: "Rate limited" },
        { type: "error", status: 429, headers: { "retry-after": "0" }, message: "Rate limited" },
        reply(),
      ]);
      const { client } = clientFor(c.provider, s.baseURL);
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("completed");
      expect(r.text).toBe("Hello there, world.");
      expect(s.requests).toHaveLength(3);
      expect(r.retries.map((e) => e.delayMs)).toEqual([30, 0]);
      expect(r.retries.map((e) => e.code)).toEqual(["rate_limit", "rate_limit"]);
      // Every attempt sent the same request.
      expect(s.requests[0]).toEqual(s.requests[2]);
    });

    it(`${c.overloadedStatus} and 503 are retried with backoff, then succeed`, async () => {
      const s = await server(c.provider, [
        { type: "error", status: c.overloadedStatus, message: "Overloaded" },
        { type: "error", status: 503, message: "Service unavailable" },
        { type: "error", status: 500, message: "Internal error" },
        reply(),
      ]);
      const { client } = clientFor(c.provider, s.baseURL);
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("completed");
      expect(s.requests).toHaveLength(4);
      expect(r.retries.map((e) => e.code)).toEqual(["overloaded", "overloaded", "server"]);
    });

    it("gives up after maxAttempts with the last error", async () => {
      const s = await server(c.provider, [
        { type: "error", status: 503, message: "busy 1" },
        { type: "error", status: 503, message: "busy 2" },
        reply(),
      ]);
      const { client } = clientFor(c.provider, s.baseURL, { retry: { ...FAST.retry, maxAttempts: 2 } });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]).toMatchObject({ code: "overloaded", status: 503, retryable: true });
      expect(r.errors[0]!.message).toContain("busy 2");
      expect(r.errors[0]!.message).toContain("gave up after 2 attempts");
      expect(s.requests).toHaveLength(2);
    });

    it("401 is not retried and the key never shows in the message", async () => {
      const s = await server(c.provider, [
        { type: "error", status: 401, message: "invalid x-api-key" },
        reply(),
      ]);
      const { client } = clientFor(c.provider, s.baseURL, { apiKey: "sk-secret-123456789" });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]).toMatchObject({ code: "auth", status: 401, retryable: false });
      expect(JSON.stringify(r.events)).not.toContain("sk-secret-123456789");
      expect(s.requests).toHaveLength(1);
      expect(r.retries).toEqual([]);
    });

    it("a retry-after above the cap fails fast with a message that says so", async () => {
      const s = await server(c.provider, [
        { type: "error", status: 429, headers: { "retry-after": "300" } },
        reply(),
      ]);
      const r = await collect(clientFor(c.provider, s.baseURL).client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("rate_limit");
      expect(r.errors[0]!.retryAfterMs).toBe(300_000);
      expect(r.errors[0]!.message).toMatch(/asked to wait 300 s.*retry\.maxRetryAfterMs/);
      // When the limit resets, for a caller that may wait for it.
      expect(r.errors[0]!.resetAt).toBeGreaterThan(Date.now() + 250_000);
      expect(s.requests).toHaveLength(1);
    });

    it("headers then silence hits the first-event timeout (retried, then failed)", async () => {
      const s = await server(c.provider, [{ type: "silence" }, { type: "silence" }]);
      const { client } = clientFor(c.provider, s.baseURL, {
        retry: { ...FAST.retry, maxAttempts: 2 },
        timeout: { firstEventMs: 150, idleMs: 5_000 },
      });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("timeout");
      expect(r.errors[0]!.message).toContain("timeout.firstEventMs");
      expect(s.requests).toHaveLength(2);
      expect(r.retries).toHaveLength(1);
    });

    it("a stream that stalls after output hits the idle timeout and fails (not cancelled)", async () => {
      const s = await server(c.provider, [stalled]);
      const { client } = clientFor(c.provider, s.baseURL, {
        ...ONE,
        timeout: { firstEventMs: 5_000, idleMs: 150 },
      });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("timeout");
      expect(r.errors[0]!.message).toContain("timeout.idleMs");
      expect(r.aborts.map((a) => a.block)).toEqual(["text"]);
      expect(s.requests).toHaveLength(1);
    });

    it("aborting mid-stream ends with block_abort and status cancelled", async () => {
      const s = await server(c.provider, [stalled]);
      const { client } = clientFor(c.provider, s.baseURL);
      const controller = new AbortController();
      const events: Event[] = [];
      for await (const event of client.stream(hello(), { signal: controller.signal })) {
        events.push(event);
        if (event.type === "block_delta") controller.abort();
      }
      const r = fold(events);
      expect(r.status).toBe("cancelled");
      expect(r.errors).toEqual([]);
      expect(r.aborts).toEqual([{ type: "block_abort", index: 0, block: "text", reason: "cancelled" }]);
    });

    it("aborting during the backoff returns at once with status cancelled", async () => {
      const s = await server(c.provider, [
        { type: "error", status: 503, headers: { "retry-after": "60" } },
        reply(),
      ]);
      const controller = new AbortController();
      const { client } = clientFor(c.provider, s.baseURL, {
        retry: { ...FAST.retry, maxRetryAfterMs: 120_000, totalBudgetMs: 600_000 },
      });
      const r = await collect(
        abortOnRetry(client.stream(hello(), { signal: controller.signal }), controller),
      );
      expect(r.events.map((e) => e.type)).toEqual(["status", "retry", "status"]);
      expect(r.status).toBe("cancelled");
      expect(s.requests).toHaveLength(1);
    });

    it("an already aborted signal sends nothing", async () => {
      const s = await server(c.provider, [reply()]);
      const r = await collect(
        clientFor(c.provider, s.baseURL).client.stream(hello(), { signal: AbortSignal.abort() }),
      );
      expect(r.status).toBe("cancelled");
      expect(s.requests).toHaveLength(0);
    });

    if (c.inStreamOverloaded !== undefined) {
      const body = c.inStreamOverloaded;
      it("an in-stream overloaded error before any output is retried", async () => {
        const s = await server(c.provider, [{ type: "raw", body }, reply()]);
        const { client } = clientFor(c.provider, s.baseURL);
        const r = await collect(client.stream(hello()));
        expect(r.status).toBe("completed");
        expect(r.text).toBe("Hello there, world.");
        expect(r.retries[0]?.code).toBe("overloaded");
      });
    }
  });
}
