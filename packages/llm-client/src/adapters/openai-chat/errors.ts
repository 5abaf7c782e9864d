/**
 * OpenAI's error codes as data, shared by the Chat Completions and
 * Responses adapters (and the compatible servers that copy them). The
 * classifier in ../classify.ts reads the table.
 */
import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { LlmError } from "../../errors.ts";
import { classifySdkError, type ErrorTable } from "../classify.ts";

const OPENAI_TYPES: ErrorTable["byType"] = {
  context_length_exceeded: "context_overflow",
  rate_limit_exceeded: "rate_limit",
  insufficient_quota: "rate_limit",
  server_error: "server",
  internal_error: "server",
  server_is_overloaded: "overloaded",
  slow_down: "overloaded",
  invalid_api_key: "auth",
  invalid_authentication: "auth",
  invalid_prompt: "invalid_request",
  invalid_request_error: "invalid_request",
  invalid_value: "invalid_request",
};

const PERMANENT = { insufficient_quota: "quota exhausted: check the plan and billing of this API key" };

/** The table of one OpenAI-API provider (`openai-chat` or `openai-responses`). */
export function openAIErrorTable(provider: "openai-chat" | "openai-responses"): ErrorTable {
  return {
    provider,
    byType: OPENAI_TYPES,
    permanent: PERMANENT,
    overflow: [/context window|exceeds the context/i],
    hints: { auth: "check OPENAI_API_KEY" },
  };
}

const CHAT = openAIErrorTable("openai-chat");

/** Classifies anything the OpenAI SDK raises with `table` (`inStream`: while reading an open stream). */
export function classifyOpenAIApiError(
  table: ErrorTable,
  error: unknown,
  context: { inStream?: boolean } = {},
): LlmError {
  return classifySdkError(table, { APIError, APIConnectionError, APIUserAbortError }, error, context);
}

export function classifyOpenAIChatError(error: unknown, context: { inStream?: boolean } = {}): LlmError {
  return classifyOpenAIApiError(CHAT, error, context);
}
