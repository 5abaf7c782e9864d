/**
 * Anthropic Messages stream -> the flat Event union.
 *
 * Block indices are Anthropic's own content-block indices (stable, unique
 * per response). Server-side tool blocks (`server_tool_use`,
 * `web_search_tool_result`, code execution results) and unknown block or
 * event types are passed over: they reach `ClientOptions.onRawEvent` only.
 */

import type { BlockKind, Event, StopReason, Usage } from "../../event.ts";
import type { AdapterStream, Normalizer } from "../adapter.ts";
import { endAborted, failStream, incompleteStream, OpenBlocks } from "../stream-end.ts";
import { classifyAnthropicError } from "./errors.ts";

/** The fields of the stream events this normalizer reads (events are otherwise opaque). */
interface RawEvent {
  type: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: RawUsage };
  content_block?: {
    type: string;
    id?: string;
    name?: string;
    text?: string;
    thinking?: string;
    data?: string;
    input?: unknown;
    signature?: string;
  };
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: RawUsage;
}

interface RawUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

interface BlockState {
  block: BlockKind;
  /** tool_use: whether any argument text was streamed. */
  sawInput: boolean;
  signature: string;
  redactedData?: string;
}

export interface NormalizeOptions {
  signal: AbortSignal;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  refusal: "refusal",
  // The turn hit the context window while generating: for the caller it is a length stop.
  model_context_window_exceeded: "max_tokens",
  // A server-tool loop paused; the caller continues by sending the turn back.
  pause_turn: "end_turn",
};

/** The SDK's parsed Anthropic stream with its normalizer. */
export function normalizeAnthropicStream(
  stream: AsyncIterable<unknown>,
  options: NormalizeOptions,
): AdapterStream {
  return { payloads: stream, normalizer: new AnthropicNormalizer(options.signal) };
}

export class AnthropicNormalizer implements Normalizer {
  private readonly signal: AbortSignal;
  private readonly open = new OpenBlocks();
  private readonly states = new Map<number, BlockState>();
  private readonly usage: RawUsage = {};
  private started = false;
  private stopReason: StopReason | undefined;
  private stopped = false;

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  payload(payload: unknown, out: Event[]): boolean {
    const event = payload as RawEvent;
    switch (event.type) {
      case "content_block_delta": {
        const index = event.index ?? 0;
        const state = this.states.get(index);
        const delta = event.delta;
        if (!state || !delta) break; // a server-tool block or an unknown one
        switch (delta.type) {
          case "text_delta":
            if (delta.text) out.push({ type: "block_delta", index, delta: "text", text: delta.text });
            break;
          case "thinking_delta":
            if (delta.thinking)
              out.push({ type: "block_delta", index, delta: "thinking", text: delta.thinking });
            break;
          case "input_json_delta":
            if (delta.partial_json) {
              state.sawInput = true;
              out.push({ type: "block_delta", index, delta: "input_json", text: delta.partial_json });
            }
            break;
          case "signature_delta":
            state.signature += delta.signature ?? "";
            break;
          default:
            break; // citations_delta and future delta types
        }
        break;
      }
      case "message_start": {
        if (this.started) break; // some servers repeat message_start
        this.started = true;
        const message = event.message ?? {};
        out.push({
          type: "status",
          status: "started",
          ...(message.model ? { model: message.model } : {}),
          ...(message.id ? { responseId: message.id } : {}),
        });
        if (message.usage) {
          mergeUsage(this.usage, message.usage);
          out.push({ type: "usage", usage: toUsage(this.usage) });
        }
        break;
      }
      case "content_block_start":
        this.blockStart(event, out);
        break;
      case "content_block_stop": {
        const index = event.index ?? 0;
        const state = this.states.get(index);
        if (!state) break;
        this.states.delete(index);
        this.open.stop(index);
        closeBlock(index, state, out);
        break;
      }
      case "message_delta": {
        const reason = event.delta?.stop_reason;
        if (reason) this.stopReason = STOP_REASONS[reason] ?? "end_turn";
        if (event.usage) {
          mergeUsage(this.usage, event.usage);
          out.push({ type: "usage", usage: toUsage(this.usage) });
        }
        break;
      }
      case "message_stop":
        this.stopped = true;
        return true;
      case "ping":
        out.push({ type: "ping" });
        break;
      default:
        break; // ping (normally filtered by the SDK) and event types this client does not know
    }
    return false;
  }

  private blockStart(event: RawEvent, out: Event[]): void {
    const index = event.index ?? 0;
    const block = event.content_block;
    if (!block) return;
    if (block.type === "text") {
      this.states.set(index, { block: "text", sawInput: false, signature: "" });
      this.open.start(index, "text");
      out.push({ type: "block_start", index, block: "text" });
      if (block.text) out.push({ type: "block_delta", index, delta: "text", text: block.text });
    } else if (block.type === "thinking") {
      this.states.set(index, { block: "thinking", sawInput: false, signature: block.signature ?? "" });
      this.open.start(index, "thinking");
      out.push({ type: "block_start", index, block: "thinking" });
      if (block.thinking) out.push({ type: "block_delta", index, delta: "thinking", text: block.thinking });
    } else if (block.type === "redacted_thinking") {
      this.states.set(index, {
        block: "thinking",
        sawInput: false,
        signature: "",
        redactedData: block.data ?? "",
      });
      this.open.start(index, "thinking");
      out.push({ type: "block_start", index, block: "thinking" });
    } else if (block.type === "tool_use") {
      const state: BlockState = { block: "tool_use", sawInput: false, signature: "" };
      this.states.set(index, state);
      this.open.start(index, "tool_use");
      out.push({
        type: "block_start",
        index,
        block: "tool_use",
        id: block.id ?? "",
        name: block.name ?? "",
        toolKind: "function",
      });
      // Compatible servers sometimes put the whole input in the start event.
      if (block.input && typeof block.input === "object" && Object.keys(block.input).length > 0) {
        state.sawInput = true;
        out.push({ type: "block_delta", index, delta: "input_json", text: JSON.stringify(block.input) });
      }
    }
  }

  end(out: Event[]): void {
    if (!this.stopped) {
      if (this.signal.aborted) out.push(...endAborted(this.signal, this.open));
      else out.push(...failStream(incompleteStream("anthropic", "message_stop"), this.open));
      return;
    }
    // Blocks the server never closed: the message ended, so they are complete as far as they go.
    for (const [index, state] of this.states) closeBlock(index, state, out);
    out.push({ type: "status", status: "completed", stopReason: this.stopReason ?? "end_turn" });
  }

  fail(error: unknown, out: Event[]): void {
    if (this.signal.aborted) {
      out.push(...endAborted(this.signal, this.open));
      return;
    }
    out.push(...failStream(classifyAnthropicError(error, { inStream: true }), this.open));
  }
}

function closeBlock(index: number, state: BlockState, out: Event[]): void {
  if (state.block === "tool_use") {
    if (!state.sawInput) out.push({ type: "block_delta", index, delta: "input_json", text: "{}" });
    out.push({ type: "block_stop", index, block: "tool_use" });
  } else if (state.block === "thinking") {
    out.push({
      type: "block_stop",
      index,
      block: "thinking",
      replay:
        state.redactedData !== undefined
          ? { provider: "anthropic", redacted: true, encryptedContent: state.redactedData }
          : { provider: "anthropic", ...(state.signature ? { signature: state.signature } : {}) },
    });
  } else {
    out.push({ type: "block_stop", index, block: state.block });
  }
}

/** Later values win per field; a field missing from a later event keeps its earlier value. */
function mergeUsage(into: RawUsage, from: RawUsage): void {
  if (from.input_tokens != null) into.input_tokens = from.input_tokens;
  if (from.output_tokens != null) into.output_tokens = from.output_tokens;
  if (from.cache_creation_input_tokens != null)
    into.cache_creation_input_tokens = from.cache_creation_input_tokens;
  if (from.cache_read_input_tokens != null) into.cache_read_input_tokens = from.cache_read_input_tokens;
  if (from.output_tokens_details?.thinking_tokens != null) {
    into.output_tokens_details = { thinking_tokens: from.output_tokens_details.thinking_tokens };
  }
}

/**
 * Anthropic's `input_tokens` excludes the cached part; the llm-client
 * convention counts it in, so input = input + cache read + cache write.
 */
function toUsage(raw: RawUsage): Usage {
  const usage: Usage = {};
  const read = raw.cache_read_input_tokens ?? undefined;
  const write = raw.cache_creation_input_tokens ?? undefined;
  if (raw.input_tokens != null) usage.inputTokens = raw.input_tokens + (read ?? 0) + (write ?? 0);
  if (raw.output_tokens != null) usage.outputTokens = raw.output_tokens;
  if (read !== undefined) usage.cacheReadTokens = read;
  if (write !== undefined) usage.cacheWriteTokens = write;
  const thinking = raw.output_tokens_details?.thinking_tokens;
  if (thinking != null) usage.reasoningTokens = thinking;
  return usage;
}
