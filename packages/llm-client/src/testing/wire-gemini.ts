import {
  chunkText,
  nextResponseNumber,
  type ScriptedToolCall,
  type ScriptedTurnOptions,
  type WireFormat,
} from "./wire-format.ts";

/**
 * Opaque stand-in for a Gemini thought signature: deterministic (`text:<text>`
 * for a text answer, `call:<name>:<args JSON>` for the first call), so tests
 * can look for it in the next request.
 */
export function scriptedThoughtSignature(seed: string): string {
  return `sig_${Buffer.from(seed, "utf8").toString("base64")}`;
}

interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: unknown };
  functionResponse?: { id?: string; name?: string; response?: unknown };
  inlineData?: unknown;
  fileData?: unknown;
}

interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/**
 * The Gemini wire (`:streamGenerateContent?alt=sse`, `data:` lines):
 * recorded-format builders like Gemini 3 streams them (function calls whole
 * in one chunk, no call ids, a thought signature on the first call or on a
 * final empty text part), request checks the real API makes, and its error body.
 */
export const geminiWire: WireFormat = {
  provider: "gemini",

  response(text: string, toolCalls: ScriptedToolCall[] = [], options: ScriptedTurnOptions = {}): string[] {
    const size = options.chunkSize ?? 16;
    const n = nextResponseNumber();
    const meta = { modelVersion: "gemini-scripted", responseId: `scripted_${n}` };
    const usage = options.usage ?? {};
    const thoughts =
      options.thinking === undefined ? undefined : Math.max(1, Math.ceil(options.thinking.length / 4));
    const usageMetadata = {
      promptTokenCount: usage.inputTokens ?? 10,
      candidatesTokenCount: Math.max(0, (usage.outputTokens ?? 5) - (thoughts ?? 0)),
      ...(usage.cacheReadTokens === undefined ? {} : { cachedContentTokenCount: usage.cacheReadTokens }),
      ...(thoughts === undefined ? {} : { thoughtsTokenCount: thoughts }),
      totalTokenCount: (usage.inputTokens ?? 10) + (usage.outputTokens ?? 5),
    };
    const lines: string[] = [];
    const chunk = (parts: GeminiPart[], finishReason?: string) =>
      lines.push(
        JSON.stringify({
          candidates: [
            { content: { parts, role: "model" }, ...(finishReason ? { finishReason } : {}), index: 0 },
          ],
          usageMetadata,
          ...meta,
        }),
      );
    if (options.thinking !== undefined) {
      for (const piece of chunkText(options.thinking, size)) chunk([{ text: piece, thought: true }]);
    }
    for (const piece of chunkText(text, size)) chunk([{ text: piece }]);
    if (toolCalls.length > 0) {
      const parts: GeminiPart[] = toolCalls.map((call, i) => ({
        functionCall: { name: call.name, args: call.arguments },
        ...(i === 0
          ? {
              thoughtSignature: scriptedThoughtSignature(
                `call:${call.name}:${JSON.stringify(call.arguments)}`,
              ),
            }
          : {}),
      }));
      chunk(parts);
      chunk([{ text: "" }], "STOP");
    } else {
      chunk([{ text: "", thoughtSignature: scriptedThoughtSignature(`text:${text}`) }], "STOP");
    }
    return lines;
  },

  validate(body: unknown): string | undefined {
    if (body === null || typeof body !== "object") return "Invalid JSON payload received.";
    const contents = (body as { contents?: unknown }).contents;
    if (!Array.isArray(contents) || contents.length === 0) {
      return "* GenerateContentRequest.contents: contents is not specified";
    }
    const list = contents as GeminiContent[];
    // The current turn starts after the last user content that is not only function responses.
    let turnStart = 0;
    for (let i = 0; i < list.length; i++) {
      const content = list[i];
      if (content?.role === "user" && (content.parts ?? []).some((p) => p.functionResponse === undefined)) {
        turnStart = i + 1;
      }
    }
    for (let i = 0; i < list.length; i++) {
      const content = list[i] ?? {};
      if (content.role !== "user" && content.role !== "model") {
        return `* GenerateContentRequest.contents[${i}].role: must be "user" or "model", got ${JSON.stringify(content.role)}`;
      }
      const parts = content.parts ?? [];
      if (parts.length === 0)
        return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
      const responses = parts.filter((p) => p.functionResponse !== undefined);
      if (content.role === "model" && responses.length > 0) {
        return `* GenerateContentRequest.contents[${i}]: a function response must be in a user turn.`;
      }
      const calls = parts.filter((p) => p.functionCall !== undefined);
      if (content.role === "user" && calls.length > 0) {
        return `* GenerateContentRequest.contents[${i}]: a function call must be in a model turn.`;
      }
      if (responses.length > 0) {
        const previous = list[i - 1];
        const previousCalls = (previous?.role === "model" ? (previous.parts ?? []) : []).filter(
          (p) => p.functionCall !== undefined,
        );
        if (previousCalls.length === 0) {
          return `Please ensure that function response turn comes immediately after a function call turn. (contents[${i}])`;
        }
        if (previousCalls.length !== responses.length) {
          return `Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn. (contents[${i}]: ${responses.length} responses for ${previousCalls.length} calls)`;
        }
        const names = previousCalls.map((p) => p.functionCall?.name).sort();
        const answered = responses.map((p) => p.functionResponse?.name).sort();
        if (names.join("\u0000") !== answered.join("\u0000")) {
          return `Function response names [${answered.join(", ")}] do not match the function calls [${names.join(", ")}] of the previous turn. (contents[${i}])`;
        }
        const ids = new Set(previousCalls.map((p) => p.functionCall?.id).filter((id) => id !== undefined));
        for (const response of responses) {
          const id = response.functionResponse?.id;
          if (id !== undefined && ids.size > 0 && !ids.has(id)) {
            return `Function response id ${id} answers no function call of the previous turn. (contents[${i}])`;
          }
        }
      }
      if (calls.length > 0) {
        const next = list[i + 1];
        if (next === undefined || !(next.parts ?? []).some((p) => p.functionResponse !== undefined)) {
          return `Please ensure that function call turn comes immediately before a function response turn. (contents[${i}])`;
        }
        if (i >= turnStart && calls[0]?.thoughtSignature === undefined) {
          return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. (contents[${i}].parts)`;
        }
      }
    }
    return undefined;
  },

  errorBody(status: number, message: string): unknown {
    return {
      error: {
        code: status,
        message,
        status: STATUS_NAMES[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION"),
      },
    };
  },
};
