/**
 * Anthropic error classification: the only place that reads Anthropic's
 * error types and context-overflow wording.
 */
import { APIConnectionError, APIUserAbortError } from "@anthropic-ai/sdk";
import { LlmError, type LlmErrorCode } from "../../errors.ts";
import {
  classifyApiError,
  classifyNoResponse,
  isContextOverflowMessage,
  isSdkApiError,
} from "../classify.ts";

const BY_TYPE: Record<string, LlmErrorCode> = {
  invalid_request_error: "invalid_request",
  authentication_error: "auth",
  permission_error: "auth",
  billing_error: "auth",
  not_found_error: "invalid_request",
  request_too_large: "invalid_request",
  rate_limit_error: "rate_limit",
  api_error: "server",
  overloaded_error: "overloaded",
  timeout_error: "timeout",
};

/**
 * `inStream`: the error happened while reading an open stream (an `error`
 * SSE event, a torn connection, a malformed payload) rather than on the
 * request itself.
 */
export function classifyAnthropicError(error: unknown, context: { inStream?: boolean } = {}): LlmError {
  if (error instanceof LlmError) return error;
  if (isSdkApiError(error)) {
    // By class, not by `name`: the SDKs do not set `name` on every subclass.
    if (error instanceof APIUserAbortError)
      return new LlmError("aborted", "anthropic: the request was aborted", { cause: error });
    if (error.status === undefined && error instanceof APIConnectionError) {
      return classifyNoResponse("anthropic", error, context.inStream);
    }
    const type = (error as { type?: unknown }).type;
    return classifyApiError("anthropic", error, (code, e) => {
      if (isContextOverflowMessage(e.message)) return "context_overflow";
      if (
        typeof type === "string" &&
        BY_TYPE[type] !== undefined &&
        (e.status === undefined || code === "invalid_request")
      ) {
        return BY_TYPE[type]!;
      }
      return code;
    });
  }
  return classifyNoResponse("anthropic", error, context.inStream);
}
