import {
  chunkText,
  type ScriptedToolCall,
  type ScriptedTurnOptions,
  type WireFormat,
} from "./wire-format.ts";

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "invalid_request_error", code: "unsupported_country_region_territory" },
  404: { type: "invalid_request_error", code: "model_not_found" },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: null },
  503: { type: "server_error", code: null },
};

/**
 * The OpenAI Chat Completions wire: `chat.completion.chunk` payloads (the
 * framing adds `data: [DONE]`), request validation like the API's, and
 * errors as `{ error: { message, type, param, code } }`.
 */
export const openAIChatWire: WireFormat = {
  provider: "openai-chat",

  response(text: string, toolCalls: ScriptedToolCall[] = [], options: ScriptedTurnOptions = {}): string[] {
    const size = options.chunkSize ?? 16;
    const base = {
      id: "chatcmpl-scripted",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-scripted",
    };
    const chunk = (delta: unknown, finish: string | null = null) =>
      JSON.stringify({
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        usage: null,
      });
    const lines: string[] = [chunk({ role: "assistant", content: "", refusal: null })];
    if (options.thinking !== undefined) {
      for (const piece of chunkText(options.thinking, size)) lines.push(chunk({ reasoning_content: piece }));
    }
    for (const piece of chunkText(text, size)) lines.push(chunk({ content: piece }));
    toolCalls.forEach((call, index) => {
      lines.push(
        chunk({
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        }),
      );
      const json = Object.keys(call.arguments).length === 0 ? "" : JSON.stringify(call.arguments);
      for (const piece of chunkText(json, size)) {
        lines.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
    lines.push(chunk({}, toolCalls.length > 0 ? "tool_calls" : "stop"));
    const usage = options.usage ?? {};
    const prompt = usage.inputTokens ?? 10;
    const completion = usage.outputTokens ?? 5;
    lines.push(
      JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
          prompt_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
          completion_tokens_details: { reasoning_tokens: 0 },
        },
      }),
    );
    return lines;
  },

  validate(body: unknown): string | undefined {
    if (body === null || typeof body !== "object") return "We could not parse the JSON body of your request.";
    const b = body as { model?: unknown; messages?: unknown };
    if (typeof b.model !== "string" || b.model === "") return "you must provide a model parameter";
    if (!Array.isArray(b.messages) || b.messages.length === 0) {
      return "Invalid 'messages': empty array. Expected an array with minimum length 1.";
    }
    let pending: string[] = [];
    for (const [i, raw] of (b.messages as unknown[]).entries()) {
      const message = raw as {
        role?: unknown;
        content?: unknown;
        tool_calls?: unknown;
        tool_call_id?: unknown;
      };
      const role = message.role;
      if (!["system", "developer", "user", "assistant", "tool"].includes(String(role))) {
        return `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`;
      }
      if (role === "tool") {
        const id = String(message.tool_call_id);
        if (!pending.includes(id)) {
          return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages.[${i}], tool_call_id ${id})`;
        }
        pending = pending.filter((p) => p !== id);
        continue;
      }
      if (pending.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(", ")}`;
      }
      if (role === "assistant") {
        const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as { id?: unknown }[]) : [];
        if (
          (message.content === null || message.content === undefined || message.content === "") &&
          calls.length === 0
        ) {
          return `Invalid value for 'content' of messages.[${i}]: expected a string, got null.`;
        }
        pending = calls.map((c) => String(c.id));
      }
    }
    if (pending.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(", ")}`;
    }
    return undefined;
  },

  errorBody(status: number, message: string): unknown {
    const shape = ERROR_TYPES[status] ?? {
      type: status >= 500 ? "server_error" : "invalid_request_error",
      code: null,
    };
    return { error: { message, type: shape.type, param: null, code: shape.code } };
  },
};
