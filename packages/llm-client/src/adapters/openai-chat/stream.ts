/**
 * OpenAI Chat Completions stream -> the flat Event union.
 *
 * Chat chunks carry no block structure, so blocks are made here: reasoning
 * text (`reasoning_content` / `reasoning` of compatible servers) becomes a
 * thinking block, content and refusal text a text block, each tool call a
 * tool_use block keyed by its `index` (parallel calls interleave their
 * argument deltas). Block indices count up in order of appearance.
 */

import type { BlockKind, Event, StopReason, Usage } from "../../event.ts";
import type { AdapterStream, Normalizer } from "../adapter.ts";
import { endAborted, failStream, incompleteStream, OpenBlocks } from "../stream-end.ts";
import { classifyOpenAIChatError } from "./errors.ts";

/** The chunk fields read here (OpenAI's plus the compatible servers' extensions). */
interface RawChunk {
  id?: string;
  model?: string;
  choices?: RawChoice[];
  usage?: RawUsage | null;
}

interface RawChoice {
  index?: number;
  delta?: {
    content?: string | null;
    refusal?: string | null;
    reasoning_content?: string | null;
    reasoning?: string | null;
    tool_calls?: RawToolCallDelta[] | null;
  } | null;
  finish_reason?: string | null;
}

interface RawToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

interface RawUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** DeepSeek. */
  prompt_cache_hit_tokens?: number | null;
}

interface ToolState {
  index: number;
  id: string;
  sawArguments: boolean;
}

export interface NormalizeOptions {
  signal: AbortSignal;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "content_filter",
};

/** An Event iterator over the SDK's parsed Chat Completions stream. */
export function normalizeOpenAIChatStream(
  stream: AsyncIterable<unknown>,
  options: NormalizeOptions,
): AdapterStream {
  return { payloads: stream, normalizer: new OpenAIChatNormalizer(options.signal) };
}

export class OpenAIChatNormalizer implements Normalizer {
  private readonly signal: AbortSignal;
  private readonly open = new OpenBlocks();
  private readonly tools = new Map<number, ToolState>();
  private readonly toolOrder: ToolState[] = [];
  private nextIndex = 0;
  private textIndex = -1;
  private thinkingIndex = -1;
  private started = false;
  private finish: string | undefined;
  private refused = false;

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  private closeText(out: Event[]): void {
    if (this.textIndex < 0) return;
    this.open.stop(this.textIndex);
    out.push({ type: "block_stop", index: this.textIndex, block: "text" });
    this.textIndex = -1;
  }

  private closeThinking(out: Event[]): void {
    if (this.thinkingIndex < 0) return;
    this.open.stop(this.thinkingIndex);
    out.push({
      type: "block_stop",
      index: this.thinkingIndex,
      block: "thinking",
      replay: { provider: "openai-chat" },
    });
    this.thinkingIndex = -1;
  }

  private begin(block: BlockKind): number {
    const index = this.nextIndex++;
    this.open.start(index, block);
    return index;
  }

  payload(payload: unknown, out: Event[]): boolean {
    const chunk = payload as RawChunk;
    if (!this.started) {
      this.started = true;
      out.push({
        type: "status",
        status: "started",
        ...(chunk.model ? { model: chunk.model } : {}),
        ...(chunk.id ? { responseId: chunk.id } : {}),
      });
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (reasoning) {
        if (this.thinkingIndex < 0) {
          this.closeText(out);
          this.thinkingIndex = this.begin("thinking");
          out.push({ type: "block_start", index: this.thinkingIndex, block: "thinking" });
        }
        out.push({ type: "block_delta", index: this.thinkingIndex, delta: "thinking", text: reasoning });
      }
      const text = delta.content || delta.refusal;
      if (text) {
        if (delta.refusal) this.refused = true;
        if (this.textIndex < 0) {
          this.closeThinking(out);
          this.textIndex = this.begin("text");
          out.push({ type: "block_start", index: this.textIndex, block: "text" });
        }
        out.push({ type: "block_delta", index: this.textIndex, delta: "text", text });
      }
      if (delta.tool_calls) this.toolDeltas(delta.tool_calls, out);
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    if (chunk.usage) out.push({ type: "usage", usage: toUsage(chunk.usage) });
    // The terminal marker is [DONE] (the SDK ends the stream there), not the finish chunk: usage follows it.
    return false;
  }

  private toolDeltas(calls: RawToolCallDelta[], out: Event[]): void {
    for (let k = 0; k < calls.length; k++) {
      const call = calls[k]!;
      const key = call.index ?? k;
      let state = this.tools.get(key);
      // A new id at a known index is a new call (servers that number every call 0).
      if (!state || (call.id && call.id !== state.id)) {
        this.closeThinking(out);
        this.closeText(out);
        state = {
          index: this.begin("tool_use"),
          id: call.id || `call_${this.nextIndex}_${key}`,
          sawArguments: false,
        };
        this.tools.set(key, state);
        this.toolOrder.push(state);
        out.push({
          type: "block_start",
          index: state.index,
          block: "tool_use",
          id: state.id,
          name: call.function?.name ?? "",
          toolKind: "function",
        });
      }
      const args = call.function?.arguments;
      if (args) {
        state.sawArguments = true;
        out.push({ type: "block_delta", index: state.index, delta: "input_json", text: args });
      }
    }
  }

  end(out: Event[]): void {
    if (this.signal.aborted) {
      out.push(...endAborted(this.signal, this.open));
      return;
    }
    if (this.finish === undefined) {
      out.push(...failStream(incompleteStream("openai-chat", "a finish_reason"), this.open));
      return;
    }
    this.closeThinking(out);
    this.closeText(out);
    for (const state of this.toolOrder) {
      if (!state.sawArguments)
        out.push({ type: "block_delta", index: state.index, delta: "input_json", text: "{}" });
      this.open.stop(state.index);
      out.push({ type: "block_stop", index: state.index, block: "tool_use" });
    }
    let stopReason = FINISH_REASONS[this.finish] ?? "end_turn";
    // Some compatible servers (older Ollama) finish tool calls with "stop".
    if (stopReason === "end_turn" && this.toolOrder.length > 0) stopReason = "tool_use";
    if (this.refused) stopReason = "refusal";
    out.push({ type: "status", status: "completed", stopReason });
  }

  fail(error: unknown, out: Event[]): void {
    if (this.signal.aborted) {
      out.push(...endAborted(this.signal, this.open));
      return;
    }
    out.push(...failStream(classifyOpenAIChatError(error, { inStream: true }), this.open));
  }
}

/**
 * OpenAI counts cached tokens inside `prompt_tokens` and reasoning inside
 * `completion_tokens`, which is the llm-client convention already. Some
 * compatible servers (xAI) report reasoning beside the completion instead;
 * their `total_tokens` gives it away and the output is summed back.
 */
function toUsage(raw: RawUsage): Usage {
  const usage: Usage = {};
  const prompt = raw.prompt_tokens ?? undefined;
  const completion = raw.completion_tokens ?? undefined;
  const reasoning = raw.completion_tokens_details?.reasoning_tokens ?? undefined;
  if (prompt !== undefined) usage.inputTokens = prompt;
  if (completion !== undefined) {
    const separate =
      reasoning !== undefined &&
      reasoning > 0 &&
      prompt !== undefined &&
      raw.total_tokens != null &&
      raw.total_tokens === prompt + completion + reasoning;
    usage.outputTokens = separate ? completion + reasoning! : completion;
  }
  const cached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? undefined;
  if (cached !== undefined) usage.cacheReadTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}
