/**
 * A response split into two TCP writes at every byte offset — inside SSE
 * framing, inside JSON, inside multi-byte UTF-8 characters — normalizes to
 * exactly the same stream. The SDKs do the decoding; this proves the whole
 * path (SDK + normalizer + client) never depends on how bytes arrive.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Event } from "../src/event.ts";
import type { ProviderKind } from "../src/item.ts";
import { frameLines } from "../src/testing/replay-server.ts";
import { startScriptedServer, WIRE_FORMATS } from "../src/testing/scripted-server.ts";
import { clientFor, fold, hello } from "./stream-helpers.ts";

const TEXT = "Grüße — 日本語 🎉👩‍💻";
const ARGS = { path: "ドキ/é", n: "🚀" };

/** The offset a request asks for, carried in its system prompt. */
function splitOffset(provider: ProviderKind, body: unknown): number {
  const b = body as { system?: { text: string }[]; messages?: { role: string; content: string }[] };
  const text = provider === "anthropic" ? b.system?.[0]?.text : b.messages?.[0]?.content;
  return Number(text ?? 0);
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

for (const provider of ["anthropic", "openai-chat"] as ProviderKind[]) {
  describe(`${provider} split at every byte`, () => {
    it("gives the same events for every split offset, including inside multi-byte characters", async () => {
      const lines = WIRE_FORMATS[provider].response(
        TEXT,
        [{ id: "call_1", name: "write", arguments: ARGS }],
        {
          chunkSize: 6,
        },
      );
      const bytes = Buffer.from(frameLines(provider, lines), "utf8");
      // Offsets that fall inside a multi-byte character (continuation bytes 10xxxxxx).
      const inside = [...bytes.keys()].filter((i) => (bytes[i]! & 0xc0) === 0x80);
      expect(inside.length).toBeGreaterThan(20);

      const server = await startScriptedServer({
        provider,
        script: (_index, body) => ({ type: "lines", lines, splitAt: [splitOffset(provider, body)] }),
      });
      closers.push(server.close);
      const { client } = clientFor(provider, server.baseURL);

      const run = async (offset: number): Promise<Event[]> => {
        const events: Event[] = [];
        for await (const event of client.stream({ ...hello(), system: String(offset) })) events.push(event);
        const r = fold(events);
        if (r.status !== "completed" || r.text !== TEXT) {
          throw new Error(`split at byte ${offset}: status ${r.status}, text ${JSON.stringify(r.text)}`);
        }
        expect(r.toolCalls[0]?.input).toEqual(ARGS);
        return events;
      };
      const reference = await run(0);
      // Several offsets at a time (the server pauses between the two writes); each request names its offset.
      const offsets = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
      const workers = Array.from({ length: 8 }, async () => {
        for (let offset = offsets.shift(); offset !== undefined; offset = offsets.shift()) {
          expect(await run(offset)).toEqual(reference);
        }
      });
      await Promise.all(workers);
      expect(server.requests).toHaveLength(bytes.length);
    }, 120_000);
  });
}
