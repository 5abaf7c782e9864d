/**
 * Gemini's errors as data: the google.rpc status names and reasons of its
 * error bodies. The classifier in ../classify.ts reads the table.
 */
import { ApiError } from "@google/genai";
import { LlmError } from "../../errors.ts";
import { abortedError, classifyNoResponse, classifyWithTable, type ErrorTable } from "../classify.ts";

export const GEMINI_ERRORS: ErrorTable = {
  provider: "gemini",
  byType: {
    API_KEY_INVALID: "auth",
    UNAUTHENTICATED: "auth",
    PERMISSION_DENIED: "auth",
    RESOURCE_EXHAUSTED: "rate_limit",
    UNAVAILABLE: "overloaded",
    DEADLINE_EXCEEDED: "timeout",
    INVALID_ARGUMENT: "invalid_request",
    NOT_FOUND: "invalid_request",
    INTERNAL: "server",
  },
  overflow: [/input token count|exceeds the maximum number of tokens/i],
  hints: { auth: "check GEMINI_API_KEY / GOOGLE_API_KEY", context_overflow: "shorten the history" },
};

interface GoogleErrorBody {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: { "@type"?: string; retryDelay?: string; reason?: string }[];
  };
}

/** What the SDK's error message holds: the JSON error body, sometimes after a prefix. */
function parseBody(message: string): GoogleErrorBody | undefined {
  const start = message.indexOf("{");
  if (start < 0) return undefined;
  try {
    return JSON.parse(message.slice(start)) as GoogleErrorBody;
  } catch {
    return undefined;
  }
}

/** `"12s"` / `"1.5s"` (google.rpc.RetryInfo) in milliseconds: Gemini's retry-after inside the body. */
function retryDelayMs(body: GoogleErrorBody | undefined): number | undefined {
  for (const detail of body?.error?.details ?? []) {
    if (typeof detail.retryDelay === "string") {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
      if (match?.[1]) return Math.round(Number(match[1]) * 1000);
    }
  }
  return undefined;
}

/**
 * Classifies anything `@google/genai` throws. `retryAfterHeaderMs` is the
 * error response's retry-after header (the SDK's ApiError drops headers; the
 * adapter's fetch wrapper keeps it), else the body's RetryInfo applies.
 * `inStream`: while reading an open stream.
 */
export function classifyGeminiError(
  error: unknown,
  context: { inStream?: boolean; retryAfterHeaderMs?: number | undefined } = {},
): LlmError {
  if (LlmError.isInstance(error)) return error;
  if (error instanceof Error && error.name === "AbortError") return abortedError("gemini", error);
  if (error instanceof ApiError) {
    const body = parseBody(error.message);
    return classifyWithTable(GEMINI_ERRORS, {
      status: error.status,
      types: [...(body?.error?.details ?? []).map((d) => d.reason), body?.error?.status],
      message: body?.error?.message ?? error.message,
      retryAfterMs: context.retryAfterHeaderMs ?? retryDelayMs(body),
      cause: error,
    });
  }
  // The SDK reports a chunk that is not JSON in its own words.
  if (
    error instanceof Error &&
    /exception parsing stream chunk|Incomplete JSON segment/.test(error.message)
  ) {
    return classifyNoResponse("gemini", new SyntaxError(error.message), true);
  }
  return classifyNoResponse("gemini", error, context.inStream);
}
