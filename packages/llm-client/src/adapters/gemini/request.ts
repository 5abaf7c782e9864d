import type {
  Content,
  FunctionDeclaration,
  GenerateContentConfig,
  Part,
  ThinkingLevel,
  Tool,
} from "@google/genai";
import { LlmError } from "../../errors.ts";
import type { ContentPart, ToolCallItem } from "../../item.ts";
import type { ClientWarning, Request } from "../../request.ts";
import { acceptsToolResultImages, omittedToolResultImages } from "../../tool-result-images.ts";
import { systemReminder } from "../system-reminder.ts";

export interface BuiltGeminiRequest {
  contents: Content[];
  config: GenerateContentConfig;
  warnings: ClientWarning[];
}

/** The key of the Gemini thought signature in `providerData`. */
export const THOUGHT_SIGNATURE = "thoughtSignature";
/** Google's documented thought signature for function calls that Gemini did not produce. */
export const FOREIGN_CALL_SIGNATURE = "skip_thought_signature_validator";
/** The key of the call id Gemini itself gave (absent when we generated one). */
export const FUNCTION_CALL_ID = "functionCallId";

/**
 * Converts a neutral request to Gemini `contents` + config.
 *
 * - system prompt and the system messages that open the history ->
 *   `systemInstruction`; a later system message -> user text in
 *   `<system-reminder>` where it stands (Gemini takes system text only at
 *   the top, and hoisting it would reorder the conversation);
 * - assistant text, tool calls and Gemini reasoning -> `model` parts, each
 *   with the `thoughtSignature` it came with;
 * - tool results -> `functionResponse` parts paired by name (and by id when
 *   Gemini gave one), in the user turn right after the calls;
 * - reasoning from other providers is dropped (Gemini cannot verify it).
 */
export function buildGeminiRequest(request: Request, model = ""): BuiltGeminiRequest {
  const warnings: ClientWarning[] = [];
  const settings = request.settings ?? {};
  const calls = new Map<string, ToolCallItem>();
  for (const item of request.items) if (item.type === "tool_call") calls.set(item.callId, item);

  const contents: Content[] = [];
  const system: string[] = [];
  if (request.system) system.push(request.system);
  let dropped = 0;

  // Which neutral call each functionCall / functionResponse part belongs to.
  const callIdOf = new Map<Part, string>();
  const push = (role: "user" | "model", part: Part): void => {
    const last = contents.at(-1);
    if (last && last.role === role) last.parts?.push(part);
    else contents.push({ role, parts: [part] });
  };

  let leading = true;
  for (const item of request.items) {
    if (item.type !== "message" || item.role !== "system") leading = false;
    switch (item.type) {
      case "message":
        if (item.role === "system") {
          const text = textOf(item.content);
          if (leading) system.push(text);
          else if (text !== "") push("user", { text: systemReminder(text) });
        } else if (item.role === "assistant") {
          const signature = stringField(item.providerData, THOUGHT_SIGNATURE);
          const text = textOf(item.content);
          if (text === "" && signature === undefined) break;
          push("model", signature === undefined ? { text } : { text, thoughtSignature: signature });
        } else {
          for (const part of item.content) push("user", userPart(part));
        }
        break;
      case "tool_call": {
        const id = stringField(item.providerData, FUNCTION_CALL_ID);
        const signature = stringField(item.providerData, THOUGHT_SIGNATURE);
        const part: Part = {
          functionCall: { ...(id === undefined ? {} : { id }), name: item.name, args: parseArgs(item) },
          ...(signature === undefined ? {} : { thoughtSignature: signature }),
        };
        callIdOf.set(part, item.callId);
        push("model", part);
        break;
      }
      case "tool_result": {
        const call = calls.get(item.callId);
        const name = item.name ?? call?.name;
        if (name === undefined) {
          throw new LlmError(
            "invalid_request",
            `tool result ${item.callId} has no name and no matching tool_call in the history; Gemini pairs function responses by name: set ToolResultItem.name`,
            { provider: "gemini", retryable: false },
          );
        }
        const id = call ? stringField(call.providerData, FUNCTION_CALL_ID) : undefined;
        const images = item.images ?? [];
        const inline = images.length > 0 && acceptsToolResultImages("gemini", model);
        const output =
          images.length > 0 && !inline
            ? `${item.output}\n${omittedToolResultImages(images.length, "gemini", model)}`
            : item.output;
        const part: Part = {
          functionResponse: {
            ...(id === undefined ? {} : { id }),
            name,
            response: item.isError ? { error: output } : { output },
            ...(inline
              ? {
                  parts: images.flatMap((p) =>
                    p.data === undefined ? [] : [{ inlineData: { mimeType: p.mediaType, data: p.data } }],
                  ),
                }
              : {}),
          },
        };
        callIdOf.set(part, item.callId);
        push("user", part);
        break;
      }
      case "reasoning": {
        const signature = stringField(item.providerData, THOUGHT_SIGNATURE);
        if (item.provider !== "gemini" || signature === undefined) {
          dropped++;
          break;
        }
        push("model", { text: item.text, thought: true, thoughtSignature: signature });
        break;
      }
      case "server_tool":
        // Gemini takes no search back: the grounded answer's text carries what it found.
        break;
    }
  }
  // Without ids Gemini matches responses to calls by position: answer in call order.
  for (let i = 1; i < contents.length; i++) {
    const calls = (contents[i - 1]?.parts ?? []).filter((p) => p.functionCall !== undefined);
    const parts = contents[i]?.parts;
    if (calls.length < 2 || !parts) continue;
    const order = new Map(calls.map((p, n) => [callIdOf.get(p), n]));
    const rank = (p: Part) =>
      p.functionResponse ? (order.get(callIdOf.get(p)) ?? calls.length) : calls.length + 1;
    parts.sort((a, b) => rank(a) - rank(b));
  }
  // Gemini 3 rejects a call turn whose first function call has no signature.
  // Calls made by another provider have none: Google documents this
  // placeholder for histories that were not produced by Gemini.
  for (const content of contents) {
    if (content.role !== "model") continue;
    const first = content.parts?.find((part) => part.functionCall !== undefined);
    if (first && first.thoughtSignature === undefined) first.thoughtSignature = FOREIGN_CALL_SIGNATURE;
  }
  if (dropped > 0) {
    warnings.push({
      code: "dropped_reasoning",
      message: `${dropped} reasoning item(s) without a Gemini thought signature were not sent`,
      detail: { count: dropped },
    });
  }

  const config: GenerateContentConfig = {};
  if (system.length > 0) config.systemInstruction = system.join("\n\n");
  const declarations: FunctionDeclaration[] = [...(request.tools ?? [])]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((spec) => ({
      name: spec.name,
      description: spec.description,
      parametersJsonSchema: spec.parameters,
    }));
  const tools: Tool[] = [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  // Built-in tools (googleSearch, codeExecution, ...) are passed over verbatim.
  for (const serverTool of request.serverTools ?? []) tools.push(serverTool as Tool);
  if (tools.length > 0) config.tools = tools;
  if (settings.maxTokens !== undefined) config.maxOutputTokens = settings.maxTokens;
  if (settings.temperature !== undefined) config.temperature = settings.temperature;
  if (settings.topP !== undefined) config.topP = settings.topP;
  if (settings.stopSequences !== undefined && settings.stopSequences.length > 0) {
    config.stopSequences = settings.stopSequences;
  }
  const reasoning = settings.reasoning;
  if (reasoning?.budgetTokens !== undefined) {
    config.thinkingConfig = { thinkingBudget: reasoning.budgetTokens, includeThoughts: true };
  } else if (reasoning?.effort !== undefined) {
    config.thinkingConfig = {
      thinkingLevel: reasoning.effort.toUpperCase() as ThinkingLevel,
      includeThoughts: true,
    };
  }
  if (settings.parallelToolCalls !== undefined) {
    warnings.push({
      code: "unsupported_setting",
      message: "Gemini has no switch for parallel tool calls; parallelToolCalls was not sent",
      detail: { setting: "parallelToolCalls" },
    });
  }
  return { contents, config, warnings };
}

function parseArgs(item: ToolCallItem): Record<string, unknown> {
  if (item.arguments.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(item.arguments);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new LlmError(
    "invalid_request",
    `tool call ${item.callId} (${item.name}) has arguments that are not a JSON object; Gemini needs an object: ${item.arguments.slice(0, 200)}`,
    { provider: "gemini", retryable: false },
  );
}

function userPart(part: ContentPart): Part {
  if (part.type === "text") return { text: part.text };
  if (part.data !== undefined) return { inlineData: { mimeType: part.mediaType, data: part.data } };
  return { fileData: { mimeType: part.mediaType, fileUri: part.url ?? "" } };
}

function textOf(parts: ContentPart[]): string {
  let text = "";
  for (const part of parts) if (part.type === "text") text += part.text;
  return text;
}

function stringField(data: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return typeof value === "string" ? value : undefined;
}
