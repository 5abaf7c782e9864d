import type { ModelCapabilities } from "@yoi/manifest";
import type {
  ResponseCreateParamsStreaming,
  ResponseInputContent,
  ResponseInputItem,
  Tool,
} from "openai/resources/responses/responses";
import type { ContentPart, Item, ReasoningItem, ToolCallItem } from "../../item.ts";
import type { ClientWarning, Request } from "../../request.ts";
import { systemReminder } from "../system-reminder.ts";

/** What the Responses adapter derives from a neutral request. */
export interface BuiltResponsesRequest {
  params: ResponseCreateParamsStreaming;
  warnings: ClientWarning[];
}

/**
 * Converts a neutral request to a Responses API body. Reasoning is replayed
 * only when it came from the Responses API and carries its encrypted content
 * (with `store: false` the server keeps nothing, so an id alone cannot be
 * resolved); everything else is dropped, never sent as fake text.
 */
export function buildResponsesRequest(
  model: string,
  request: Request,
  capabilities?: ModelCapabilities,
  options: { systemMessagesAnywhere?: boolean } = {},
): BuiltResponsesRequest {
  const warnings: ClientWarning[] = [];
  const settings = request.settings ?? {};
  const input = toResponsesInput(request.items, warnings, options.systemMessagesAnywhere ?? true);

  const tools: Tool[] = [];
  const specs = [...(request.tools ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const spec of specs) {
    if (spec.kind === "custom") {
      tools.push({ type: "custom", name: spec.name, description: spec.description });
    } else {
      tools.push({
        type: "function",
        name: spec.name,
        description: spec.description,
        parameters: spec.parameters,
        strict: false,
      });
    }
  }
  // Built-in tools are passed over verbatim; their shapes are the provider's.
  for (const serverTool of request.serverTools ?? []) tools.push(serverTool as unknown as Tool);

  const params: ResponseCreateParamsStreaming = { model, input, stream: true, store: false };
  // Non-reasoning models (gpt-4o, gpt-4.1, *-chat) reject this include with a 400.
  if (isReasoningModel(model, capabilities)) params.include = ["reasoning.encrypted_content"];
  // The pages a web search saw come only when asked for (shown, and kept on the server_tool item).
  if ((request.serverTools ?? []).some((tool) => tool.type === "web_search"))
    params.include = [...(params.include ?? []), "web_search_call.action.sources"];
  if (request.system !== undefined && request.system !== "") params.instructions = request.system;
  if (tools.length > 0) params.tools = tools;
  if (settings.maxTokens !== undefined) params.max_output_tokens = settings.maxTokens;
  if (settings.temperature !== undefined) params.temperature = settings.temperature;
  if (settings.topP !== undefined) params.top_p = settings.topP;
  if (settings.parallelToolCalls !== undefined) params.parallel_tool_calls = settings.parallelToolCalls;
  if (settings.cacheKey !== undefined) params.prompt_cache_key = settings.cacheKey;
  if (settings.stopSequences !== undefined && settings.stopSequences.length > 0) {
    warnings.push({
      code: "unsupported_setting",
      message: "the OpenAI Responses API has no stop sequences; stopSequences was not sent",
      detail: { setting: "stopSequences" },
    });
  }
  const reasoning = settings.reasoning;
  if (reasoning?.effort !== undefined) {
    params.reasoning = { effort: reasoning.effort, summary: "auto" };
  } else if (reasoning?.budgetTokens !== undefined) {
    warnings.push({
      code: "unsupported_setting",
      message:
        "the OpenAI Responses API takes a reasoning effort, not a token budget; budgetTokens was not sent",
      detail: { setting: "reasoning.budgetTokens" },
    });
  }
  return { params, warnings };
}

/**
 * Whether `model` reasons (and so can return encrypted reasoning): the
 * catalog decides; for a model it does not know, the OpenAI naming does
 * (o-series, gpt-5 except the chat variants, codex, gpt-oss).
 */
export function isReasoningModel(model: string, capabilities: ModelCapabilities | undefined): boolean {
  if (capabilities) return capabilities.reasoning !== "none";
  const name = model.toLowerCase().replace(/^.*\//, "");
  if (/chat/.test(name)) return false;
  return /^(o\d|gpt-5|gpt-oss|codex)/.test(name) || name.includes("codex");
}

function toResponsesInput(
  items: Item[],
  warnings: ClientWarning[],
  systemAnywhere: boolean,
): ResponseInputItem[] {
  const out: ResponseInputItem[] = [];
  const customCalls = new Set<string>();
  for (const item of items) {
    if (item.type === "tool_call" && item.kind === "custom") customCalls.add(item.callId);
  }
  let dropped = 0;
  for (const item of items) {
    switch (item.type) {
      case "message": {
        if (item.role === "assistant") {
          const text = textOf(item.content);
          if (text !== "") out.push({ role: "assistant", content: text });
        } else if (item.role === "system" && !systemAnywhere && out.length > 0) {
          // A compatible server that takes system messages only first: user text in the marker.
          const text = textOf(item.content);
          if (text !== "") out.push({ role: "user", content: systemReminder(text) });
        } else {
          out.push({ role: item.role, content: inputContent(item.content) });
        }
        break;
      }
      case "tool_call":
        out.push(toolCall(item));
        break;
      case "tool_result":
        if (customCalls.has(item.callId)) {
          out.push({ type: "custom_tool_call_output", call_id: item.callId, output: item.output });
        } else {
          out.push({
            type: "function_call_output",
            call_id: item.callId,
            // Images go along as input content of the output.
            output: item.images?.length
              ? (inputContent([{ type: "text", text: item.output }, ...item.images]) as never)
              : item.output,
          });
        }
        break;
      case "reasoning": {
        const replay = reasoningItem(item);
        if (replay) out.push(replay);
        else dropped++;
        break;
      }
      case "server_tool":
        // Not sent back: with `store: false` the server cannot resolve a web_search_call by its id
        // (docs/design/web-search.md). The answer's text carries what the search found.
        break;
    }
  }
  // The API rejects a reasoning item that is not followed by the output item
  // it led to (a message, a tool call); e.g. one whose web search call we do
  // not keep, or a turn cut after its reasoning.
  for (let i = out.length - 1; i >= 0; i--) {
    const item = out[i] as { type?: string };
    if (item.type === "reasoning" && !isModelOutput(out[i + 1])) {
      out.splice(i, 1);
      dropped++;
    }
  }
  if (dropped > 0) {
    warnings.push({
      code: "dropped_reasoning",
      message: `${dropped} reasoning item(s) not produced by the OpenAI Responses API, without encrypted content, or not followed by the output they led to were not sent`,
      detail: { count: dropped },
    });
  }
  return out;
}

function isModelOutput(item: ResponseInputItem | undefined): boolean {
  if (!item) return false;
  const { type, role } = item as { type?: string; role?: string };
  return type === "function_call" || type === "custom_tool_call" || role === "assistant";
}

function toolCall(item: ToolCallItem): ResponseInputItem {
  if (item.kind === "custom") {
    return { type: "custom_tool_call", call_id: item.callId, name: item.name, input: item.arguments };
  }
  return {
    type: "function_call",
    call_id: item.callId,
    name: item.name,
    arguments: item.arguments === "" ? "{}" : item.arguments,
  };
}

function reasoningItem(item: ReasoningItem): ResponseInputItem | undefined {
  if (item.provider !== "openai-responses" || !item.encryptedContent) return undefined;
  const id = item.providerData?.itemId;
  const replay = {
    type: "reasoning" as const,
    summary: (item.summary ?? []).map((text) => ({ type: "summary_text" as const, text })),
    encrypted_content: item.encryptedContent,
    ...(typeof id === "string" ? { id } : {}),
  };
  // The API accepts a reasoning item without id when it carries encrypted content.
  return replay as ResponseInputItem;
}

function textOf(parts: ContentPart[]): string {
  let text = "";
  for (const part of parts) if (part.type === "text") text += part.text;
  return text;
}

function inputContent(parts: ContentPart[]): ResponseInputContent[] {
  const content: ResponseInputContent[] = [];
  for (const part of parts) {
    if (part.type === "text") {
      content.push({ type: "input_text", text: part.text });
    } else if (part.data !== undefined) {
      content.push({
        type: "input_image",
        detail: "auto",
        image_url: `data:${part.mediaType};base64,${part.data}`,
      });
    } else if (part.url !== undefined) {
      content.push({ type: "input_image", detail: "auto", image_url: part.url });
    }
  }
  return content;
}
