/**
 * Test helpers shared by the Responses / Gemini / round-trip tests: fold a
 * normalized Event stream into the Items a worker would commit, and read
 * fixture files.
 */
import { createServer } from "node:http";
import type { AdapterStream } from "../src/adapters/adapter.ts";
import type { Event, StopReason, ThinkingReplay, Usage } from "../src/event.ts";
import type { Item, ProviderData, ProviderKind } from "../src/item.ts";
import { closeServer, frameLines, listen, readBody, sdkBaseURL } from "../src/testing/replay-server.ts";
import type { WireFormat } from "../src/testing/wire-format.ts";

export { fixtureLines, fixturesDir } from "./stream-helpers.ts";

export interface Collected {
  events: Event[];
  text: string;
  thinking: string;
  toolCalls: {
    id: string;
    name: string;
    input: unknown;
    raw: string;
    kind?: string;
    providerData?: ProviderData;
  }[];
  replays: ThinkingReplay[];
  usage: Usage;
  stopReason: StopReason | undefined;
  status: string | undefined;
  errors: Extract<Event, { type: "error" }>[];
  items: Item[];
}

/** The Events an adapter's normalizer makes of its payloads, without the client around it. */
export async function adapterEvents(stream: AdapterStream): Promise<Event[]> {
  const { normalizer } = stream;
  const events: Event[] = [];
  const payloads = stream.payloads[Symbol.asyncIterator]();
  try {
    for (;;) {
      const result = await payloads.next();
      if (result.done) break;
      if (normalizer.payload(result.value, events)) {
        await payloads.return?.();
        break;
      }
    }
  } catch (error) {
    normalizer.fail(error, events);
    return events;
  }
  normalizer.end(events);
  return events;
}

/** Folds what an adapter's stream normalizes to (see {@link adapterEvents}). */
export async function collect(stream: AdapterStream, provider: ProviderKind): Promise<Collected> {
  return fold(await adapterEvents(stream), provider);
}

/** Folds events into Items the way the worker's collectors do. Also checks the stream contract. */
export function fold(events: Event[], provider: ProviderKind): Collected {
  const out: Collected = {
    events,
    text: "",
    thinking: "",
    toolCalls: [],
    replays: [],
    usage: {},
    stopReason: undefined,
    status: undefined,
    errors: [],
    items: [],
  };
  const blocks = new Map<
    number,
    { block: string; text: string; id?: string; name?: string; kind?: string }
  >();
  const seen = new Set<number>();
  let terminal = 0;
  if (events[0]?.type !== "status" || events[0].status !== "started") {
    throw new Error(`stream must start with status started, got ${JSON.stringify(events[0])}`);
  }
  for (const event of events) {
    if (terminal > 0) throw new Error(`event after terminal status: ${JSON.stringify(event)}`);
    switch (event.type) {
      case "block_start":
        if (seen.has(event.index)) throw new Error(`block index ${event.index} reused`);
        seen.add(event.index);
        blocks.set(event.index, {
          block: event.block,
          text: "",
          ...(event.id === undefined ? {} : { id: event.id }),
          ...(event.name === undefined ? {} : { name: event.name }),
          ...(event.toolKind === undefined ? {} : { kind: event.toolKind }),
        });
        break;
      case "block_delta": {
        const block = blocks.get(event.index);
        if (!block) throw new Error(`delta for unopened block ${event.index}`);
        block.text += event.text;
        if (event.delta === "text") out.text += event.text;
        if (event.delta === "thinking") out.thinking += event.text;
        break;
      }
      case "block_stop": {
        const block = blocks.get(event.index);
        if (!block) throw new Error(`stop for unopened block ${event.index}`);
        if (block.block !== event.block) throw new Error(`block kind mismatch at ${event.index}`);
        blocks.delete(event.index);
        if (event.block === "tool_use") {
          const raw = block.text;
          const input = block.kind === "custom" ? raw : JSON.parse(raw === "" ? "{}" : raw);
          out.toolCalls.push({
            id: block.id ?? "",
            name: block.name ?? "",
            input,
            raw,
            ...(block.kind === undefined ? {} : { kind: block.kind }),
            ...(event.providerData === undefined ? {} : { providerData: event.providerData }),
          });
          out.items.push({
            type: "tool_call",
            callId: block.id ?? "",
            name: block.name ?? "",
            arguments: block.kind === "custom" ? raw : raw === "" ? "{}" : raw,
            ...(block.kind === "custom" ? { kind: "custom" as const } : {}),
            ...(event.providerData === undefined ? {} : { providerData: event.providerData }),
          });
        } else if (event.block === "thinking") {
          if (event.replay) out.replays.push(event.replay);
          const replay = event.replay;
          out.items.push({
            type: "reasoning",
            text: block.text,
            provider: replay?.provider ?? provider,
            ...(replay?.summary === undefined ? {} : { summary: replay.summary }),
            ...(replay?.signature === undefined ? {} : { signature: replay.signature }),
            ...(replay?.encryptedContent === undefined ? {} : { encryptedContent: replay.encryptedContent }),
            ...(replay?.redacted === undefined ? {} : { redacted: replay.redacted }),
            ...(replay?.providerData === undefined ? {} : { providerData: replay.providerData }),
          });
        } else {
          out.items.push({
            type: "message",
            role: "assistant",
            content: [{ type: "text", text: block.text }],
            ...(event.providerData === undefined ? {} : { providerData: event.providerData }),
          });
        }
        break;
      }
      case "block_abort":
        if (!blocks.delete(event.index)) throw new Error(`abort for unopened block ${event.index}`);
        break;
      case "usage":
        Object.assign(out.usage, event.usage);
        break;
      case "error":
        out.errors.push(event);
        break;
      case "status":
        if (event.status !== "started") {
          terminal++;
          out.status = event.status;
          out.stopReason = event.stopReason;
        }
        break;
      default:
        break;
    }
  }
  if (terminal !== 1) throw new Error(`expected exactly one terminal status, got ${terminal}`);
  if (blocks.size > 0) throw new Error(`blocks left open: ${[...blocks.keys()].join(",")}`);
  return out;
}

/** Splits a multi-response recording at each `response.created`. */
export function splitResponses(lines: string[]): string[][] {
  const out: string[][] = [];
  for (const line of lines) {
    if ((JSON.parse(line) as { type: string }).type === "response.created") out.push([]);
    out.at(-1)?.push(line);
  }
  return out;
}

/**
 * Serves one recorded response per request, in order, and records the
 * parsed request bodies; a request the wire's validator rejects gets a 400
 * in the provider's error shape (like the real API).
 */
export async function startSequenceServer(
  wire: WireFormat,
  responses: string[][],
): Promise<{ baseURL: string; requests: unknown[]; close: () => Promise<void> }> {
  const requests: unknown[] = [];
  let next = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    requests.push(body);
    const violation = wire.validate(body);
    if (violation !== undefined) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(wire.errorBody(400, violation)));
      return;
    }
    const lines = responses[next++];
    if (!lines) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(wire.errorBody(500, `no scripted response left for request ${next}`)));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(frameLines(wire.provider, lines));
  });
  const origin = await listen(server);
  return { baseURL: sdkBaseURL(wire.provider, origin), requests, close: () => closeServer(server) };
}
