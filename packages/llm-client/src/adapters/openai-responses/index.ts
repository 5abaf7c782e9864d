import OpenAI from "openai";
import { findModelCapabilities } from "../../model-info.ts";
import type { AdapterFactory, ProviderAdapter } from "../adapter.ts";
import { isOpenAIHost } from "../openai-chat/request.ts";
import { missingKeyError, stainlessClientOptions } from "../sdk-client.ts";
import { abortFailure } from "../stream-end.ts";
import { classifyOpenAIError } from "./errors.ts";
import { buildResponsesRequest } from "./request.ts";
import { normalizeResponsesStream } from "./stream.ts";

export { buildResponsesRequest } from "./request.ts";

/**
 * OpenAI Responses API adapter on the official `openai` SDK.
 *
 * Every request is stateless (`store: false`) and asks for
 * `reasoning.encrypted_content`, so reasoning can be replayed from our own
 * history. The SDK's retries are off: the client's policy owns them.
 * The API key comes from `options.apiKey`, else `OPENAI_API_KEY`.
 */
export const createOpenAIResponsesAdapter: AdapterFactory = (options): ProviderAdapter => {
  let client: OpenAI | undefined;
  const capabilities = findModelCapabilities("openai-responses", options.model);
  // OpenAI takes system messages anywhere; a compatible server (another host) may not.
  const systemAnywhere =
    options.systemMessagesAnywhere ?? isOpenAIHost(options.baseURL ?? process.env.OPENAI_BASE_URL);
  const sdk = (): OpenAI => {
    if (client) return client;
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    if (!apiKey) throw missingKeyError("openai-responses", "OPENAI_API_KEY");
    client = new OpenAI({ apiKey, ...stainlessClientOptions(options) });
    return client;
  };

  return {
    async open(request, signal, warn = options.onWarning) {
      const openai = sdk();
      const { params, warnings } = buildResponsesRequest(options.model, request, capabilities, {
        systemMessagesAnywhere: systemAnywhere,
      });
      for (const warning of warnings) warn?.(warning);
      let stream: AsyncIterable<unknown>;
      try {
        // The SDK's stream (HTTP, SSE framing, JSON, in-stream `error` events), through the client's public
        // `post`, as the Chat Completions adapter does: `responses.create` encodes the body with a replacer function
        // called for every key and value of the request, about twice the cost of a plain JSON.stringify.
        stream = await openai.post<AsyncIterable<unknown>>("/responses", {
          body: params,
          stream: true,
          signal,
        });
      } catch (error) {
        throw abortFailure(signal) ?? classifyOpenAIError(error);
      }
      return normalizeResponsesStream(stream, { signal });
    },
  };
};
