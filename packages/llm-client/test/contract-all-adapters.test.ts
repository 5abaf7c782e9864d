/**
 * The stream contract of `event.ts` (exactly one terminal status, errors as
 * events, block lifecycle, cancellation) on the path users run: every real
 * adapter through its real SDK against a scripted server on 127.0.0.1, and
 * a generic adapter (an async generator) through `createClientWithAdapter`.
 * `fold` asserts the contract on every stream it sees.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type AdapterFactory, eventStream } from "../src/adapters/adapter.ts";
import { createClientWithAdapter } from "../src/client.ts";
import type { Event } from "../src/event.ts";
import type { ProviderKind } from "../src/item.ts";
import type { LlmClient } from "../src/request.ts";
import { frameLines } from "../src/testing/replay-server.ts";
import { type ScriptStep, startScriptedServer, WIRE_FORMATS } from "../src/testing/scripted-server.ts";
import { clientFor, collect, hello } from "./stream-helpers.ts";

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** One subject under the contract: a way to get a client whose next stream follows `step`. */
interface Subject {
  name: string;
  client(step: ScriptStep, extra?: Parameters<typeof clientFor>[2]): Promise<LlmClient>;
}

const TEXT = "The quick brown fox jumps over the lazy dog.";

const real = (provider: ProviderKind): Subject => ({
  name: provider,
  async client(step, extra) {
    const s = await startScriptedServer({ provider, script: [step, step, step, step] });
    servers.push(s);
    return clientFor(provider, s.baseURL, extra).client;
  },
});

/**
 * A provider that is not built in: an async generator adapter that plays
 * the same scripted behaviours, its Events passed through `eventStream`.
 */
const generic: Subject = {
  name: "generic adapter",
  async client(step, extra) {
    const factory: AdapterFactory = () => ({
      async open(_request, signal) {
        if (step.type === "error") {
          const { LlmError } = await import("../src/errors.ts");
          throw new LlmError(step.status === 400 ? "invalid_request" : "server", step.message ?? "failed", {
            status: step.status,
          });
        }
        const text = step.type === "reply" ? (step.text ?? "") : "";
        const end = "end" in step ? step.end : undefined;
        return eventStream(
          (async function* (): AsyncGenerator<Event> {
            yield { type: "status", status: "started" };
            yield { type: "block_start", index: 0, block: "text" };
            for (let i = 0; i < text.length; i += 4) {
              yield { type: "block_delta", index: 0, delta: "text", text: text.slice(i, i + 4) };
              if (end !== undefined && end !== "complete" && i >= 8) break;
            }
            if (end === "close") throw new Error("socket hang up");
            if (end === "hang") {
              if (!signal.aborted)
                await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
              return; // ends without its terminal status: the client decides what the abort meant
            }
            yield { type: "block_stop", index: 0, block: "text" };
            yield { type: "status", status: "completed", stopReason: "end_turn" };
          })(),
        );
      },
    });
    return createClientWithAdapter(
      { provider: "anthropic", model: "m", ...clientOptions(extra) },
      async () => factory,
    );
  },
};

function clientOptions(extra: Parameters<typeof clientFor>[2]) {
  return {
    retry: { maxAttempts: 1 },
    timeout: { firstEventMs: 5_000, idleMs: 5_000 },
    ...extra,
  };
}

const SUBJECTS: Subject[] = [...(Object.keys(WIRE_FORMATS) as ProviderKind[]).map(real), generic];

/** A reply whose bytes stop (closed or hanging) a little way into the text. */
function cut(provider: ProviderKind | undefined, end: "close" | "hang"): ScriptStep {
  const step: ScriptStep = { type: "reply", text: TEXT, options: { chunkSize: 4 }, end };
  if (provider === undefined) return step;
  // Keep the first half of the events (started, the block's start, some deltas), cut at an event boundary.
  const framed = frameLines(provider, WIRE_FORMATS[provider].response(TEXT, [], { chunkSize: 4 }));
  const events = framed.split("\n\n");
  const kept = `${events.slice(0, Math.ceil(events.length / 2)).join("\n\n")}\n\n`;
  return { ...step, truncateBytes: Buffer.byteLength(kept) };
}

for (const subject of SUBJECTS) {
  const provider = subject.name === generic.name ? undefined : (subject.name as ProviderKind);
  describe(`stream contract: ${subject.name}`, () => {
    it("a completed stream: one start, balanced blocks, one terminal status last", async () => {
      const client = await subject.client({ type: "reply", text: TEXT, options: { chunkSize: 4 } });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("completed");
      expect(r.text).toBe(TEXT);
      expect(r.errors).toEqual([]);
    });

    it("a connection torn mid-stream ends failed, as events, with the open block aborted", async () => {
      const client = await subject.client(cut(provider, "close"), { retry: { maxAttempts: 1 } });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors).toHaveLength(1);
      // A generic adapter that throws breaks the contract: the client reports it as a server failure.
      expect(["incomplete_stream", "network", "server"]).toContain(r.errors[0]!.code);
    });

    it("an HTTP error before any output is an error event and a failed status, not a throw", async () => {
      const client = await subject.client({ type: "error", status: 400, message: "bad field" });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors[0]!.code).toBe("invalid_request");
      expect(r.errors[0]!.status).toBe(400);
    });

    it("cancelling mid-stream aborts the open block and ends cancelled", async () => {
      const client = await subject.client(cut(provider, "hang"));
      const controller = new AbortController();
      const events: Event[] = [];
      for await (const event of client.stream(hello(), { signal: controller.signal })) {
        events.push(event);
        if (event.type === "block_delta") controller.abort();
      }
      const { fold } = await import("./stream-helpers.ts");
      const r = fold(events);
      expect(r.status).toBe("cancelled");
      expect(r.errors).toEqual([]);
    });

    it("onRawEvent sees every payload the normalizer is given, in order, before its events", async () => {
      const payloads: unknown[] = [];
      let deltasSeen = 0;
      let rawBeforeEachDelta = true;
      const client = await subject.client(
        { type: "reply", text: TEXT, options: { chunkSize: 4 } },
        { onRawEvent: (payload) => payloads.push(payload) },
      );
      for await (const event of client.stream(hello())) {
        if (event.type === "block_delta") {
          deltasSeen++;
          if (payloads.length < deltasSeen) rawBeforeEachDelta = false;
        }
      }
      expect(deltasSeen).toBe(Math.ceil(TEXT.length / 4));
      expect(rawBeforeEachDelta).toBe(true);
      // Real adapters get the SDK's parsed payloads (objects); the generic one its own Events.
      expect(payloads.length).toBeGreaterThanOrEqual(deltasSeen);
      expect(payloads.every((p) => typeof p === "object" && p !== null)).toBe(true);
    });

    it("a stall after output fails with a timeout within the idle limit", async () => {
      const client = await subject.client(cut(provider, "hang"), {
        retry: { maxAttempts: 1 },
        timeout: { firstEventMs: 5_000, idleMs: 150 },
      });
      const r = await collect(client.stream(hello()));
      expect(r.status).toBe("failed");
      expect(r.errors.map((e) => e.code)).toEqual(["timeout"]);
    });
  });
}
