import { YoiError } from "@yoi/manifest/errors";

/**
 * The one error type that crosses the llm-client boundary. Each adapter
 * classifies its SDK's errors once, into these codes; nothing else matches
 * message strings.
 */
export type LlmErrorCode =
  | "auth"
  | "rate_limit"
  | "overloaded"
  | "context_overflow"
  | "invalid_request"
  | "server"
  | "network"
  | "timeout"
  | "aborted"
  | "incomplete_stream"
  | "parse"
  | "content_filter"
  | "config"
  /** The provider's SDK (an optional peer dependency) is not installed: install it (the message says how). */
  | "missing_sdk";

export interface LlmErrorOptions {
  retryable?: boolean;
  status?: number;
  retryAfterMs?: number;
  resetAt?: number;
  /** For a `network` error: why no connection was made, in the system's words. */
  networkReason?: string;
  provider?: string;
  cause?: unknown;
}

/** A provider failure, classified; recognise it with `LlmError.isInstance`. */
export class LlmError extends YoiError<LlmErrorCode> {
  override readonly name = "LlmError";
  static override readonly marker: symbol = Symbol.for("yoi.error.LlmError");
  /** Whether the same request may succeed if sent again. */
  readonly retryable: boolean;
  /** HTTP status when the error came from a response. */
  readonly status: number | undefined;
  /** Server-requested delay before a retry, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /**
   * When the provider's rate limit resets (epoch milliseconds), set on a
   * `rate_limit` error the retry policy gave up on because the reset lies
   * beyond its budget: a caller may wait until then and send again.
   */
  readonly resetAt: number | undefined;
  /**
   * For a `network` error: why no connection was made, in the system's
   * words (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND
   * api.example.com`), so a caller can say it in its own sentence.
   */
  readonly networkReason: string | undefined;
  readonly provider: string | undefined;

  constructor(code: LlmErrorCode, message: string, options: LlmErrorOptions = {}) {
    super(code, message, { cause: options.cause });
    this.retryable = options.retryable ?? defaultRetryable(code);
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.resetAt = options.resetAt;
    this.networkReason = options.networkReason;
    this.provider = options.provider;
  }
}

function defaultRetryable(code: LlmErrorCode): boolean {
  switch (code) {
    case "rate_limit":
    case "overloaded":
    case "server":
    case "network":
    case "timeout":
    case "incomplete_stream":
      return true;
    default:
      return false;
  }
}
