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
  onRawEvent?: ((payload: unknown) => void) | undefined;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "content_filter",
};

export async function* normalizeOpenAIChatStream(
  stream: AsyncIterable<unknown>,
  options: NormalizeOptions,
): AsyncGenerator<Event> {
  const { signal, onRawEvent } = options;
  const open = new OpenBlocks();
  const tools = new Map<number, ToolState>();
  const toolOrder: ToolState[] = [];
  let nextIndex = 0;
  let textIndex = -1;
  let thinkingIndex = -1;
  let started = false;
  let finish: string | undefined;
  let refused = false;

  function* closeText(): Generator<Event> {
    if (textIndex < 0) return;
    open.stop(textIndex);
    yield { type: "block_stop", index: textIndex, block: "text" };
    textIndex = -1;
  }
  function* closeThinking(): Generator<Event> {
    if (thinkingIndex < 0) return;
    open.stop(thinkingIndex);
    yield {
      type: "block_stop",
      index: thinkingIndex,
      block: "thinking",
      replay: { provider: "openai-chat" },
    };
    thinkingIndex = -1;
  }
  const begin = (block: BlockKind): number => {
    const index = nextIndex++;
    open.start(index, block);
    return index;
  };

  try {
    for await (const payload of stream) {
      onRawEvent?.(payload);
      const chunk = payload as RawChunk;
      if (!started) {
        started = true;
        yield {
          type: "status",
          status: "started",
          ...(chunk.model ? { model: chunk.model } : {}),
          ...(chunk.id ? { responseId: chunk.id } : {}),
        };
      }
      const choice = chunk.choices?.[0];
      const delta = choice?.delta;
      if (delta) {
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (reasoning) {
          if (thinkingIndex < 0) {
            yield* closeText();
            thinkingIndex = begin("thinking");
            yield { type: "block_start", index: thinkingIndex, block: "thinking" };
          }
          yield { type: "block_delta", index: thinkingIndex, delta: "thinking", text: reasoning };
        }
        const text = delta.content || delta.refusal;
        if (text) {
          if (delta.refusal) refused = true;
          if (textIndex < 0) {
            yield* closeThinking();
            textIndex = begin("text");
            yield { type: "block_start", index: textIndex, block: "text" };
          }
          yield { type: "block_delta", index: textIndex, delta: "text", text };
        }
        if (delta.tool_calls) {
          for (let k = 0; k < delta.tool_calls.length; k++) {
            const call = delta.tool_calls[k]!;
            const key = call.index ?? k;
            let state = tools.get(key);
            // A new id at a known index is a new call (servers that number every call 0).
            if (!state || (call.id && call.id !== state.id)) {
              yield* closeThinking();
              yield* closeText();
              state = {
                index: begin("tool_use"),
                id: call.id || `call_${nextIndex}_${key}`,
                sawArguments: false,
              };
              tools.set(key, state);
              toolOrder.push(state);
              yield {
                type: "block_start",
                index: state.index,
                block: "tool_use",
                id: state.id,
                name: call.function?.name ?? "",
                toolKind: "function",
              };
            }
            const args = call.function?.arguments;
            if (args) {
              state.sawArguments = true;
              yield { type: "block_delta", index: state.index, delta: "input_json", text: args };
            }
          }
        }
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) yield { type: "usage", usage: toUsage(chunk.usage) };
    }
  } catch (error) {
    if (signal.aborted) {
      yield* endAborted(signal, open);
      return;
    }
    yield* failStream(classifyOpenAIChatError(error, { inStream: true }), open);
    return;
  }
  if (signal.aborted) {
    yield* endAborted(signal, open);
    return;
  }
  if (finish === undefined) {
    yield* failStream(incompleteStream("openai-chat", "a finish_reason"), open);
    return;
  }
  yield* closeThinking();
  yield* closeText();
  for (const state of toolOrder) {
    if (!state.sawArguments)
      yield { type: "block_delta", index: state.index, delta: "input_json", text: "{}" };
    open.stop(state.index);
    yield { type: "block_stop", index: state.index, block: "tool_use" };
  }
  let stopReason = FINISH_REASONS[finish] ?? "end_turn";
  // Some compatible servers (older Ollama) finish tool calls with "stop".
  if (stopReason === "end_turn" && toolOrder.length > 0) stopReason = "tool_use";
  if (refused) stopReason = "refusal";
  yield { type: "status", status: "completed", stopReason };
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
