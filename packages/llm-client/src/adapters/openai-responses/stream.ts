import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { LlmError } from "../../errors.ts";
import type { BlockKind, Event, StopReason, Usage } from "../../event.ts";
import type { Citation, ServerToolItem, ServerToolSource } from "../../item.ts";
import type { AdapterStream, Normalizer } from "../adapter.ts";
import { endAborted, failStream, OpenBlocks } from "../stream-end.ts";
import { classifyOpenAIError, classifyStreamError } from "./errors.ts";

interface OpenBlock {
  index: number;
  block: BlockKind;
  /** Characters of tool input streamed so far (tool_use only). */
  streamed: number;
  /** Reasoning summary parts, by summary_index (thinking only). */
  summary?: string[];
}

/** Response object fields the normalizer reads (terminal events). */
interface TerminalResponse {
  id?: string;
  model?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    input_tokens_details?: { cached_tokens?: number } | null;
    output_tokens_details?: { reasoning_tokens?: number } | null;
  } | null;
  incomplete_details?: { reason?: string | null } | null;
  error?: { code?: string | null; message?: string } | null;
}

/**
 * Numeric block keys (no string per delta): a message content part is
 * `output_index * PART_SPAN + content_index`; a reasoning or tool item uses
 * the last slot of its output index.
 */
const PART_SPAN = 65_536;
const itemKey = (outputIndex: number): number => outputIndex * PART_SPAN + (PART_SPAN - 1);
const partKey = (outputIndex: number, contentIndex: number): number => outputIndex * PART_SPAN + contentIndex;

export interface NormalizeOptions {
  signal: AbortSignal;
}

/**
 * Normalizes the SDK's parsed Responses API event stream into the flat
 * Event union.
 *
 * Block indices are assigned in order of first appearance: one per output
 * item for reasoning and tool calls, one per (output item, content part) for
 * message text, so they stay stable whatever the server's numbering.
 *
 * A `web_search_call` item becomes a `server_tool` event when it is added
 * (searching) and another when it is done (its query and sources); the
 * `url_citation` annotations of a text part go on its block stop.
 */
export function normalizeResponsesStream(
  stream: AsyncIterable<unknown>,
  options: NormalizeOptions,
): AdapterStream {
  const { signal } = options;
  // The client hands its queue to every call; events are pushed onto it.
  let out: Event[] = [];
  let terminated = false;
  const open = new Map<number, OpenBlock>();
  let nextIndex = 0;
  let started = false;
  let sawToolCall = false;
  let sawRefusal = false;
  /** Web search calls by output index: their block index and state. */
  const searches = new Map<number, { index: number; item: ServerToolItem }>();

  const startBlock = (key: number, block: BlockKind): OpenBlock => {
    const state: OpenBlock = { index: nextIndex++, block, streamed: 0 };
    open.set(key, state);
    return state;
  };

  function closeAll(how: "stop" | "abort", reason: string): void {
    for (const state of open.values()) {
      if (how === "stop" && state.block !== "tool_use") {
        out.push({ type: "block_stop", index: state.index, block: state.block });
      } else {
        out.push({ type: "block_abort", index: state.index, block: state.block, reason });
      }
    }
    open.clear();
  }

  function fail(error: LlmError): void {
    out.push(...failStream(error, openBlocks(open)));
  }

  function finish(response: TerminalResponse, stopReason: StopReason): void {
    const usage = toUsage(response.usage);
    if (usage) out.push({ type: "usage", usage });
    // A cut tool call cannot be run: abort it; text and thinking stay usable.
    closeAll("stop", stopReason);
    out.push({ type: "status", status: "completed", stopReason });
  }

  const step = (event: ResponseStreamEvent): boolean => {
    if (!started) {
      started = true;
      if (event.type === "response.created") {
        out.push({
          type: "status",
          status: "started",
          model: event.response.model,
          responseId: event.response.id,
        });
        return false;
      }
      out.push({ type: "status", status: "started" });
    }
    switch (event.type) {
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const key = partKey(event.output_index, event.content_index);
        let state = open.get(key);
        if (!state) {
          state = startBlock(key, "text");
          out.push({ type: "block_start", index: state.index, block: "text" });
        }
        if (event.type === "response.refusal.delta") sawRefusal = true;
        out.push({ type: "block_delta", index: state.index, delta: "text", text: event.delta });
        break;
      }
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta": {
        const state = open.get(itemKey(event.output_index));
        if (state?.block !== "tool_use") break;
        state.streamed += event.delta.length;
        out.push({ type: "block_delta", index: state.index, delta: "input_json", text: event.delta });
        break;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const state = open.get(itemKey(event.output_index));
        if (state?.block !== "thinking") break;
        out.push({ type: "block_delta", index: state.index, delta: "thinking", text: event.delta });
        break;
      }
      case "response.reasoning_summary_part.added": {
        const state = open.get(itemKey(event.output_index));
        // Separate summary parts the way the API's own summaries read.
        if (state?.block === "thinking" && event.summary_index > 0) {
          out.push({ type: "block_delta", index: state.index, delta: "thinking", text: "\n\n" });
        }
        break;
      }
      case "response.reasoning_summary_text.done": {
        const state = open.get(itemKey(event.output_index));
        if (state?.block === "thinking") {
          state.summary ??= [];
          state.summary[event.summary_index] = event.text;
        }
        break;
      }
      case "response.content_part.added": {
        const part = event.part as { type: string };
        if (part.type !== "output_text" && part.type !== "refusal") break;
        const key = partKey(event.output_index, event.content_index);
        if (!open.has(key)) {
          const state = startBlock(key, "text");
          out.push({ type: "block_start", index: state.index, block: "text" });
        }
        break;
      }
      case "response.content_part.done": {
        const key = partKey(event.output_index, event.content_index);
        const state = open.get(key);
        if (state) {
          open.delete(key);
          const citations = citationsOf(event.part);
          out.push({
            type: "block_stop",
            index: state.index,
            block: "text",
            ...(citations.length > 0 ? { citations } : {}),
          });
        }
        break;
      }
      case "response.output_item.added": {
        const item = event.item;
        const key = itemKey(event.output_index);
        if (item.type === "reasoning") {
          const state = startBlock(key, "thinking");
          out.push({ type: "block_start", index: state.index, block: "thinking" });
        } else if (item.type === "function_call" || item.type === "custom_tool_call") {
          sawToolCall = true;
          const state = startBlock(key, "tool_use");
          out.push({
            type: "block_start",
            index: state.index,
            block: "tool_use",
            id: item.call_id,
            name: item.name,
            toolKind: item.type === "custom_tool_call" ? "custom" : "function",
          });
          const initial = item.type === "function_call" ? item.arguments : item.input;
          if (initial) {
            state.streamed += initial.length;
            out.push({ type: "block_delta", index: state.index, delta: "input_json", text: initial });
          }
        } else if (item.type === "web_search_call") {
          const search = runningSearch(item.id);
          const entry = { index: nextIndex++, item: search };
          searches.set(event.output_index, entry);
          out.push({ type: "server_tool", index: entry.index, item: { ...search } });
        }
        // Other built-in tool items (apply_patch, ...) are the server's business.
        break;
      }
      case "response.output_item.done": {
        const item = event.item;
        const key = itemKey(event.output_index);
        if (item.type === "reasoning") {
          const state = open.get(key);
          if (!state) break;
          open.delete(key);
          const summary = item.summary.length > 0 ? item.summary.map((part) => part.text) : state.summary;
          out.push({
            type: "block_stop",
            index: state.index,
            block: "thinking",
            replay: {
              provider: "openai-responses",
              ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
              ...(summary && summary.length > 0 ? { summary } : {}),
              providerData: { itemId: item.id },
            },
          });
        } else if (item.type === "function_call" || item.type === "custom_tool_call") {
          const state = open.get(key);
          if (!state) break;
          open.delete(key);
          if (state.streamed === 0) {
            // Whole arguments without deltas, or a call with no arguments at all.
            const whole = item.type === "function_call" ? item.arguments || "{}" : item.input;
            if (whole)
              out.push({ type: "block_delta", index: state.index, delta: "input_json", text: whole });
          }
          out.push({ type: "block_stop", index: state.index, block: "tool_use" });
        } else if (item.type === "message") {
          // Close text parts whose content_part.done never came.
          for (const [openKey, state] of open) {
            if (state.block === "text" && Math.floor(openKey / PART_SPAN) === event.output_index) {
              open.delete(openKey);
              const citations = citationsOf(item.content[openKey % PART_SPAN]);
              out.push({
                type: "block_stop",
                index: state.index,
                block: "text",
                ...(citations.length > 0 ? { citations } : {}),
              });
            }
          }
        } else if (item.type === "web_search_call") {
          let entry = searches.get(event.output_index);
          if (!entry) {
            entry = { index: nextIndex++, item: runningSearch(item.id) };
          }
          searches.delete(event.output_index);
          out.push({ type: "server_tool", index: entry.index, item: finishedSearch(entry.item, item) });
        }
        break;
      }
      case "response.completed":
        finish(event.response, sawToolCall ? "tool_use" : sawRefusal ? "refusal" : "end_turn");
        return true;
      case "response.incomplete": {
        const reason = event.response.incomplete_details?.reason;
        finish(event.response, reason === "content_filter" ? "content_filter" : "max_tokens");
        return true;
      }
      case "response.failed": {
        const usage = toUsage(event.response.usage);
        if (usage) out.push({ type: "usage", usage });
        fail(classifyStreamError(event.response.error));
        return true;
      }
      case "error":
        fail(classifyStreamError({ code: event.code, message: event.message }));
        return true;
      default:
        break;
    }
    return false;
  };
  const normalizer: Normalizer = {
    payload(payload, queue) {
      out = queue;
      terminated = step(payload as ResponseStreamEvent);
      return terminated;
    },
    fail(error, queue) {
      out = queue;
      if (signal.aborted) {
        cancelled(out, open, started, signal);
        return;
      }
      if (!started) out.push({ type: "status", status: "started" });
      fail(classifyOpenAIError(error, { inStream: true }));
    },
    end(queue) {
      out = queue;
      if (terminated) return;
      if (signal.aborted) {
        cancelled(out, open, started, signal);
        return;
      }
      if (!started) out.push({ type: "status", status: "started" });
      fail(
        new LlmError(
          "incomplete_stream",
          "the OpenAI stream ended before its terminal event (response.completed / failed / incomplete): the connection was cut or the server stopped",
          { provider: "openai-responses" },
        ),
      );
    },
  };
  return { payloads: stream, normalizer };
}

/** What a finished `web_search_call` did: its action (search, open_page, find_in_page) and the pages it saw. */
function finishedSearch(
  started: ServerToolItem,
  item: { status?: string; action?: unknown },
): ServerToolItem {
  const action = (item.action ?? {}) as Record<string, unknown>;
  const input: Record<string, unknown> = {};
  for (const key of ["type", "query", "url", "pattern"] as const) {
    if (typeof action[key] === "string") input[key === "type" ? "action" : key] = action[key];
  }
  const sources: ServerToolSource[] = [];
  const seen = new Set<string>();
  const add = (url: unknown, title?: unknown) => {
    if (typeof url !== "string" || url === "" || seen.has(url)) return;
    seen.add(url);
    sources.push(typeof title === "string" && title !== "" ? { url, title } : { url });
  };
  if (Array.isArray(action.sources))
    for (const source of action.sources as Array<Record<string, unknown>>) add(source?.url, source?.title);
  if (action.type === "open_page" || action.type === "find_in_page") add(action.url);
  const failed = item.status === "failed";
  return {
    ...started,
    arguments: JSON.stringify(input),
    status: failed ? "failed" : "completed",
    sources,
    ...(failed ? { error: "search_failed" } : {}),
    providerData: { action },
  };
}

/** The `url_citation` annotations of an output text part. */
function citationsOf(part: unknown): Citation[] {
  const annotations = (part as { annotations?: unknown } | undefined)?.annotations;
  if (!Array.isArray(annotations)) return [];
  const out: Citation[] = [];
  for (const annotation of annotations as Array<Record<string, unknown>>) {
    if (annotation?.type !== "url_citation" || typeof annotation.url !== "string") continue;
    const citation: Citation = { url: annotation.url, provider: "openai-responses" };
    if (typeof annotation.title === "string" && annotation.title !== "") citation.title = annotation.title;
    if (typeof annotation.start_index === "number" && typeof annotation.end_index === "number")
      citation.providerData = { startIndex: annotation.start_index, endIndex: annotation.end_index };
    out.push(citation);
  }
  return out;
}

function cancelled(out: Event[], open: Map<number, OpenBlock>, started: boolean, signal: AbortSignal): void {
  if (!started) out.push({ type: "status", status: "started" });
  // The shared ending: a timeout (the client's LlmError abort reason) fails, anything else cancels.
  out.push(...endAborted(signal, openBlocks(open)));
}

/** The open blocks in the shared form of stream-end.ts (the map is emptied: they are ending). */
function openBlocks(open: Map<number, OpenBlock>): OpenBlocks {
  const blocks = new OpenBlocks();
  for (const state of open.values()) blocks.start(state.index, state.block);
  open.clear();
  return blocks;
}

/** OpenAI's input_tokens already includes cached tokens, as our convention wants. */
function toUsage(usage: TerminalResponse["usage"]): Usage | undefined {
  if (!usage) return undefined;
  const out: Usage = {};
  if (usage.input_tokens !== undefined) out.inputTokens = usage.input_tokens;
  if (usage.output_tokens !== undefined) out.outputTokens = usage.output_tokens;
  const cached = usage.input_tokens_details?.cached_tokens;
  if (cached !== undefined) out.cacheReadTokens = cached;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** A web search the Responses stream reports under way: its item until the results (or their absence) arrive. */
function runningSearch(callId: string): ServerToolItem {
  return {
    type: "server_tool",
    callId,
    name: "web_search",
    arguments: "{}",
    status: "running",
    sources: [],
    provider: "openai-responses",
  };
}
