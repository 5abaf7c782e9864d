/**
 * OpenAI Chat Completions error classification (OpenAI and compatible
 * servers): the only place that reads their error codes and wording.
 */
import { APIConnectionError, APIUserAbortError } from "openai";
import { LlmError } from "../../errors.ts";
import {
  classifyApiError,
  classifyNoResponse,
  isContextOverflowMessage,
  isSdkApiError,
} from "../classify.ts";

export function classifyOpenAIChatError(error: unknown, context: { inStream?: boolean } = {}): LlmError {
  if (error instanceof LlmError) return error;
  if (isSdkApiError(error)) {
    // By class, not by `name`: the SDKs do not set `name` on every subclass.
    if (error instanceof APIUserAbortError)
      return new LlmError("aborted", "openai-chat: the request was aborted", { cause: error });
    if (error.status === undefined && error instanceof APIConnectionError) {
      return classifyNoResponse("openai-chat", error, context.inStream);
    }
    const apiCode = (error as { code?: unknown }).code;
    const classified = classifyApiError("openai-chat", error, (code, e) => {
      if (apiCode === "context_length_exceeded" || isContextOverflowMessage(e.message))
        return "context_overflow";
      if (apiCode === "rate_limit_exceeded") return "rate_limit";
      if (apiCode === "invalid_api_key") return "auth";
      return code;
    });
    // Out of credit is a 429 that no wait will fix.
    if (apiCode === "insufficient_quota") {
      return new LlmError("rate_limit", `${classified.message}; the account is out of quota`, {
        retryable: false,
        status: classified.status,
        provider: "openai-chat",
        cause: error,
      });
    }
    return classified;
  }
  return classifyNoResponse("openai-chat", error, context.inStream);
}
