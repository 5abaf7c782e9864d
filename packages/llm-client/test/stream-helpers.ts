/**
 * Helpers for the core llm-client tests: fixture reading, folding a stream
 * into what a caller sees, and a checker for the stream contract of
 * `event.ts` that every test runs on every stream it collects.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { createClient } from "../src/client.ts";
import type { Event, RetryEvent, StopReason, ThinkingReplay, Usage } from "../src/event.ts";
import { type Item, type ProviderKind, userMessage } from "../src/item.ts";
import type { ClientOptions, ClientWarning, Request } from "../src/request.ts";

export const fixturesDir = new URL("../../../fixtures/provider-streams/", import.meta.url);

export function fixtureLines(relative: string): string[] {
  return readFileSync(new URL(relative, fixturesDir), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

export interface Folded {
  events: Event[];
  text: string;
  thinking: string;
  toolCalls: { id: string; name: string; raw: string; input: unknown }[];
  replays: ThinkingReplay[];
  usage: Usage;
  status: "completed" | "cancelled" | "failed" | undefined;
  stopReason: StopReason | undefined;
  errors: Extract<Event, { type: "error" }>[];
  aborts: Extract<Event, { type: "block_abort" }>[];
  /** The client's retries, in order. */
  retries: RetryEvent[];
  started: Extract<Event, { type: "status" }> | undefined;
}

/** Asserts the stream contract and folds the events. */
export function fold(events: Event[]): Folded {
  const out: Folded = {
    events,
    text: "",
    thinking: "",
    toolCalls: [],
    replays: [],
    usage: {},
    status: undefined,
    stopReason: undefined,
    errors: [],
    aborts: [],
    retries: [],
    started: undefined,
  };
  const open = new Map<number, { block: string; id?: string; name?: string; raw: string }>();
  const closed = new Set<number>();
  expect(events[0], "a stream starts with status: started").toMatchObject({
    type: "status",
    status: "started",
  });
  const terminal = events.filter((e) => e.type === "status" && e.status !== "started");
  expect(terminal, "exactly one terminal status").toHaveLength(1);
  expect(events[events.length - 1], "the terminal status is last").toBe(terminal[0]);
  for (const event of events) {
    switch (event.type) {
      case "status":
        if (event.status === "started") {
          expect(out.started, "one started").toBeUndefined();
          out.started = event;
        } else {
          out.status = event.status;
          out.stopReason = "stopReason" in event ? event.stopReason : undefined;
        }
        break;
      case "usage":
        Object.assign(out.usage, event.usage);
        break;
      case "error":
        out.errors.push(event);
        break;
      case "block_start":
        expect(open.has(event.index) || closed.has(event.index), `index ${event.index} is new`).toBe(false);
        open.set(event.index, { block: event.block, id: event.id, name: event.name, raw: "" });
        break;
      case "block_delta": {
        const block = open.get(event.index);
        expect(block, `delta for open block ${event.index}`).toBeDefined();
        if (event.delta === "text") out.text += event.text;
        else if (event.delta === "thinking") out.thinking += event.text;
        else block!.raw += event.text;
        break;
      }
      case "block_stop": {
        const block = open.get(event.index);
        expect(block?.block, `stop of open block ${event.index}`).toBe(event.block);
        open.delete(event.index);
        closed.add(event.index);
        if (event.block === "tool_use") {
          out.toolCalls.push({
            id: block!.id!,
            name: block!.name!,
            raw: block!.raw,
            input: JSON.parse(block!.raw),
          });
        }
        if (event.replay) out.replays.push(event.replay);
        break;
      }
      case "block_abort":
        expect(open.has(event.index), `abort of open block ${event.index}`).toBe(true);
        open.delete(event.index);
        closed.add(event.index);
        out.aborts.push(event);
        break;
      case "retry":
        out.retries.push(event);
        expect([...open.keys()], "a retry comes after every open block was aborted").toEqual([]);
        if (event.discarded) {
          // The attempt's output is void: what the caller keeps starts again, block indexes too.
          closed.clear();
          out.text = "";
          out.thinking = "";
          out.toolCalls = [];
        }
        break;
      case "ping":
        break;
    }
  }
  expect([...open.keys()], "every block ends with block_stop or block_abort").toEqual([]);
  if (out.status === "failed") {
    expect(out.errors.length, "a failed stream carries an error").toBeGreaterThan(0);
    expect(out.stopReason).toBe("error");
  }
  return out;
}

export async function collect(stream: AsyncIterable<Event>): Promise<Folded> {
  const events: Event[] = [];
  for await (const event of stream) events.push(event);
  return fold(events);
}

/** Fast test timings: tiny backoffs, short timeouts. */
export const FAST: Pick<ClientOptions, "retry" | "timeout"> = {
  retry: { maxAttempts: 4, initialDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 2_000, totalBudgetMs: 20_000 },
  timeout: { firstEventMs: 5_000, idleMs: 5_000 },
};

export function clientFor(
  provider: ProviderKind,
  baseURL: string,
  extra: Partial<ClientOptions> = {},
): { client: ReturnType<typeof createClient>; warnings: ClientWarning[] } {
  const warnings: ClientWarning[] = [];
  const client = createClient({
    provider,
    model: provider === "anthropic" ? "claude-test" : "gpt-test",
    apiKey: "test-key",
    baseURL,
    ...FAST,
    onWarning: (w) => warnings.push(w),
    ...extra,
  });
  return { client, warnings };
}

export function hello(items: Item[] = [userMessage("hello")]): Request {
  return { items };
}

/** Passes `stream` through, aborting `controller` as soon as a `retry` event has been seen (during the backoff). */
export async function* abortOnRetry(
  stream: AsyncIterable<Event>,
  controller: AbortController,
): AsyncGenerator<Event> {
  for await (const event of stream) {
    yield event;
    if (event.type === "retry") controller.abort();
  }
}
