/**
 * A scripted in-memory LlmClient for fine-grained tests of anything built on
 * the worker (compaction, pod): each model call takes the next step of the
 * script and streams well-formed llm-client Events (status started, blocks,
 * usage, terminal status), honouring the abort signal like a real adapter.
 */
import type {
  Event,
  LlmClient,
  LlmError,
  ProviderKind,
  Request,
  StopReason,
  StreamOptions,
  Usage,
} from "@yoi/llm-client";

/** A model response described by what it contains. */
export interface ScriptedResponse {
  thinking?: string;
  /** Signature attached to the thinking block (Anthropic-style replay). */
  thinkingSignature?: string;
  text?: string;
  toolCalls?: Array<{ id?: string; name: string; args?: Record<string, unknown> | string }>;
  usage?: Usage;
  /** Default: `tool_use` when there are tool calls, else `end_turn`. */
  stopReason?: StopReason;
  /** Split text into deltas of this many characters. Default: one delta. */
  chunkSize?: number;
}

/**
 * One step of a script:
 * - a ScriptedResponse;
 * - `{ events }`: exactly these events;
 * - `{ error }`: the client throws it before the first event (retries exhausted);
 * - a function of the request that returns any of these or an async iterable of events.
 */
export type ScriptStep =
  | ScriptedResponse
  | { events: Event[] }
  | { error: LlmError }
  | ((request: Request, signal: AbortSignal | undefined) => ScriptStepResult | Promise<ScriptStepResult>);

export type ScriptStepResult =
  | ScriptedResponse
  | { events: Event[] }
  | { error: LlmError }
  | AsyncIterable<Event>;

export interface ScriptedClient extends LlmClient {
  /** Requests received, in order (copies of the item arrays at call time). */
  readonly requests: Request[];
  /** Steps not yet used. */
  readonly remaining: number;
  /** Appends steps. */
  push(...steps: ScriptStep[]): void;
}

export interface ScriptedClientOptions {
  provider?: ProviderKind;
  model?: string;
  /** What to do when the script runs out. Default: throw an error naming the call. */
  onExhausted?: ScriptStep;
}

let generated = 0;

/** The events of a ScriptedResponse, as a real adapter would emit them. */
export function responseEvents(response: ScriptedResponse, provider: ProviderKind = "anthropic"): Event[] {
  const events: Event[] = [{ type: "status", status: "started" }];
  let index = 0;
  if (response.thinking !== undefined) {
    events.push({ type: "block_start", index, block: "thinking" });
    events.push({ type: "block_delta", index, delta: "thinking", text: response.thinking });
    events.push({
      type: "block_stop",
      index,
      block: "thinking",
      replay: { provider, ...(response.thinkingSignature ? { signature: response.thinkingSignature } : {}) },
    });
    index++;
  }
  if (response.text !== undefined && response.text !== "") {
    events.push({ type: "block_start", index, block: "text" });
    const size = response.chunkSize ?? response.text.length;
    for (let i = 0; i < response.text.length; i += size) {
      events.push({ type: "block_delta", index, delta: "text", text: response.text.slice(i, i + size) });
    }
    events.push({ type: "block_stop", index, block: "text" });
    index++;
  }
  for (const call of response.toolCalls ?? []) {
    const id = call.id ?? `call_scripted_${++generated}`;
    events.push({ type: "block_start", index, block: "tool_use", id, name: call.name });
    const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {});
    events.push({ type: "block_delta", index, delta: "input_json", text: args });
    events.push({ type: "block_stop", index, block: "tool_use" });
    index++;
  }
  if (response.usage) events.push({ type: "usage", usage: response.usage });
  const stopReason = response.stopReason ?? (response.toolCalls?.length ? "tool_use" : "end_turn");
  events.push({ type: "status", status: "completed", stopReason });
  return events;
}

export function createScriptedClient(
  steps: ScriptStep[],
  options: ScriptedClientOptions = {},
): ScriptedClient {
  const provider = options.provider ?? "anthropic";
  const queue = [...steps];
  const requests: Request[] = [];
  return {
    provider,
    model: options.model ?? "scripted-model",
    requests,
    get remaining() {
      return queue.length;
    },
    push(...more: ScriptStep[]) {
      queue.push(...more);
    },
    stream(request: Request, streamOptions: StreamOptions = {}): AsyncIterable<Event> {
      requests.push({ ...request, items: [...request.items] });
      const callNumber = requests.length;
      const step = queue.shift() ?? options.onExhausted;
      const signal = streamOptions.signal;
      return (async function* (): AsyncGenerator<Event> {
        if (step === undefined) {
          throw new Error(`scripted client: no step left for model call #${callNumber}`);
        }
        const result = typeof step === "function" ? await step(request, signal) : step;
        if ("error" in result && result.error !== undefined) throw result.error;
        const events: AsyncIterable<Event> | Event[] =
          Symbol.asyncIterator in result
            ? (result as AsyncIterable<Event>)
            : "events" in result
              ? (result as { events: Event[] }).events
              : responseEvents(result as ScriptedResponse, provider);
        let terminal = false;
        const open = new Map<number, "text" | "thinking" | "tool_use">();
        for await (const event of events) {
          if (signal?.aborted) break;
          if (event.type === "block_start") open.set(event.index, event.block);
          if (event.type === "block_delta" && !open.has(event.index)) {
            open.set(event.index, event.delta === "input_json" ? "tool_use" : event.delta);
          }
          if (event.type === "block_stop" || event.type === "block_abort") open.delete(event.index);
          if (event.type === "status" && event.status !== "started") terminal = true;
          yield event;
          if (terminal) return;
        }
        if (signal?.aborted && !terminal) {
          // What a real adapter does on abort: close open blocks, then a cancelled status.
          for (const [index, block] of open) yield { type: "block_abort", index, block, reason: "cancelled" };
          yield { type: "status", status: "cancelled" };
        }
      })();
    },
  };
}

/** An async iterable of `events` with a pause before each one (for cancellation tests). */
export async function* delayedEvents(
  events: Event[],
  delayMs: number,
  signal?: AbortSignal,
): AsyncGenerator<Event> {
  for (const event of events) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
    if (signal?.aborted) return;
    yield event;
  }
}
