import {
  chunkText,
  nextResponseNumber,
  type ScriptedToolCall,
  type ScriptedTurnOptions,
  type WireFormat,
} from "./wire-format.ts";

/** Opaque stand-in for OpenAI's encrypted reasoning: deterministic, so tests can look for it in the next request. */
export function scriptedEncryptedContent(thinking: string): string {
  return `enc_${Buffer.from(thinking, "utf8").toString("base64")}`;
}

/**
 * The OpenAI Responses wire (`POST /v1/responses`, named SSE events):
 * recorded-format builders, request checks the real API makes, and its
 * error body.
 */
export const openAIResponsesWire: WireFormat = {
  provider: "openai-responses",

  response(text: string, toolCalls: ScriptedToolCall[] = [], options: ScriptedTurnOptions = {}): string[] {
    const size = options.chunkSize ?? 16;
    const n = nextResponseNumber();
    const id = `resp_scripted_${n}`;
    const model = "gpt-scripted";
    let seq = 0;
    const lines: string[] = [];
    const emit = (payload: Record<string, unknown>) =>
      lines.push(JSON.stringify({ ...payload, sequence_number: seq++ }));
    const base = { id, object: "response", created_at: 1_700_000_000 + n, model, store: false };
    emit({ type: "response.created", response: { ...base, status: "in_progress", output: [], usage: null } });
    emit({
      type: "response.in_progress",
      response: { ...base, status: "in_progress", output: [], usage: null },
    });

    const output: Record<string, unknown>[] = [];
    let outputIndex = 0;
    if (options.thinking !== undefined) {
      const itemId = `rs_scripted_${n}`;
      const encrypted = scriptedEncryptedContent(options.thinking);
      const oi = outputIndex++;
      emit({
        type: "response.output_item.added",
        output_index: oi,
        item: { id: itemId, type: "reasoning", summary: [], encrypted_content: encrypted },
      });
      emit({
        type: "response.reasoning_summary_part.added",
        item_id: itemId,
        output_index: oi,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      for (const delta of chunkText(options.thinking, size)) {
        emit({
          type: "response.reasoning_summary_text.delta",
          item_id: itemId,
          output_index: oi,
          summary_index: 0,
          delta,
        });
      }
      emit({
        type: "response.reasoning_summary_text.done",
        item_id: itemId,
        output_index: oi,
        summary_index: 0,
        text: options.thinking,
      });
      emit({
        type: "response.reasoning_summary_part.done",
        item_id: itemId,
        output_index: oi,
        summary_index: 0,
        part: { type: "summary_text", text: options.thinking },
      });
      const item = {
        id: itemId,
        type: "reasoning",
        summary: [{ type: "summary_text", text: options.thinking }],
        encrypted_content: encrypted,
      };
      output.push(item);
      emit({ type: "response.output_item.done", output_index: oi, item });
    }
    if (text !== "") {
      const itemId = `msg_scripted_${n}`;
      const oi = outputIndex++;
      emit({
        type: "response.output_item.added",
        output_index: oi,
        item: { id: itemId, type: "message", status: "in_progress", content: [], role: "assistant" },
      });
      const emptyPart = { type: "output_text", annotations: [], logprobs: [], text: "" };
      emit({
        type: "response.content_part.added",
        item_id: itemId,
        output_index: oi,
        content_index: 0,
        part: emptyPart,
      });
      for (const delta of chunkText(text, size)) {
        emit({
          type: "response.output_text.delta",
          item_id: itemId,
          output_index: oi,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      emit({
        type: "response.output_text.done",
        item_id: itemId,
        output_index: oi,
        content_index: 0,
        text,
        logprobs: [],
      });
      const part = { ...emptyPart, text };
      emit({ type: "response.content_part.done", item_id: itemId, output_index: oi, content_index: 0, part });
      const item = { id: itemId, type: "message", status: "completed", content: [part], role: "assistant" };
      output.push(item);
      emit({ type: "response.output_item.done", output_index: oi, item });
    }
    for (const call of toolCalls) {
      const itemId = `fc_scripted_${n}_${outputIndex}`;
      const oi = outputIndex++;
      const args = JSON.stringify(call.arguments);
      const added = {
        id: itemId,
        type: "function_call",
        status: "in_progress",
        arguments: "",
        call_id: call.id,
        name: call.name,
      };
      emit({ type: "response.output_item.added", output_index: oi, item: added });
      for (const delta of chunkText(args, size)) {
        emit({ type: "response.function_call_arguments.delta", item_id: itemId, output_index: oi, delta });
      }
      emit({
        type: "response.function_call_arguments.done",
        item_id: itemId,
        output_index: oi,
        arguments: args,
      });
      const item = { ...added, status: "completed", arguments: args };
      output.push(item);
      emit({ type: "response.output_item.done", output_index: oi, item });
    }
    const usage = options.usage ?? {};
    const input = usage.inputTokens ?? 10;
    const out = usage.outputTokens ?? 5;
    emit({
      type: "response.completed",
      response: {
        ...base,
        status: "completed",
        output,
        usage: {
          input_tokens: input,
          input_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
          output_tokens: out,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + out,
        },
      },
    });
    return lines;
  },

  validate(body: unknown): string | undefined {
    if (body === null || typeof body !== "object") return "the request body must be a JSON object";
    const request = body as { model?: unknown; input?: unknown };
    if (typeof request.model !== "string" || request.model === "")
      return "Missing required parameter: 'model'.";
    if (typeof request.input === "string") return undefined;
    if (!Array.isArray(request.input))
      return "Invalid type for 'input': expected a string or an array of input items.";
    const items = request.input as Record<string, unknown>[];
    const calls = new Map<string, string>();
    const answered = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      const item = items[i] ?? {};
      const type = item.type;
      const callId = typeof item.call_id === "string" ? item.call_id : undefined;
      if (type === "function_call" || type === "custom_tool_call") {
        if (callId === undefined) return `Missing required parameter: 'input[${i}].call_id'.`;
        if (type === "function_call" && typeof item.arguments === "string") {
          try {
            JSON.parse(item.arguments);
          } catch {
            return `Invalid 'input[${i}].arguments': the function call arguments are not valid JSON.`;
          }
        }
        calls.set(callId, type);
      } else if (type === "function_call_output" || type === "custom_tool_call_output") {
        const wanted = type === "function_call_output" ? "function_call" : "custom_tool_call";
        if (callId === undefined || calls.get(callId) !== wanted) {
          return `No tool call found for ${type === "function_call_output" ? "function call" : "custom tool call"} output with call_id ${callId}.`;
        }
        answered.add(callId);
      } else if (type === "reasoning") {
        if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") {
          return `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
        }
        if (i === items.length - 1) {
          return `Item '${String(item.id)}' of type 'reasoning' was provided without its required following item.`;
        }
      }
    }
    for (const callId of calls.keys()) {
      if (!answered.has(callId)) return `No tool output found for function call ${callId}.`;
    }
    return undefined;
  },

  errorBody(status: number, message: string): unknown {
    const [type, code] =
      status === 401
        ? ["invalid_request_error", "invalid_api_key"]
        : status === 429
          ? ["requests", "rate_limit_exceeded"]
          : status >= 500
            ? ["server_error", "server_error"]
            : ["invalid_request_error", null];
    return { error: { message, type, param: null, code } };
  },
};
