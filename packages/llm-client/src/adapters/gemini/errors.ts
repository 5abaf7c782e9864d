import { ApiError } from "@google/genai";
import { LlmError, type LlmErrorCode } from "../../errors.ts";
import { isContextOverflowMessage, redactSecrets } from "../classify.ts";

const PROVIDER = "gemini";

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

/** `"12s"` / `"1.5s"` (google.rpc.RetryInfo) in milliseconds. */
function retryDelayMs(body: GoogleErrorBody | undefined): number | undefined {
  for (const detail of body?.error?.details ?? []) {
    if (typeof detail.retryDelay === "string") {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
      if (match?.[1]) return Math.round(Number(match[1]) * 1000);
    }
  }
  return undefined;
}

function codeFor(status: number, body: GoogleErrorBody | undefined, message: string): LlmErrorCode {
  const googleStatus = body?.error?.status;
  const reasons = (body?.error?.details ?? []).map((d) => d.reason);
  if (
    reasons.includes("API_KEY_INVALID") ||
    status === 401 ||
    status === 403 ||
    googleStatus === "UNAUTHENTICATED"
  ) {
    return "auth";
  }
  if (
    isContextOverflowMessage(message) ||
    /input token count|exceeds the maximum number of tokens/i.test(message)
  ) {
    return "context_overflow";
  }
  if (status === 429 || googleStatus === "RESOURCE_EXHAUSTED") return "rate_limit";
  // 529 is not Gemini's own, but gateways in front of it use it for "overloaded", as Anthropic does.
  if (status === 503 || status === 529 || googleStatus === "UNAVAILABLE") return "overloaded";
  if (status === 504 || googleStatus === "DEADLINE_EXCEEDED") return "timeout";
  if (status === 408) return "timeout";
  if (status >= 500) return "server";
  return "invalid_request";
}

/**
 * Classifies anything `@google/genai` throws into an `LlmError`.
 * `retryAfterMs` comes from the response's `retry-after` header (captured by
 * the adapter's fetch wrapper) or the body's RetryInfo.
 */
export function classifyGeminiError(
  error: unknown,
  signal?: AbortSignal,
  retryAfterHeaderMs?: number,
): LlmError {
  if (error instanceof LlmError) return error;
  if (signal?.aborted || (error instanceof Error && error.name === "AbortError")) {
    return new LlmError("aborted", "the request was aborted", { provider: PROVIDER, cause: error });
  }
  if (error instanceof ApiError) {
    const body = parseBody(error.message);
    const detail = redactSecrets(body?.error?.message ?? error.message).replace(
      /AIza[0-9A-Za-z_-]{20,}/g,
      "AIza***",
    );
    const code = codeFor(error.status, body, detail);
    const retryAfterMs = retryAfterHeaderMs ?? retryDelayMs(body);
    const hint =
      code === "auth"
        ? " (check GEMINI_API_KEY / GOOGLE_API_KEY)"
        : code === "context_overflow"
          ? " (shorten the history)"
          : "";
    return new LlmError(code, `Gemini ${error.status} error: ${detail}${hint}`, {
      provider: PROVIDER,
      status: error.status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      cause: error,
    });
  }
  if (
    error instanceof SyntaxError ||
    (error instanceof Error && /exception parsing stream chunk|Incomplete JSON segment/.test(error.message))
  ) {
    return new LlmError(
      "parse",
      `the Gemini stream held a payload that is not valid JSON: ${(error as Error).message}`,
      {
        provider: PROVIDER,
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const causeText = cause instanceof Error ? ` (${cause.message})` : "";
  return new LlmError("network", `the Gemini request failed: ${message}${causeText}`, {
    provider: PROVIDER,
    cause: error,
  });
}

/** Parses `retry-after` (seconds or HTTP date) in milliseconds. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Classifies a failure while reading an open stream: an error chunk (an
 * ApiError) keeps its code, a payload that is not JSON is `parse`, a body
 * that ends inside an event or a torn connection is `incomplete_stream`.
 */
export function classifyGeminiStreamFailure(
  error: unknown,
  signal: AbortSignal,
  retryAfterMs?: number,
): LlmError {
  if (error instanceof LlmError || error instanceof ApiError)
    return classifyGeminiError(error, signal, retryAfterMs);
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SyntaxError || /exception parsing stream chunk/.test(message)) {
    return classifyGeminiError(error, signal);
  }
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const causeText = cause instanceof Error ? ` (${cause.message})` : "";
  return new LlmError(
    "incomplete_stream",
    `the Gemini stream broke before its finishReason: ${message}${causeText}`,
    { provider: PROVIDER, cause: error },
  );
}
