/**
 * Neutral request -> OpenAI Chat Completions request, for OpenAI itself and
 * for OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio, xAI...).
 */
import type OpenAI from "openai";
import { startsWith } from "../../history.ts";
import type { ContentPart, Item, ToolCallItem, ToolResultItem } from "../../item.ts";
import type { ClientWarning, Request } from "../../request.ts";
import { omittedToolResultImages } from "../../tool-result-images.ts";
import { systemReminder } from "../system-reminder.ts";

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type AssistantParam = OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam;
type UserContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;
type ToolCallParam = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
type ToolParam = OpenAI.Chat.Completions.ChatCompletionToolMessageParam;

/*
 * The messages of history items, kept per item object. Committed items are
 * never changed and history only grows between compactions, so a long
 * session converts each item once instead of allocating every message of
 * its history anew for each model call (which, kept alive while the
 * request is in flight, also made V8 grow its young generation). Kept is
 * only what depends on nothing but the items: the tool message of a result
 * without images, a tool call, and the assistant message of a run of
 * assistant items (checked item by item against the run it was built
 * from). Nothing here is changed after it is built; a request that needs a
 * different message builds a new one.
 */
const toolMessages = new WeakMap<ToolResultItem, ToolParam>();
const toolCalls = new WeakMap<ToolCallItem, ToolCallParam>();
const assistantRuns = new WeakMap<Item, { run: Item[]; message: AssistantParam | undefined }>();

export interface OpenAIChatRequestResult {
  params: Params;
  /** `params` as the JSON text that is sent. */
  body: string;
  warnings: ClientWarning[];
}

/**
 * The messages of the history an adapter sent last, kept for its next
 * request. History only grows between compactions, so the next request's
 * items usually begin with the last request's: their messages, and the JSON
 * of each, are taken as they are, and only the items after them are
 * converted and encoded. Without it every request walked the whole history
 * again and encoded all of it. Whether the items begin with the kept ones is
 * checked item by item (object identity), so any other change (a
 * compaction, a trim, a rewind, a repaired pairing) starts over, as does
 * another model, system prompt or option.
 */
export class ChatHistoryCache {
  /** The items the kept messages were built from (a copy: the caller's array may change). */
  items: readonly Item[] = [];
  /** What they were built with. */
  model = "";
  system: string | undefined;
  anywhere = false;
  fold: Fold | undefined;
}

/**
 * The conversion of a history's items up to some point: the messages of its
 * finished parts (an assistant run still open at that point is not among
 * them), the JSON of each (filled in when first encoded), where the open
 * run starts, and how many reasoning items were dropped.
 */
interface Fold {
  messages: MessageParam[];
  json: (string | undefined)[];
  /** Index in the items of the first item of the open assistant run; -1 when none. */
  runStart: number;
  dropped: number;
}

export interface OpenAIChatRequestOptions {
  /**
   * True when the server is OpenAI itself (no `baseURL`, or api.openai.com):
   * only then are `max_completion_tokens`, `prompt_cache_key` and
   * `reasoning_effort` sent. Compatible servers get the portable subset.
   */
  openai: boolean;
  /**
   * Whether a system message may follow other messages. Default `openai`:
   * OpenAI accepts it; compatible servers get one leading system message
   * (the prompt and the system messages that open the history, joined) and
   * every later one as user text in `<system-reminder>`, merged into the
   * user message before it.
   */
  systemMessagesAnywhere?: boolean;
}

/** Whether `baseURL` points at OpenAI's own API. */
export function isOpenAIHost(baseURL: string | undefined): boolean {
  if (baseURL === undefined) return true;
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/**
 * Builds the streaming request body. Consecutive assistant items form one
 * assistant message (text and `tool_calls`); each tool result is a `tool`
 * message right after it. Reasoning items are never sent (Chat Completions
 * cannot take them back); a non-empty one is reported as dropped.
 */
export function buildOpenAIChatRequest(
  model: string,
  request: Request,
  options: OpenAIChatRequestOptions,
  cache?: ChatHistoryCache,
): OpenAIChatRequestResult {
  const warnings: ClientWarning[] = [];
  const settings = request.settings ?? {};
  const anywhere = options.systemMessagesAnywhere ?? options.openai;
  const items = request.items;
  const kept =
    cache !== undefined &&
    cache.fold !== undefined &&
    cache.model === model &&
    cache.system === request.system &&
    cache.anywhere === anywhere &&
    startsWith(items, cache.items)
      ? cache.fold
      : undefined;
  let fold: Fold;
  let from: number;
  if (kept !== undefined) {
    fold = {
      messages: kept.messages.slice(),
      json: kept.json.slice(),
      runStart: kept.runStart,
      dropped: kept.dropped,
    };
    from = cache!.items.length;
  } else {
    fold = { messages: [], json: [], runStart: -1, dropped: 0 };
    from = openingMessages(fold.messages, request.system, items, anywhere);
  }
  convert(items, from, fold, model, anywhere);
  const messages = fold.messages;
  const settled = messages.length;
  if (fold.runStart >= 0) {
    const message = assistantMessage(items, fold.runStart, items.length);
    if (message !== undefined) messages.push(message);
  }

  if (fold.dropped > 0) {
    warnings.push({
      code: "dropped_reasoning",
      message: `openai-chat: ${fold.dropped} reasoning item(s) were not sent (Chat Completions cannot take reasoning back)`,
      detail: { count: fold.dropped },
    });
  }

  const params: Params = {
    model,
    messages,
    stream: true,
    // Without it OpenAI sends no usage on streams; compatible servers that ignore it simply send none.
    stream_options: { include_usage: true },
  };

  const tools = request.tools ?? [];
  if (tools.length > 0) {
    const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    params.tools = sorted.map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      },
    }));
    if (settings.parallelToolCalls !== undefined) params.parallel_tool_calls = settings.parallelToolCalls;
  }
  if (request.serverTools && request.serverTools.length > 0) {
    warnings.push({
      code: "unsupported_setting",
      message: "openai-chat: Chat Completions has no server-side tools; serverTools were not sent",
      detail: { setting: "serverTools" },
    });
  }

  if (settings.maxTokens !== undefined) {
    if (options.openai) params.max_completion_tokens = settings.maxTokens;
    else params.max_tokens = settings.maxTokens;
  }
  if (settings.temperature !== undefined) params.temperature = settings.temperature;
  if (settings.topP !== undefined) params.top_p = settings.topP;
  if (settings.stopSequences && settings.stopSequences.length > 0) params.stop = settings.stopSequences;

  const reasoning = settings.reasoning;
  if (reasoning?.effort !== undefined) {
    if (options.openai) params.reasoning_effort = reasoning.effort;
    else {
      warnings.push({
        code: "unsupported_setting",
        message: "openai-chat: reasoning.effort is only sent to OpenAI itself, not to a compatible server",
        detail: { setting: "reasoning.effort" },
      });
    }
  }
  if (reasoning?.budgetTokens !== undefined) {
    warnings.push({
      code: "unsupported_setting",
      message: "openai-chat: Chat Completions takes no reasoning token budget; use reasoning.effort",
      detail: { setting: "reasoning.budgetTokens" },
    });
  }
  if (settings.cacheKey !== undefined && options.openai) params.prompt_cache_key = settings.cacheKey;

  const body = encodeParams(params, fold.json);
  if (cache !== undefined) {
    // Kept is the fold before the open run's message (the next request may add to that run). Leading system items
    // alone are not kept: a next one would join them.
    const keep = from < items.length || kept !== undefined;
    cache.items = keep ? items.slice() : [];
    cache.model = model;
    cache.system = request.system;
    cache.anywhere = anywhere;
    cache.fold = keep
      ? {
          messages: messages.slice(0, settled),
          json: fold.json.slice(0, settled),
          runStart: fold.runStart,
          dropped: fold.dropped,
        }
      : undefined;
  }
  return { params, body, warnings };
}

/**
 * The first messages: the system prompt, or for a server that takes one
 * leading system message, the prompt and the system items that open the
 * history joined. Returns the index of the first item still to convert.
 */
function openingMessages(
  messages: MessageParam[],
  system: string | undefined,
  items: readonly Item[],
  anywhere: boolean,
): number {
  if (anywhere) {
    if (system !== undefined && system !== "") messages.push({ role: "system", content: system });
    return 0;
  }
  const leading: string[] = system ? [system] : [];
  let i = 0;
  for (; i < items.length; i++) {
    const item = items[i]!;
    if (item.type !== "message" || item.role !== "system") break;
    const text = textOf(item.content);
    if (text !== "") leading.push(text);
  }
  if (leading.length > 0) messages.push({ role: "system", content: leading.join("\n\n") });
  return i;
}

/**
 * Converts `items[from..]` onto `fold`: consecutive assistant items form one
 * assistant message (text and `tool_calls`), pushed when the run ends; each
 * tool result is a `tool` message right after it. A run still open at the
 * end stays open (`fold.runStart`).
 */
function convert(items: readonly Item[], from: number, fold: Fold, model: string, anywhere: boolean): void {
  const { messages } = fold;
  const flush = (end: number) => {
    if (fold.runStart < 0) return;
    const message = assistantMessage(items, fold.runStart, end);
    if (message !== undefined) messages.push(message);
    fold.runStart = -1;
  };
  for (let i = from; i < items.length; i++) {
    const item = items[i]!;
    switch (item.type) {
      case "message":
        if (item.role === "assistant") {
          if (fold.runStart < 0) fold.runStart = i;
          break;
        }
        flush(i);
        if (item.role === "system" && anywhere) {
          messages.push({ role: "system", content: textOf(item.content) });
        } else if (item.role === "system") {
          const text = textOf(item.content);
          if (text !== "") appendUserText(fold, systemReminder(text));
        } else {
          messages.push({ role: "user", content: userContent(item.content) });
        }
        break;
      case "tool_call":
        if (fold.runStart < 0) fold.runStart = i;
        break;
      case "tool_result":
        flush(i);
        messages.push(toolMessage(item, model));
        break;
      case "reasoning":
        if (item.text !== "" || (item.summary?.some((s) => s !== "") ?? false)) fold.dropped++;
        break;
      case "server_tool":
        // Chat Completions has no server tools: the answer's text carries what a search found.
        break;
    }
  }
}

/**
 * `params` as JSON, the same text `JSON.stringify(params)` gives, with each
 * message encoded once: `json` holds what earlier requests encoded of the
 * messages (each after its comma) and receives the rest.
 */
function encodeParams(params: Params, json: (string | undefined)[]): string {
  const { model, messages, ...rest } = params;
  // One join, so the body is one flat string: a template around a joined array is copied once more when sent.
  const parts: string[] = [`{"model":${JSON.stringify(model)},"messages":[`];
  for (let k = 0; k < messages.length; k++) {
    json[k] ??= `${k === 0 ? "" : ","}${JSON.stringify(messages[k])}`;
    parts.push(json[k]!);
  }
  parts.push(`],${JSON.stringify(rest).slice(1)}`);
  return parts.join("");
}

/**
 * The one assistant message of `items[start..end)`, a run of assistant text
 * and tool calls (reasoning inside it is not sent); undefined when the run
 * has neither text nor calls.
 */
function assistantMessage(items: readonly Item[], start: number, end: number): AssistantParam | undefined {
  const kept = assistantRuns.get(items[start]!);
  if (kept !== undefined && sameRun(kept.run, items, start, end)) return kept.message;
  let text = "";
  const calls: ToolCallParam[] = [];
  for (let i = start; i < end; i++) {
    const item = items[i]!;
    if (item.type === "message") {
      for (const part of item.content) if (part.type === "text") text += part.text;
    } else if (item.type === "tool_call") {
      let call = toolCalls.get(item);
      if (call === undefined) {
        call = {
          id: item.callId,
          type: "function",
          function: { name: item.name, arguments: item.arguments.trim() === "" ? "{}" : item.arguments },
        };
        toolCalls.set(item, call);
      }
      calls.push(call);
    }
  }
  let message: AssistantParam | undefined;
  if (text !== "" || calls.length > 0) {
    message = { role: "assistant", content: text === "" ? null : text };
    if (calls.length > 0) message.tool_calls = calls;
  }
  assistantRuns.set(items[start]!, { run: items.slice(start, end), message });
  return message;
}

/** Whether `items[start..end)` are the items of `run`, one by one. */
function sameRun(run: Item[], items: readonly Item[], start: number, end: number): boolean {
  if (run.length !== end - start) return false;
  for (let k = 0; k < run.length; k++) if (run[k] !== items[start + k]) return false;
  return true;
}

/** The tool message of a result. Chat has no error flag on tool messages; the model learns it from the text. */
function toolMessage(item: ToolResultItem, model: string): ToolParam {
  const text = item.isError ? `Error: ${item.output}` : item.output;
  // Tool messages are text only: images the result holds are named, not sent (which names the model: not kept).
  if (item.images?.length)
    return {
      role: "tool",
      tool_call_id: item.callId,
      content: `${text}\n${omittedToolResultImages(item.images.length, "openai-chat", model)}`,
    };
  let message = toolMessages.get(item);
  if (message === undefined) {
    message = { role: "tool", tool_call_id: item.callId, content: text };
    toolMessages.set(item, message);
  }
  return message;
}

function textOf(content: ContentPart[]): string {
  let out = "";
  for (const part of content) if (part.type === "text") out += part.text;
  return out;
}

/** A plain string when the content is text only: many compatible servers reject content arrays. */
function userContent(content: ContentPart[]): string | UserContentPart[] {
  if (content.every((p) => p.type === "text")) return textOf(content);
  const parts: UserContentPart[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text !== "") parts.push({ type: "text", text: part.text });
    } else if (part.data !== undefined) {
      parts.push({ type: "image_url", image_url: { url: `data:${part.mediaType};base64,${part.data}` } });
    } else if (part.url !== undefined) {
      parts.push({ type: "image_url", image_url: { url: part.url } });
    }
  }
  return parts;
}

/**
 * Adds user text, into the user message just before when there is one (so a
 * converted system message does not make two user turns in a row, which
 * strict chat templates also reject), else as a new user message.
 */
function appendUserText(fold: Fold, text: string): void {
  const { messages } = fold;
  const at = messages.length - 1;
  const last = messages[at];
  if (last?.role === "user") {
    // A new message, not a change to the old one: a kept history holds the old one and its JSON.
    messages[at] = {
      role: "user",
      content:
        typeof last.content === "string"
          ? `${last.content}\n\n${text}`
          : [...last.content, { type: "text", text }],
    };
    fold.json[at] = undefined;
    return;
  }
  messages.push({ role: "user", content: text });
}
