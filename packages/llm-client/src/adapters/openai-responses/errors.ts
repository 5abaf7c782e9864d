import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { LlmError, type LlmErrorCode } from "../../errors.ts";
import { isContextOverflowMessage, redactSecrets } from "../classify.ts";

const PROVIDER = "openai-responses";

/** Error codes OpenAI puts in a body or a stream `error` event, mapped once here. */
function codeFromOpenAICode(code: string | null | undefined, message: string): LlmErrorCode | undefined {
  switch (code) {
    case "context_length_exceeded":
      return "context_overflow";
    case "rate_limit_exceeded":
    case "insufficient_quota":
      return "rate_limit";
    case "server_error":
    case "internal_error":
      return "server";
    case "server_is_overloaded":
    case "slow_down":
      return "overloaded";
    case "invalid_api_key":
    case "invalid_authentication":
      return "auth";
    case "invalid_prompt":
    case "invalid_request_error":
    case "invalid_value":
      return "invalid_request";
    default:
      break;
  }
  if (isContextOverflowMessage(message) || /context window|exceeds the context/i.test(message)) {
    return "context_overflow";
  }
  return undefined;
}

function codeFromStatus(status: number): LlmErrorCode {
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "timeout";
  if (status === 413) return "context_overflow";
  if (status === 429) return "rate_limit";
  if (status === 503 || status === 529) return "overloaded";
  if (status >= 500) return "server";
  return "invalid_request";
}

/** `retry-after-ms`, then `retry-after` (seconds or an HTTP date), in milliseconds. */
export function retryAfterFromHeaders(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null) {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - Date.now());
}

/** Classifies anything the OpenAI SDK throws into an `LlmError`. */
export function classifyOpenAIError(error: unknown, signal?: AbortSignal): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof APIUserAbortError || (signal?.aborted && isAbortLike(error))) {
    return new LlmError("aborted", "the request was aborted", { provider: PROVIDER, cause: error });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError("timeout", "the OpenAI request timed out before the response headers arrived", {
      provider: PROVIDER,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    return new LlmError("network", `could not reach the OpenAI API: ${causeMessage(error)}`, {
      provider: PROVIDER,
      cause: error,
    });
  }
  if (error instanceof APIError) {
    const message = apiErrorMessage(error);
    const status = error.status;
    const byCode = codeFromOpenAICode(error.code ?? error.type, message);
    let code = byCode ?? (status === undefined ? "server" : codeFromStatus(status));
    // A 503/529 body often says only `server_error`: the status is the more precise word.
    if (code === "server" && (status === 503 || status === 529)) code = "overloaded";
    // A quota error will not clear up by waiting: fail at once with what to do.
    const quota = error.code === "insufficient_quota";
    const text = quota ? `${message} (quota exhausted: check the plan and billing of this API key)` : message;
    return new LlmError(code, `OpenAI ${status ?? "stream"} error: ${text}`, {
      provider: PROVIDER,
      status,
      retryAfterMs: retryAfterFromHeaders(error.headers),
      ...(quota ? { retryable: false } : {}),
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new LlmError(
      "parse",
      `the OpenAI stream held a payload that is not valid JSON: ${error.message}`,
      {
        provider: PROVIDER,
        cause: error,
      },
    );
  }
  if (isAbortLike(error)) {
    return new LlmError("aborted", "the request was aborted", { provider: PROVIDER, cause: error });
  }
  return new LlmError("network", `the OpenAI stream failed: ${causeMessage(error)}`, {
    provider: PROVIDER,
    cause: error,
  });
}

/** Classifies the `error` object of a `response.failed` event or an `error` stream event. */
export function classifyStreamError(
  error: { code?: string | null; message?: string } | null | undefined,
): LlmError {
  const message = redactSecrets(error?.message ?? "the response failed without details");
  const code = codeFromOpenAICode(error?.code, message) ?? "server";
  const quota = error?.code === "insufficient_quota";
  return new LlmError(code, `OpenAI response failed (${error?.code ?? "unknown"}): ${message}`, {
    provider: PROVIDER,
    ...(quota ? { retryable: false } : {}),
  });
}

function apiErrorMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return redactSecrets(body && typeof body.message === "string" ? body.message : error.message);
}

function causeMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message) return `${error.message} (${cause.message})`;
    return error.message;
  }
  return String(error);
}

function isAbortLike(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError");
}

/**
 * Classifies a failure while reading an open stream: an `error` event
 * (thrown by the SDK as an APIError) keeps its code, a payload that is not
 * JSON is `parse`, anything else means the connection broke mid-stream.
 */
export function classifyOpenAIStreamFailure(error: unknown, signal: AbortSignal): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof APIError && !(error instanceof APIConnectionError))
    return classifyOpenAIError(error, signal);
  if (error instanceof SyntaxError) return classifyOpenAIError(error, signal);
  return new LlmError(
    "incomplete_stream",
    `the OpenAI stream broke before its terminal event: ${causeMessage(error)}`,
    { provider: PROVIDER, cause: error },
  );
}
