/**
 * Error classification shared by the adapters. Both official SDKs (Stainless
 * generated) raise errors of the same shape (`status`, `headers`, `error`
 * body), so the mapping from HTTP status to an {@link LlmErrorCode} lives
 * here once; each adapter adds what only its provider says (error types in
 * the body, context-overflow wording).
 */
import { LlmError, type LlmErrorCode } from "../errors.ts";
import type { ProviderKind } from "../item.ts";
import { retryAfterFromHeaders } from "../retry.ts";

/** The duck-typed shape of an SDK `APIError`. */
export interface SdkApiErrorLike {
  name?: string;
  message: string;
  status?: number;
  headers?: { get(name: string): string | null };
}

/** A failure without an HTTP answer: a torn stream when `inStream`, otherwise an unreachable server. */
export function classifyNoResponse(
  provider: ProviderKind,
  error: unknown,
  inStream: boolean | undefined,
): LlmError {
  return inStream ? classifyStreamFailure(provider, error) : classifyTransportFailure(provider, error);
}

export function isSdkApiError(value: unknown): value is SdkApiErrorLike & Error {
  return value instanceof Error && "status" in value && "headers" in value;
}

/** Code for an HTTP status (before provider-specific refinement). */
export function codeForStatus(status: number): LlmErrorCode {
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limit";
  if (status === 529 || status === 503) return "overloaded";
  if (status === 408) return "timeout";
  if (status === 409) return "server"; // lock/conflict: transient, the SDKs retry it too
  if (status >= 500) return "server";
  if (status === 413) return "invalid_request";
  return "invalid_request";
}

/**
 * Whether a provider's error message says the prompt does not fit the
 * context window. Covers Anthropic, OpenAI and the compatible servers
 * (vLLM, llama.cpp, Ollama, LM Studio) by their documented wording.
 */
export function isContextOverflowMessage(message: string): boolean {
  return CONTEXT_OVERFLOW.some((re) => re.test(message));
}

const CONTEXT_OVERFLOW: RegExp[] = [
  /prompt is too long/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /exceeds? (?:the )?(?:available )?context (?:size|window|length)/i,
  /context window (?:is )?exceeded/i,
  /too many tokens/i,
  /reduce the length of the messages/i,
  /input is too long/i,
];

/** Removes anything that looks like a credential before a message leaves the adapter. */
export function redactSecrets(message: string): string {
  return message
    .replace(/\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, "$1-***")
    .replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1***")
    .replace(/\b(x-api-key|api[_-]?key|authorization)(["']?\s*[:=]\s*["']?)[^\s"',}]{8,}/gi, "$1$2***");
}

/**
 * Classifies an HTTP error raised by an SDK. `refine` lets the adapter
 * override the code from the provider's error body.
 */
export function classifyApiError(
  provider: ProviderKind,
  error: SdkApiErrorLike,
  refine?: (code: LlmErrorCode, error: SdkApiErrorLike) => LlmErrorCode,
): LlmError {
  const status = error.status;
  let code: LlmErrorCode = status === undefined ? "server" : codeForStatus(status);
  if ((code === "invalid_request" || status === undefined) && isContextOverflowMessage(error.message)) {
    code = "context_overflow";
  }
  if (refine) code = refine(code, error);
  const retryAfterMs = retryAfterFromHeaders(error.headers);
  const where = status === undefined ? "" : ` (HTTP ${status})`;
  return new LlmError(code, `${provider}: ${redactSecrets(apiMessage(error))}${where}`, {
    status,
    retryAfterMs,
    provider,
    cause: error,
  });
}

/**
 * The provider's own words: the `message` of the error body (Anthropic's
 * SDK exposes it as `apiMessage`, OpenAI's keeps the body in `error`),
 * else the SDK message, which repeats the status and the raw body.
 */
function apiMessage(error: SdkApiErrorLike): string {
  const fromBody = (error as { apiMessage?: unknown }).apiMessage;
  if (typeof fromBody === "string" && fromBody !== "") return fromBody;
  const body = (error as { error?: unknown }).error;
  if (body && typeof body === "object") {
    const message = (body as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message;
    const nested = (body as { error?: { message?: unknown } }).error?.message;
    if (typeof nested === "string" && nested !== "") return nested;
  }
  return error.message;
}

/**
 * Classifies a failure that happened while reading an already-open stream:
 * a torn connection ends the stream early (`incomplete_stream`), a payload
 * that is not JSON is a `parse` error.
 */
export function classifyStreamFailure(provider: ProviderKind, error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof SyntaxError) {
    return new LlmError(
      "parse",
      `${provider}: the stream carried a payload that is not valid JSON (${error.message})`,
      {
        provider,
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError(
    "incomplete_stream",
    `${provider}: the connection broke before the stream ended (${message})`,
    {
      provider,
      cause: error,
    },
  );
}

/** Classifies a failure to get a response at all (DNS, refused, reset, TLS). */
export function classifyTransportFailure(provider: ProviderKind, error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return new LlmError(
    "network",
    `${provider}: could not reach the server (${redactSecrets(message + cause)})`,
    {
      provider,
      cause: error,
    },
  );
}
