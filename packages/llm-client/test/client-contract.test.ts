/**
 * The client holds the stream contract around any adapter, including one
 * that makes its Events itself (an async generator) and misbehaves.
 */
import { describe, expect, it } from "vitest";
import { type AdapterFactory, eventStream } from "../src/adapters/adapter.ts";
import { createClient, createClientWithAdapter } from "../src/client.ts";
import { LlmError } from "../src/errors.ts";
import type { Event } from "../src/event.ts";
import type { ClientWarning } from "../src/request.ts";
import { collect, hello } from "./stream-helpers.ts";

function fake(script: (signal: AbortSignal, attempt: number) => AsyncIterable<Event>): {
  factory: () => Promise<AdapterFactory>;
  attempts: () => number;
} {
  let attempts = 0;
  const factory: AdapterFactory = () => ({
    open: async (_request, signal) => eventStream(script(signal, ++attempts)),
  });
  return { factory: async () => factory, attempts: () => attempts };
}

const FAST = {
  retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 },
  timeout: { firstEventMs: 2_000, idleMs: 100 },
};

describe("client contract around a generic adapter", () => {
  it("prepare() loads the adapter once, ahead of the first call, which then uses it", async () => {
    let loads = 0;
    const { factory } = fake(async function* () {
      yield { type: "status", status: "started" };
      yield { type: "status", status: "completed", stopReason: "end_turn" };
    });
    const client = createClientWithAdapter({ provider: "anthropic", model: "m", ...FAST }, () => {
      loads++;
      return factory();
    });
    expect(loads).toBe(0);
    await client.prepare?.();
    expect(loads).toBe(1);
    expect((await collect(client.stream(hello()))).status).toBe("completed");
    expect(loads).toBe(1);
  });

  it("prepare() never rejects: an adapter that cannot load is the call's failure", async () => {
    let loads = 0;
    const client = createClientWithAdapter({ provider: "anthropic", model: "m", ...FAST }, async () => {
      loads++;
      throw new Error("no such SDK");
    });
    await expect(client.prepare?.()).resolves.toBeUndefined();
    const r = await collect(client.stream(hello()));
    expect(r.status).toBe("failed");
    expect(r.errors[0]!.message).toContain("no such SDK");
    // The failed load was not kept: the call tried again.
    expect(loads).toBe(2);
  });

  it("an adapter that throws mid-stream ends as failed with its open blocks aborted", async () => {
    const { factory } = fake(async function* () {
      yield { type: "status", status: "started" };
      yield { type: "block_start", index: 0, block: "text" };
      yield { type: "block_delta", index: 0, delta: "text", text: "hi" };
      throw new Error("boom");
    });
    const client = createClientWithAdapter({ provider: "anthropic", model: "m", ...FAST }, factory);
    const r = await collect(client.stream(hello()));
    expect(r.status).toBe("failed");
    expect(r.aborts).toHaveLength(1);
    expect(r.errors[0]!.message).toContain("boom");
  });

  it("an adapter that ends without a terminal status gives incomplete_stream", async () => {
    const { factory } = fake(async function* () {
      yield { type: "status", status: "started" };
      yield { type: "block_start", index: 0, block: "text" };
      yield { type: "block_delta", index: 0, delta: "text", text: "hi" };
    });
    const client = createClientWithAdapter({ provider: "anthropic", model: "m", ...FAST }, factory);
    const r = await collect(client.stream(hello()));
    expect(r.errors.map((e) => e.code)).toEqual(["incomplete_stream"]);
  });

  it("an idle timeout is a failure even when the adapter reports the abort as a cancellation", async () => {
    const { factory } = fake(async function* (signal) {
      yield { type: "status", status: "started" };
      yield { type: "block_start", index: 0, block: "text" };
      yield { type: "block_delta", index: 0, delta: "text", text: "hi" };
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      yield { type: "block_abort", index: 0, block: "text", reason: "cancelled" };
      yield { type: "status", status: "cancelled" };
    });
    const client = createClientWithAdapter({ provider: "anthropic", model: "m", ...FAST }, factory);
    const r = await collect(client.stream(hello()));
    expect(r.status).toBe("failed");
    expect(r.errors[0]!.code).toBe("timeout");
  });

  it("holds back started/usage so an error before any output is retried without a second start", async () => {
    const { factory, attempts } = fake(async function* (_signal, attempt) {
      yield { type: "status", status: "started", responseId: `r${attempt}` };
      yield { type: "usage", usage: { inputTokens: 5 } };
      if (attempt === 1) {
        yield { type: "error", code: "overloaded", message: "busy", retryable: true };
        yield { type: "status", status: "failed", stopReason: "error" };
        return;
      }
      yield { type: "block_start", index: 0, block: "text" };
      yield { type: "block_delta", index: 0, delta: "text", text: "ok" };
      yield { type: "block_stop", index: 0, block: "text" };
      yield { type: "status", status: "completed", stopReason: "end_turn" };
    });
    const warnings: ClientWarning[] = [];
    const client = createClientWithAdapter(
      { provider: "anthropic", model: "m", ...FAST, onWarning: (w) => warnings.push(w) },
      factory,
    );
    const r = await collect(client.stream(hello()));
    expect(attempts()).toBe(2);
    // The retry event follows the one start, before the attempt that answers (so no response id yet).
    expect(r.events.slice(0, 2).map((e) => e.type)).toEqual(["status", "retry"]);
    expect(r.text).toBe("ok");
    expect(warnings).toEqual([]);
  });

  it("a normalizer that throws on a payload fails the stream as events, with its open block aborted", async () => {
    let calls = 0;
    const factory: AdapterFactory = () => ({
      open: async () => ({
        payloads: (async function* () {
          yield "start";
          yield "text";
          yield "boom";
          yield "never read";
        })(),
        normalizer: {
          payload(payload, out) {
            calls++;
            if (payload === "start") {
              out.push(
                { type: "status", status: "started" },
                { type: "block_start", index: 0, block: "text" },
              );
            } else if (payload === "text") {
              out.push({ type: "block_delta", index: 0, delta: "text", text: "hi" });
            } else throw new TypeError("cannot read 'delta' of undefined");
            return false;
          },
          end() {},
          fail() {},
        },
      }),
    });
    const client = createClientWithAdapter(
      { provider: "anthropic", model: "m", ...FAST, retry: { maxAttempts: 1 } },
      async () => factory,
    );
    const r = await collect(client.stream(hello()));
    expect(r.status).toBe("failed");
    expect(r.text).toBe("hi");
    expect(r.aborts).toHaveLength(1);
    expect(r.errors[0]!.message).toContain("cannot read 'delta'");
    expect(calls).toBe(3);
  });

  it("a failure to open is classified and not retried when it is not retryable", async () => {
    const factory: AdapterFactory = () => ({
      open: async () => {
        throw new LlmError("invalid_request", "bad body", { status: 400 });
      },
    });
    const client = createClientWithAdapter(
      { provider: "anthropic", model: "m", ...FAST },
      async () => factory,
    );
    const r = await collect(client.stream(hello()));
    expect(r.events).toEqual([
      { type: "status", status: "started" },
      {
        type: "error",
        code: "invalid_request",
        message: "bad body",
        retryable: false,
        status: 400,
        beforeOutput: true,
      },
      { type: "status", status: "failed", stopReason: "error" },
    ]);
  });

  it("rejects unusable options at once with a message that says what to do", () => {
    expect(() => createClient({ provider: "nope" as "anthropic", model: "m" })).toThrow(
      /use one of anthropic/,
    );
    expect(() => createClient({ provider: "anthropic", model: "" })).toThrow(/options.model/);
    expect(() => createClient({ provider: "anthropic", model: "m", timeout: { idleMs: 0 } })).toThrow(
      /timeout.idleMs/,
    );
  });

  it("a missing API key is an auth error on the stream, naming the variable", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    try {
      const client = createClient({ provider: "anthropic", model: "m", baseURL: "http://127.0.0.1:9" });
      const r = await collect(client.stream(hello()));
      expect(r.errors[0]).toMatchObject({ code: "auth", retryable: false });
      expect(r.errors[0]!.message).toContain("ANTHROPIC_API_KEY");
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
