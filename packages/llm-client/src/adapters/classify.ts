/**
 * The one error classifier. Each provider describes its errors as data (an
 * {@link ErrorTable}: the error types and codes its bodies carry); this file
 * reads them together with the HTTP status, the retry-after delay and the
 * context-overflow wording, the same way for every provider. The README's
 * error tables are checked against {@link STATUS_CODES} and the providers'
 * tables by test/error-table.test.ts.
 */

import { rootCauseMessage } from "@yoi/manifest/errors";
import { LlmError, type LlmErrorCode } from "../errors.ts";
import { redactSecrets } from "../redact.ts";
import { retryAfterFromHeaders } from "../retry.ts";

/** What a provider says about its errors, as data. */
export interface ErrorTable {
  /** Provider name used in messages (`anthropic`, `openai-chat`, ...). */
  provider: string;
  /**
   * Error types or codes from the provider's error body (`type`, `code`,
   * `status`, reasons) mapped to a code. A type wins over a generic status
   * (`invalid_request` for a 4xx, `server` for a 5xx), never over a
   * specific one (429, 503, 401...).
   */
  byType: Readonly<Record<string, LlmErrorCode>>;
  /** Types of errors no wait will fix (an exhausted quota): not retryable, with `hint` in the message. */
  permanent?: Readonly<Record<string, string>>;
  /** Provider wording for "the prompt does not fit", beyond the shared {@link CONTEXT_OVERFLOW}. */
  overflow?: readonly RegExp[];
  /** What to tell the user per code (appended to the message). */
  hints?: Readonly<Partial<Record<LlmErrorCode, string>>>;
}

/**
 * HTTP status to code, for every provider. A status not listed is `server`
 * from 500 up and `invalid_request` below. 413 (request too large) is a
 * context overflow: shrinking the history (compaction) is what helps.
 */
export const STATUS_CODES: Readonly<Record<number, LlmErrorCode>> = {
  400: "invalid_request",
  401: "auth",
  403: "auth",
  404: "invalid_request",
  408: "timeout",
  409: "server", // lock/conflict: transient, the SDKs retry it too
  413: "context_overflow",
  422: "invalid_request",
  429: "rate_limit",
  500: "server",
  502: "server",
  503: "overloaded",
  504: "timeout",
  529: "overloaded", // Anthropic's own; gateways in front of other providers use it too
};

/** Code for an HTTP status alone. */
export function codeForStatus(status: number): LlmErrorCode {
  return STATUS_CODES[status] ?? (status >= 500 ? "server" : "invalid_request");
}

/**
 * Context-overflow wording of Anthropic, OpenAI, Gemini and the compatible
 * servers (vLLM, llama.cpp, Ollama, LM Studio).
 */
export const CONTEXT_OVERFLOW: readonly RegExp[] = [
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

/** Whether a provider's error message says the prompt does not fit the context window. */
export function isContextOverflowMessage(message: string, extra: readonly RegExp[] = []): boolean {
  return CONTEXT_OVERFLOW.some((re) => re.test(message)) || extra.some((re) => re.test(message));
}

/** The facts of one provider error, read from whatever the SDK raised or the stream carried. */
export interface ProviderErrorInfo {
  /** HTTP status, when the error came with a response. */
  status?: number | undefined;
  /** Error types / codes / reasons from the body, most specific first. */
  types?: readonly (string | null | undefined)[];
  /** The provider's own words. */
  message: string;
  /** Server-requested delay (from {@link retryAfterFromHeaders} or a body field). */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

const GENERIC: ReadonlySet<LlmErrorCode> = new Set(["invalid_request", "server"]);

/** Classifies one provider error with the provider's table: the one classifier. */
export function classifyWithTable(table: ErrorTable, info: ProviderErrorInfo): LlmError {
  const { status } = info;
  const message = redactSecrets(info.message);
  const types = (info.types ?? []).filter((t): t is string => typeof t === "string" && t !== "");
  const byType = types.map((t) => table.byType[t]).find((c) => c !== undefined);
  let code: LlmErrorCode = status === undefined ? (byType ?? "server") : codeForStatus(status);
  if (status !== undefined && byType !== undefined && GENERIC.has(code)) code = byType;
  if ((GENERIC.has(code) || code === "context_overflow") && isContextOverflowMessage(message, table.overflow))
    code = "context_overflow";
  const permanent = types.map((t) => table.permanent?.[t]).find((h) => h !== undefined);
  const hint = permanent ?? table.hints?.[code];
  const where = status === undefined ? "" : ` (HTTP ${status})`;
  return new LlmError(code, `${table.provider}: ${message}${where}${hint ? ` (${hint})` : ""}`, {
    status,
    retryAfterMs: info.retryAfterMs,
    provider: table.provider,
    cause: info.cause,
    ...(permanent === undefined ? {} : { retryable: false }),
  });
}

/** The duck-typed shape of a Stainless SDK `APIError` (`openai`, `@anthropic-ai/sdk`). */
export interface SdkApiErrorLike {
  message: string;
  status?: number | undefined;
  headers?: { get(name: string): string | null } | undefined;
  error?: unknown;
  type?: unknown;
  code?: unknown;
  apiMessage?: unknown;
}

/**
 * The facts of a Stainless SDK `APIError`: the body's `message`
 * (Anthropic's SDK exposes it as `apiMessage`, OpenAI's keeps the body in
 * `error`), its type and code, the status and the retry-after headers.
 */
export function sdkErrorInfo(error: SdkApiErrorLike): ProviderErrorInfo {
  const body = (error.error ?? undefined) as
    | { message?: unknown; type?: unknown; code?: unknown; error?: { message?: unknown; type?: unknown } }
    | undefined;
  const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
  const message = str(error.apiMessage) ?? str(body?.message) ?? str(body?.error?.message) ?? error.message;
  return {
    status: error.status,
    types: [str(error.code), str(error.type), str(body?.code), str(body?.type), str(body?.error?.type)],
    message,
    retryAfterMs: retryAfterFromHeaders(error.headers),
    cause: error,
  };
}

/** A failure without an HTTP answer: a torn stream when `inStream`, otherwise an unreachable server. */
export function classifyNoResponse(
  provider: string,
  error: unknown,
  inStream: boolean | undefined,
): LlmError {
  return inStream ? classifyStreamFailure(provider, error) : classifyTransportFailure(provider, error);
}

/**
 * Classifies a failure that happened while reading an already-open stream:
 * a torn connection ends the stream early (`incomplete_stream`), a payload
 * that is not JSON is a `parse` error.
 */
export function classifyStreamFailure(provider: string, error: unknown): LlmError {
  if (LlmError.isInstance(error)) return error;
  if (error instanceof SyntaxError) {
    return new LlmError(
      "parse",
      `${provider}: the stream carried a payload that is not valid JSON (${redactSecrets(error.message)})`,
      { provider, cause: error },
    );
  }
  return new LlmError(
    "incomplete_stream",
    `${provider}: the connection broke before the stream ended (${redactSecrets(rootCauseMessage(error))})`,
    { provider, cause: error },
  );
}

/** The error classes a Stainless SDK exports (`openai` and `@anthropic-ai/sdk` each have their own). */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => SdkApiErrorLike;
  APIConnectionError: abstract new (...args: never[]) => unknown;
  APIUserAbortError: abstract new (...args: never[]) => unknown;
}

/**
 * Classifies anything a Stainless SDK raises: the user's abort is
 * `aborted`, an error with a response goes by `table`, and anything else
 * failed before a response came (or, `inStream`, while reading an open
 * stream: a torn connection, a malformed payload).
 */
export function classifySdkError(
  table: ErrorTable,
  sdk: SdkErrorClasses,
  error: unknown,
  context: { inStream?: boolean } = {},
): LlmError {
  if (LlmError.isInstance(error)) return error;
  // By class, not by `name`: the SDKs do not set `name` on every subclass.
  if (error instanceof sdk.APIUserAbortError) return abortedError(table.provider, error);
  if (error instanceof sdk.APIError && !(error instanceof sdk.APIConnectionError)) {
    return classifyWithTable(table, sdkErrorInfo(error));
  }
  return classifyNoResponse(table.provider, error, context.inStream);
}

/** Classifies a failure to get a response at all (DNS, refused, reset, TLS). */
export function classifyTransportFailure(provider: string, error: unknown): LlmError {
  if (LlmError.isInstance(error)) return error;
  const reason = rootCauseMessage(error);
  // fetch refuses the ports browsers block (6000, 10080, ...) before it connects, and says only "bad port".
  const badPort = reason === "bad port";
  const networkReason = badPort
    ? "bad port: fetch does not connect to this port, one of those browsers block; serve the API on another port"
    : redactSecrets(reason);
  return new LlmError("network", `${provider}: could not reach the server (${networkReason})`, {
    provider,
    networkReason,
    // Sending again cannot help: the port is refused every time.
    ...(badPort ? { retryable: false } : {}),
    cause: error,
  });
}

/** The request was cancelled by the caller. */
export function abortedError(provider: string, cause: unknown): LlmError {
  return new LlmError("aborted", `${provider}: the request was aborted`, { provider, cause });
}
