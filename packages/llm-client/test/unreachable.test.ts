/**
 * A server that refuses connections is a `network` error for every
 * provider (retryable, no HTTP status), with a message that names the
 * provider and what the system said ("connect ECONNREFUSED ...", not the
 * SDK's "Connection error." or fetch's "fetch failed" that wrap it) —
 * never `server`, which would read as "the provider is down".
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createClient, type Event, type ProviderKind } from "../src/index.ts";

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const PROVIDERS: ProviderKind[] = ["anthropic", "openai-chat", "openai-responses", "gemini"];

describe.each(PROVIDERS)("%s against a closed port", (provider) => {
  it("fails with a retryable network error after the client's attempts", async () => {
    const port = await closedPort();
    const origin = `http://127.0.0.1:${port}`;
    const warnings: string[] = [];
    const client = createClient({
      provider,
      model: "test-model",
      apiKey: "test-key-not-secret",
      baseURL: provider.startsWith("openai") ? `${origin}/v1` : origin,
      retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 },
      onWarning: (w) => warnings.push(w.code),
    });
    const events: Event[] = [];
    for await (const e of client.stream({
      items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }],
    }))
      events.push(e);
    const error = events.find((e) => e.type === "error");
    expect(error).toMatchObject({ type: "error", code: "network", retryable: true, beforeOutput: true });
    expect(error?.type === "error" && error.status).toBeUndefined();
    expect(error?.type === "error" && error.message.toLowerCase()).toContain(provider.split("-")[0]);
    expect(error?.type === "error" && error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    // The system's reason on its own too, through the retry policy's rewrapping, for a caller's own sentence.
    expect(error?.type === "error" && error.networkReason).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(JSON.stringify(events)).not.toContain("test-key-not-secret");
    expect(warnings).toEqual([]);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: "status", status: "failed", stopReason: "error" });
  });
});

describe("a base URL on a port fetch refuses", () => {
  it('says so, instead of fetch\'s bare "bad port"', async () => {
    // 6000 is on fetch's list of blocked ports: it refuses before any connection is tried.
    const client = createClient({
      provider: "anthropic",
      model: "test-model",
      apiKey: "test-key-not-secret",
      baseURL: "http://127.0.0.1:6000",
      retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 },
    });
    const events: Event[] = [];
    for await (const e of client.stream({
      items: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }],
    }))
      events.push(e);
    const error = events.find((e) => e.type === "error");
    // Not retried: fetch refuses the port every time.
    expect(error).toMatchObject({ type: "error", code: "network", retryable: false });
    expect(events.filter((e) => e.type === "retry")).toEqual([]);
    expect(error?.type === "error" && error.message).toBe(
      "anthropic: could not reach the server (bad port: fetch does not connect to this port, one of those browsers block; serve the API on another port)",
    );
  });
});
