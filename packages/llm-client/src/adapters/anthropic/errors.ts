/**
 * Anthropic's errors as data: the error types of its bodies and `error`
 * stream events. The classifier in ../classify.ts reads the table.
 */
import { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { LlmError } from "../../errors.ts";
import { classifySdkError, type ErrorTable } from "../classify.ts";

export const ANTHROPIC_ERRORS: ErrorTable = {
  provider: "anthropic",
  byType: {
    invalid_request_error: "invalid_request",
    authentication_error: "auth",
    permission_error: "auth",
    billing_error: "auth",
    not_found_error: "invalid_request",
    request_too_large: "context_overflow",
    rate_limit_error: "rate_limit",
    api_error: "server",
    overloaded_error: "overloaded",
    timeout_error: "timeout",
  },
  hints: { auth: "check ANTHROPIC_API_KEY" },
};

/**
 * `inStream`: the error happened while reading an open stream (an `error`
 * SSE event, a torn connection, a malformed payload) rather than on the
 * request itself.
 */
export function classifyAnthropicError(error: unknown, context: { inStream?: boolean } = {}): LlmError {
  return classifySdkError(
    ANTHROPIC_ERRORS,
    { APIError, APIConnectionError, APIUserAbortError },
    error,
    context,
  );
}
