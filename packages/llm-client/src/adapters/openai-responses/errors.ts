/**
 * Responses API errors: the OpenAI table (../openai-chat/errors.ts) read by
 * the one classifier, plus the `error` object of a `response.failed` event.
 */
import type { LlmError } from "../../errors.ts";
import { classifyWithTable } from "../classify.ts";
import { classifyOpenAIApiError, openAIErrorTable } from "../openai-chat/errors.ts";

const TABLE = openAIErrorTable("openai-responses");

/** Classifies anything the OpenAI SDK raises (`inStream`: while reading an open stream). */
export function classifyOpenAIError(error: unknown, context: { inStream?: boolean } = {}): LlmError {
  return classifyOpenAIApiError(TABLE, error, context);
}

/** Classifies the `error` object of a `response.failed` event or an `error` stream event. */
export function classifyStreamError(
  error: { code?: string | null; message?: string } | null | undefined,
): LlmError {
  return classifyWithTable(TABLE, {
    types: [error?.code],
    message: `the response failed (${error?.code ?? "unknown"}): ${error?.message ?? "no details"}`,
  });
}
