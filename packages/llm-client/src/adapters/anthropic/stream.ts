/**
 * Anthropic Messages stream -> the flat Event union.
 *
 * Block indices are Anthropic's own content-block indices (stable, unique
 * per response). A server-side tool (`server_tool_use`, then its
 * `*_tool_result` block) becomes one `server_tool` event at the call's
 * index when its input is complete and another when its result arrives;
 * `citations_delta`s go on their text block's stop. Unknown block or event
 * types are passed over: they reach `ClientOptions.onRawEvent` only.
 */

import type { BlockKind, Event, StopReason, Usage } from "../../event.ts";
import type { Citation, ServerToolItem, ServerToolSource } from "../../item.ts";
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
    tool_use_id?: string;
    content?: unknown;
  };
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
    citation?: RawCitation;
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

/** An Anthropic text citation (`web_search_result_location` and the document kinds, which have no url). */
interface RawCitation {
  type?: string;
  url?: string;
  title?: string | null;
  cited_text?: string;
  encrypted_index?: string;
}

interface BlockState {
  block: BlockKind | "server_tool";
  /** tool_use: whether any argument text was streamed. */
  sawInput: boolean;
  signature: string;
  redactedData?: string;
  /** text: the citations streamed for it. */
  citations?: Citation[];
  /** server_tool: the call being streamed. */
  serverTool?: ServerToolItem;
  /** server_tool: its input JSON so far. */
  inputJson?: string;
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
  pause_turn: "pause_turn",
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
  /** Server tool calls by id, with their block index: a result block names its call. */
  private readonly serverCalls = new Map<string, { index: number; item: ServerToolItem }>();
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
            if (state.block === "server_tool") {
              state.inputJson = (state.inputJson ?? "") + (delta.partial_json ?? "");
              break;
            }
            if (delta.partial_json) {
              state.sawInput = true;
              out.push({ type: "block_delta", index, delta: "input_json", text: delta.partial_json });
            }
            break;
          case "signature_delta":
            state.signature += delta.signature ?? "";
            break;
          case "citations_delta": {
            const citation = delta.citation ? toCitation(delta.citation) : undefined;
            if (citation && state.block === "text") {
              state.citations ??= [];
              state.citations.push(citation);
            }
            break;
          }
          default:
            break; // future delta types
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
        if (state.block === "server_tool") {
          this.serverToolInput(index, state, out);
          break;
        }
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
    } else if (block.type === "server_tool_use") {
      const item: ServerToolItem = {
        type: "server_tool",
        callId: block.id ?? "",
        name: block.name ?? "",
        arguments: "{}",
        status: "running",
        sources: [],
        provider: "anthropic",
      };
      const hasInput = block.input && typeof block.input === "object" && Object.keys(block.input).length > 0;
      this.states.set(index, {
        block: "server_tool",
        sawInput: false,
        signature: "",
        serverTool: item,
        inputJson: hasInput ? JSON.stringify(block.input) : "",
      });
    } else if (block.type.endsWith("_tool_result") && block.tool_use_id !== undefined) {
      this.serverToolResult(block, out);
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

  /** The call's input is complete: the UI can show what it does (the query). */
  private serverToolInput(index: number, state: BlockState, out: Event[]): void {
    const item = state.serverTool;
    if (!item) return;
    const json = state.inputJson?.trim() ?? "";
    if (json !== "") {
      try {
        const value: unknown = JSON.parse(json);
        if (value !== null && typeof value === "object" && !Array.isArray(value)) item.arguments = json;
      } catch {
        // A broken input stays "{}": the result block still tells what happened.
      }
    }
    this.serverCalls.set(item.callId, { index, item });
    out.push({ type: "server_tool", index, item: { ...item } });
  }

  /** A `*_tool_result` block arrives whole: the call it answers is complete. */
  private serverToolResult(block: NonNullable<RawEvent["content_block"]>, out: Event[]): void {
    const call = this.serverCalls.get(block.tool_use_id ?? "");
    if (!call) return; // a result without its call cannot be replayed: passed over
    const item = call.item;
    const content = block.content;
    const error = errorCode(content);
    item.status = error === undefined ? "completed" : "failed";
    if (error !== undefined) item.error = error;
    item.sources = sourcesOf(content);
    item.providerData = { resultType: block.type, content };
    out.push({ type: "server_tool", index: call.index, item: { ...item, sources: [...item.sources] } });
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
  } else if (state.block === "text") {
    out.push({
      type: "block_stop",
      index,
      block: "text",
      ...(state.citations?.length ? { citations: state.citations } : {}),
    });
  } else if (state.block !== "server_tool") {
    out.push({ type: "block_stop", index, block: state.block });
  }
}

/** A citation with a url (web search); document citations (no url) are passed over. */
function toCitation(raw: RawCitation): Citation | undefined {
  if (typeof raw.url !== "string" || raw.url === "") return undefined;
  const citation: Citation = { url: raw.url, provider: "anthropic" };
  if (typeof raw.title === "string" && raw.title !== "") citation.title = raw.title;
  if (typeof raw.cited_text === "string" && raw.cited_text !== "") citation.citedText = raw.cited_text;
  if (raw.type !== undefined || raw.encrypted_index !== undefined) {
    citation.providerData = {
      ...(raw.type !== undefined ? { type: raw.type } : {}),
      ...(raw.encrypted_index !== undefined ? { encryptedIndex: raw.encrypted_index } : {}),
    };
  }
  return citation;
}

/** The pages of a web search result (`web_search_result` entries). */
function sourcesOf(content: unknown): ServerToolSource[] {
  if (!Array.isArray(content)) return [];
  const out: ServerToolSource[] = [];
  for (const entry of content as Array<Record<string, unknown>>) {
    if (entry === null || typeof entry !== "object" || typeof entry.url !== "string") continue;
    const source: ServerToolSource = { url: entry.url };
    if (typeof entry.title === "string" && entry.title !== "") source.title = entry.title;
    if (typeof entry.page_age === "string" && entry.page_age !== "") source.pageAge = entry.page_age;
    out.push(source);
  }
  return out;
}

/** The error code of a failed server tool (`{ type: "..._error", error_code }`). */
function errorCode(content: unknown): string | undefined {
  if (content === null || typeof content !== "object" || Array.isArray(content)) return undefined;
  const code = (content as Record<string, unknown>).error_code;
  return typeof code === "string" ? code : "unknown_error";
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
