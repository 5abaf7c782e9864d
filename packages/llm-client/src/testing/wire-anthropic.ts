import {
  chunkText,
  type ScriptedToolCall,
  type ScriptedTurnOptions,
  type WireFormat,
} from "./wire-format.ts";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/**
 * The Anthropic Messages wire: builds `message_start` ... `message_stop`
 * payloads, validates request bodies the way the API does, and shapes
 * errors as `{ type: "error", error: { type, message } }`.
 */
export const anthropicWire: WireFormat = {
  provider: "anthropic",

  response(text: string, toolCalls: ScriptedToolCall[] = [], options: ScriptedTurnOptions = {}): string[] {
    const size = options.chunkSize ?? 16;
    const usage = options.usage ?? {};
    const cacheRead = usage.cacheReadTokens ?? 0;
    // Anthropic's input_tokens excludes cached tokens; the script gives our convention (cached included).
    const input = Math.max(0, (usage.inputTokens ?? 10) - cacheRead);
    const lines: unknown[] = [
      {
        type: "message_start",
        message: {
          id: "msg_scripted",
          type: "message",
          role: "assistant",
          model: "claude-scripted",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: input,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cacheRead,
            output_tokens: 1,
          },
        },
      },
    ];
    let index = 0;
    if (options.thinking !== undefined) {
      lines.push({
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      });
      for (const piece of chunkText(options.thinking, size)) {
        lines.push({
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: piece },
        });
      }
      lines.push({
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: "sig-scripted" },
      });
      lines.push({ type: "content_block_stop", index });
      index++;
    }
    if (text !== "") {
      lines.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const piece of chunkText(text, size)) {
        lines.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
      }
      lines.push({ type: "content_block_stop", index });
      index++;
    }
    for (const call of toolCalls) {
      lines.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      });
      const json = Object.keys(call.arguments).length === 0 ? "" : JSON.stringify(call.arguments);
      lines.push({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: "" },
      });
      for (const piece of chunkText(json, size)) {
        lines.push({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        });
      }
      lines.push({ type: "content_block_stop", index });
      index++;
    }
    lines.push({
      type: "message_delta",
      delta: { stop_reason: toolCalls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.outputTokens ?? 5 },
    });
    lines.push({ type: "message_stop" });
    return lines.map((l) => JSON.stringify(l));
  },

  validate(body: unknown): string | undefined {
    if (body === null || typeof body !== "object") return "the request body must be a JSON object";
    const b = body as { model?: unknown; max_tokens?: unknown; messages?: unknown; tools?: unknown };
    if (typeof b.model !== "string" || b.model === "") return "model: Field required";
    if (typeof b.max_tokens !== "number") return "max_tokens: Field required";
    if (!Array.isArray(b.messages) || b.messages.length === 0)
      return "messages: at least one message is required";
    let breakpoints = 0;
    const countCache = (block: unknown) => {
      if (block && typeof block === "object" && "cache_control" in block) breakpoints++;
    };
    const system = (body as { system?: unknown }).system;
    if (Array.isArray(system)) system.forEach(countCache);
    if (Array.isArray(b.tools)) {
      for (const [i, tool] of (b.tools as { name?: unknown }[]).entries()) {
        countCache(tool);
        if (typeof tool.name === "string" && !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) {
          return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
        }
      }
    }
    let previousToolUses: string[] = [];
    for (const [i, raw] of (b.messages as unknown[]).entries()) {
      const message = raw as { role?: unknown; content?: unknown };
      if (message.role !== "user" && message.role !== "assistant") {
        return `messages.${i}.role: Input should be 'user' or 'assistant'`;
      }
      const content =
        typeof message.content === "string"
          ? [{ type: "text", text: message.content }]
          : (message.content as unknown[]);
      if (!Array.isArray(content) || content.length === 0) return `messages.${i}: content must be non-empty`;
      const toolUses: string[] = [];
      const answered = new Set<string>();
      // A server tool's call and its result block travel together in the same assistant message.
      const serverUses = new Set<string>();
      let seenOther = false;
      for (const [j, rawBlock] of content.entries()) {
        const block = rawBlock as { type?: unknown; text?: unknown; id?: unknown; tool_use_id?: unknown };
        countCache(block);
        if (block.type === "server_tool_use") {
          if (message.role !== "assistant")
            return `messages.${i}.content.${j}: server_tool_use blocks are only allowed in assistant messages`;
          serverUses.add(String(block.id));
        } else if (
          typeof block.type === "string" &&
          block.type !== "tool_result" &&
          block.type.endsWith("_tool_result")
        ) {
          const id = String(block.tool_use_id);
          if (!serverUses.delete(id))
            return `messages.${i}.content.${j}: ${block.type} block with tool_use_id ${id} has no server_tool_use block before it in the same message`;
        }
        if (block.type === "text" && (typeof block.text !== "string" || block.text === "")) {
          return `messages.${i}.content.${j}: text content blocks must be non-empty`;
        }
        if (block.type === "tool_use") {
          if (message.role !== "assistant")
            return `messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`;
          toolUses.push(String(block.id));
        }
        if (block.type === "tool_result") {
          if (message.role !== "user")
            return `messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`;
          if (seenOther) {
            return `messages.${i}: tool_result blocks must come before any other content in the user message`;
          }
          const id = String(block.tool_use_id);
          if (!previousToolUses.includes(id)) {
            return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
          }
          answered.add(id);
        } else {
          seenOther = true;
        }
      }
      if (serverUses.size > 0)
        return `messages.${i}: server_tool_use ids were found without their result blocks after them: ${[...serverUses].join(", ")}`;
      if (previousToolUses.length > 0) {
        const missing = previousToolUses.filter((id) => !answered.has(id));
        if (missing.length > 0) {
          return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
        }
      }
      previousToolUses = toolUses;
    }
    if (previousToolUses.length > 0) {
      return `messages: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${previousToolUses.join(", ")}`;
    }
    if (breakpoints > 4)
      return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
    return undefined;
  },

  errorBody(status: number, message: string): unknown {
    const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message }, request_id: "req_scripted" };
  },
};
