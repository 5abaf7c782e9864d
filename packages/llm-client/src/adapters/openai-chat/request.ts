/**
 * Neutral request -> OpenAI Chat Completions request, for OpenAI itself and
 * for OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio, xAI...).
 */
import type OpenAI from "openai";
import type { ContentPart, ReasoningItem } from "../../item.ts";
import type { ClientWarning, Request } from "../../request.ts";
import { omittedToolResultImages } from "../../tool-result-images.ts";
import { systemReminder } from "../system-reminder.ts";

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type AssistantParam = OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam;
type UserContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;
type ToolCallParam = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

export interface OpenAIChatRequestResult {
  params: Params;
  warnings: ClientWarning[];
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
): OpenAIChatRequestResult {
  const warnings: ClientWarning[] = [];
  const settings = request.settings ?? {};
  const messages: MessageParam[] = [];
  const anywhere = options.systemMessagesAnywhere ?? options.openai;
  let items = request.items;
  if (anywhere) {
    if (request.system !== undefined && request.system !== "")
      messages.push({ role: "system", content: request.system });
  } else {
    // One system message, first: the prompt and the system messages that open the history.
    const leading: string[] = request.system ? [request.system] : [];
    let i = 0;
    for (; i < items.length; i++) {
      const item = items[i]!;
      if (item.type !== "message" || item.role !== "system") break;
      const text = textOf(item.content);
      if (text !== "") leading.push(text);
    }
    if (leading.length > 0) messages.push({ role: "system", content: leading.join("\n\n") });
    items = items.slice(i);
  }

  let assistant: { text: string; calls: ToolCallParam[] } | undefined;
  const flush = () => {
    if (!assistant) return;
    const message: AssistantParam = {
      role: "assistant",
      content: assistant.text === "" ? null : assistant.text,
    };
    if (assistant.calls.length > 0) message.tool_calls = assistant.calls;
    if (assistant.text !== "" || assistant.calls.length > 0) messages.push(message);
    assistant = undefined;
  };
  const dropped: ReasoningItem[] = [];

  for (const item of items) {
    switch (item.type) {
      case "message":
        if (item.role === "assistant") {
          assistant ??= { text: "", calls: [] };
          for (const part of item.content) if (part.type === "text") assistant.text += part.text;
          break;
        }
        flush();
        if (item.role === "system" && anywhere) {
          messages.push({ role: "system", content: textOf(item.content) });
        } else if (item.role === "system") {
          const text = textOf(item.content);
          if (text !== "") appendUserText(messages, systemReminder(text));
        } else {
          messages.push({ role: "user", content: userContent(item.content) });
        }
        break;
      case "tool_call":
        assistant ??= { text: "", calls: [] };
        assistant.calls.push({
          id: item.callId,
          type: "function",
          function: { name: item.name, arguments: item.arguments.trim() === "" ? "{}" : item.arguments },
        });
        break;
      case "tool_result":
        flush();
        messages.push({
          role: "tool",
          tool_call_id: item.callId,
          // Chat has no error flag on tool messages; the model learns it from the text.
          // Tool messages are text only: images the result holds are named, not sent.
          content:
            (item.isError ? `Error: ${item.output}` : item.output) +
            (item.images?.length
              ? `\n${omittedToolResultImages(item.images.length, "openai-chat", model)}`
              : ""),
        });
        break;
      case "reasoning":
        if (item.text !== "" || (item.summary?.some((s) => s !== "") ?? false)) dropped.push(item);
        break;
      case "server_tool":
        // Chat Completions has no server tools: the answer's text carries what a search found.
        break;
    }
  }
  flush();

  if (dropped.length > 0) {
    warnings.push({
      code: "dropped_reasoning",
      message: `openai-chat: ${dropped.length} reasoning item(s) were not sent (Chat Completions cannot take reasoning back)`,
      detail: { count: dropped.length },
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

  return { params, warnings };
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
function appendUserText(messages: MessageParam[], text: string): void {
  const last = messages.at(-1);
  if (last?.role === "user") {
    if (typeof last.content === "string") last.content = `${last.content}\n\n${text}`;
    else last.content = [...last.content, { type: "text", text }];
    return;
  }
  messages.push({ role: "user", content: text });
}
