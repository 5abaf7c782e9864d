/**
 * Neutral request -> Anthropic Messages request. Runs on every call from the
 * whole history (nothing provider-specific is cached across compaction).
 */
import type Anthropic from "@anthropic-ai/sdk";
import {
  type Citation,
  type ContentPart,
  type ReasoningItem,
  type ServerToolItem,
  serverToolInput,
} from "../../item.ts";
import type { ClientWarning, Request } from "../../request.ts";
import { systemReminder } from "../system-reminder.ts";

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type TextBlockParam = Anthropic.Messages.TextBlockParam;
type ToolParam = Anthropic.Messages.Tool;
type Params = Anthropic.Messages.MessageCreateParamsStreaming;

/** Anthropic requires `max_tokens`; this is sent when the request sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;
/** The smallest thinking budget the API accepts. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

const EPHEMERAL = { type: "ephemeral" } as const;

export interface AnthropicRequestResult {
  params: Params;
  warnings: ClientWarning[];
}

/**
 * Builds the streaming request body.
 *
 * - System: `request.system` plus the system messages that open the history
 *   become the top-level `system`; a system message later in the history is
 *   sent as user text (Anthropic has no mid-conversation system role that
 *   every compatible server accepts).
 * - Consecutive assistant items (reasoning, text, tool calls) form one
 *   assistant message; consecutive user items and tool results form one user
 *   message with its `tool_result` blocks first, as the API requires.
 * - Reasoning is replayed only when Anthropic produced it and it can be
 *   verified (a signed `thinking` block or a `redacted_thinking` block);
 *   anything else is dropped, never sent as text.
 * - A server tool Anthropic ran (web search) is sent back as its
 *   `server_tool_use` block and its result block, encrypted content and
 *   all, as the API requires; text keeps its web citations. Server tools
 *   and citations of other providers are not sent (the answer's text is).
 * - `cache_control` breakpoints go on the system prompt, the last tool and
 *   the last message, per `settings.promptCache` (all on by default).
 */
export function buildAnthropicRequest(model: string, request: Request): AnthropicRequestResult {
  const warnings: ClientWarning[] = [];
  const settings = request.settings ?? {};
  const cache = settings.promptCache ?? {};
  const cacheOn = cache.enabled ?? true;

  const systemTexts: string[] = [];
  if (request.system !== undefined && request.system !== "") systemTexts.push(request.system);
  let i = 0;
  const items = request.items;
  while (i < items.length) {
    const item = items[i]!;
    if (item.type !== "message" || item.role !== "system") break;
    const text = textOf(item.content);
    if (text !== "") systemTexts.push(text);
    i++;
  }

  const messages: MessageParam[] = [];
  const dropped: ReasoningItem[] = [];
  let current:
    | { role: "user" | "assistant"; results: ContentBlockParam[]; blocks: ContentBlockParam[] }
    | undefined;
  const flush = () => {
    if (!current) return;
    const content = [...current.results, ...current.blocks];
    if (content.length > 0) messages.push({ role: current.role, content });
    current = undefined;
  };
  const side = (role: "user" | "assistant") => {
    if (current?.role !== role) {
      flush();
      current = { role, results: [], blocks: [] };
    }
    return current;
  };

  for (; i < items.length; i++) {
    const item = items[i]!;
    switch (item.type) {
      case "message": {
        const role = item.role === "assistant" ? "assistant" : "user";
        const target = side(role);
        if (item.role === "system") {
          const text = textOf(item.content);
          if (text !== "") target.blocks.push({ type: "text", text: systemReminder(text) });
          break;
        }
        for (const part of item.content) {
          const block = contentBlock(part);
          if (block) target.blocks.push(block);
        }
        break;
      }
      case "tool_call":
        side("assistant").blocks.push({
          type: "tool_use",
          id: item.callId,
          name: item.name,
          input: parseArguments(item.arguments, item.name, warnings),
        });
        break;
      case "tool_result":
        side("user").results.push({
          type: "tool_result",
          tool_use_id: item.callId,
          content: item.images?.length
            ? [
                ...(item.output === "" ? [] : [{ type: "text" as const, text: item.output }]),
                ...item.images.flatMap((image) => {
                  const block = contentBlock(image);
                  return block?.type === "image" ? [block] : [];
                }),
              ]
            : item.output,
          ...(item.isError ? { is_error: true } : {}),
        });
        break;
      case "server_tool":
        side("assistant").blocks.push(...serverToolBlocks(item));
        break;
      case "reasoning": {
        const block = reasoningBlock(item);
        if (block) side("assistant").blocks.push(block);
        else dropped.push(item);
        break;
      }
    }
  }
  flush();

  const nonEmpty = dropped.filter((r) => r.text !== "" || (r.summary?.length ?? 0) > 0 || r.encryptedContent);
  if (nonEmpty.length > 0) {
    warnings.push({
      code: "dropped_reasoning",
      message: `anthropic: ${nonEmpty.length} reasoning item(s) from ${[...new Set(nonEmpty.map((r) => r.provider))].join(", ")} or without a signature were not sent`,
      detail: { count: nonEmpty.length },
    });
  }

  const params: Params = {
    model,
    max_tokens: settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages,
    stream: true,
  };

  if (systemTexts.length > 0) {
    const system: TextBlockParam[] = systemTexts.map((text) => ({ type: "text", text }));
    if (cacheOn && (cache.system ?? true)) system[system.length - 1]!.cache_control = EPHEMERAL;
    params.system = system;
  }

  const tools = request.tools ?? [];
  const serverTools = request.serverTools ?? [];
  if (tools.length > 0 || serverTools.length > 0) {
    // Sorted by name: the order is part of the cached prefix, so it must not depend on registration order.
    const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const list: ToolParam[] = sorted.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as ToolParam["input_schema"],
    }));
    // Server tools are passed verbatim (the caller chose their shape); they come after the function tools.
    const all = [...list, ...(serverTools as unknown as ToolParam[])];
    if (cacheOn && (cache.tools ?? true) && all.length > 0) {
      all[all.length - 1] = { ...all[all.length - 1]!, cache_control: EPHEMERAL };
    }
    params.tools = all;
    if (settings.parallelToolCalls === false && list.length > 0) {
      params.tool_choice = { type: "auto", disable_parallel_tool_use: true };
    }
  }

  trimPausedTurn(messages);
  if (cacheOn && (cache.conversation ?? true)) markLastMessage(messages);

  // The Messages API has deprecated sampling parameters (the SDK no longer types them): not sent.
  for (const key of ["temperature", "topP"] as const) {
    if (settings[key] !== undefined) {
      warnings.push({
        code: "unsupported_setting",
        message: `anthropic: the Messages API no longer takes ${key}; it was not sent`,
        detail: { setting: key },
      });
    }
  }
  if (settings.stopSequences && settings.stopSequences.length > 0)
    params.stop_sequences = settings.stopSequences;

  const reasoning = settings.reasoning;
  if (reasoning?.budgetTokens !== undefined) {
    let budget = Math.floor(reasoning.budgetTokens);
    if (budget < ANTHROPIC_MIN_THINKING_BUDGET) {
      warnings.push({
        code: "unsupported_setting",
        message: `anthropic: a thinking budget of ${budget} is below the minimum of ${ANTHROPIC_MIN_THINKING_BUDGET}; ${ANTHROPIC_MIN_THINKING_BUDGET} was sent`,
        detail: { setting: "reasoning.budgetTokens" },
      });
      budget = ANTHROPIC_MIN_THINKING_BUDGET;
    }
    params.thinking = { type: "enabled", budget_tokens: budget };
    // The budget is part of max_tokens: keep room for the answer.
    if (params.max_tokens <= budget)
      params.max_tokens = budget + (settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS);
    if (reasoning.effort !== undefined) {
      warnings.push({
        code: "unsupported_setting",
        message: "anthropic: reasoning.effort was not sent beside reasoning.budgetTokens (the budget wins)",
        detail: { setting: "reasoning.effort" },
      });
    }
  } else if (reasoning?.effort !== undefined) {
    // Models the catalog gives an effort (or unknown ones) get adaptive thinking at that effort.
    params.thinking = { type: "adaptive" };
    params.output_config = { effort: reasoning.effort === "minimal" ? "low" : reasoning.effort };
  }

  return { params, warnings };
}

function textOf(content: ContentPart[]): string {
  let out = "";
  for (const part of content) if (part.type === "text") out += part.text;
  return out;
}

function contentBlock(part: ContentPart): ContentBlockParam | undefined {
  if (part.type === "text") {
    // The API rejects empty text blocks.
    if (part.text === "") return undefined;
    const citations = part.citations?.flatMap((c) => citationParam(c) ?? []) ?? [];
    return citations.length > 0
      ? { type: "text", text: part.text, citations }
      : { type: "text", text: part.text };
  }
  if (part.data !== undefined) {
    return {
      type: "image",
      source: {
        type: "base64",
        media_type: part.mediaType as Anthropic.Messages.Base64ImageSource["media_type"],
        data: part.data,
      },
    };
  }
  if (part.url !== undefined) return { type: "image", source: { type: "url", url: part.url } };
  return undefined;
}

/** Anthropic's own web citations, as it sent them (they need their `encrypted_index`). */
function citationParam(citation: Citation): Anthropic.Messages.TextCitationParam | undefined {
  const data = citation.providerData;
  if (citation.provider !== "anthropic" || data?.type !== "web_search_result_location") return undefined;
  if (typeof data.encryptedIndex !== "string") return undefined;
  return {
    type: "web_search_result_location",
    url: citation.url,
    title: citation.title ?? null,
    cited_text: citation.citedText ?? "",
    encrypted_index: data.encryptedIndex,
  };
}

/**
 * The call and its result block. A call without a result (the response was
 * cut) or another provider's is not sent: the API rejects a call alone.
 */
function serverToolBlocks(item: ServerToolItem): ContentBlockParam[] {
  const data = item.providerData;
  if (item.provider !== "anthropic" || typeof data?.resultType !== "string" || data.content === undefined)
    return [];
  const input = serverToolInput(item);
  return [
    {
      type: "server_tool_use",
      id: item.callId,
      name: item.name as Anthropic.Messages.ServerToolUseBlockParam["name"],
      input,
    },
    {
      type: data.resultType,
      tool_use_id: item.callId,
      content: data.content,
    } as unknown as ContentBlockParam,
  ];
}

function reasoningBlock(item: ReasoningItem): ContentBlockParam | undefined {
  if (item.provider !== "anthropic") return undefined;
  if (item.redacted) {
    return item.encryptedContent ? { type: "redacted_thinking", data: item.encryptedContent } : undefined;
  }
  // An unsigned thinking block (e.g. from an interrupted stream) is rejected by the API.
  if (!item.signature) return undefined;
  return { type: "thinking", thinking: item.text, signature: item.signature };
}

function parseArguments(raw: string, name: string, warnings: ClientWarning[]): Record<string, unknown> {
  if (raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  warnings.push({
    code: "repaired_history",
    message: `anthropic: the arguments of a ${name} call in the history are not a JSON object; sent as {}`,
    detail: { tool: name },
  });
  return {};
}

/**
 * A history that ends with the assistant (a turn the server paused, sent
 * back to go on) is continued from its last block; the API rejects a final
 * assistant text that ends in whitespace, so that text is trimmed.
 */
function trimPausedTurn(messages: MessageParam[]): void {
  const last = messages[messages.length - 1];
  if (last?.role !== "assistant" || typeof last.content === "string") return;
  const block = last.content[last.content.length - 1];
  if (block?.type !== "text") return;
  const text = block.text.trimEnd();
  if (text === "") last.content.pop();
  else last.content[last.content.length - 1] = { ...block, text };
  if (last.content.length === 0) messages.pop();
}

function markLastMessage(messages: MessageParam[]): void {
  const last = messages[messages.length - 1];
  if (!last || typeof last.content === "string") return;
  for (let k = last.content.length - 1; k >= 0; k--) {
    const block = last.content[k]!;
    // Thinking blocks cannot carry cache_control.
    if (block.type === "thinking" || block.type === "redacted_thinking") continue;
    last.content[k] = { ...block, cache_control: EPHEMERAL } as ContentBlockParam;
    return;
  }
}
