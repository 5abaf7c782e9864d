import OpenAI from "openai";
import type { AdapterFactory, ProviderAdapter } from "../adapter.ts";
import { missingKeyError, stainlessClientOptions } from "../sdk-client.ts";
import { abortFailure } from "../stream-end.ts";
import { classifyOpenAIChatError } from "./errors.ts";
import { buildOpenAIChatRequest, ChatHistoryCache, isOpenAIHost } from "./request.ts";
import { normalizeOpenAIChatStream } from "./stream.ts";

export { buildOpenAIChatRequest, isOpenAIHost } from "./request.ts";

/**
 * OpenAI Chat Completions adapter on the `openai` SDK, for OpenAI and for
 * OpenAI-compatible servers (set `baseURL`, e.g. `http://localhost:11434/v1`
 * for Ollama). The key comes from `options.apiKey`, else `OPENAI_API_KEY`;
 * a compatible server needs none. SDK retries are off: the client's policy
 * owns them.
 */
export const createOpenAIChatAdapter: AdapterFactory = (options): ProviderAdapter => {
  // The SDK also reads OPENAI_BASE_URL: decide by the URL it will actually use.
  const openaiHost = isOpenAIHost(options.baseURL ?? process.env.OPENAI_BASE_URL);
  let client: OpenAI | undefined;
  const sdk = (): OpenAI => {
    if (client) return client;
    let apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    if (!apiKey) {
      if (openaiHost) throw missingKeyError("openai-chat", "OPENAI_API_KEY");
      // Local compatible servers take any key; the SDK insists on one.
      apiKey = "no-key";
    }
    client = new OpenAI({ apiKey, ...stainlessClientOptions(options) });
    return client;
  };

  // The messages of the history sent last: the next request converts and encodes only what was added since.
  const history = new ChatHistoryCache();

  return {
    async open(request, signal, warn = options.onWarning) {
      const openai = sdk();
      const { body, warnings } = buildOpenAIChatRequest(
        options.model,
        request,
        {
          openai: openaiHost,
          ...(options.systemMessagesAnywhere === undefined
            ? {}
            : { systemMessagesAnywhere: options.systemMessagesAnywhere }),
        },
        history,
      );
      for (const warning of warnings) warn?.(warning);
      let stream: AsyncIterable<unknown>;
      try {
        // The SDK's stream (HTTP, SSE framing, JSON, in-stream `error` events), through the client's public
        // `post` with the body already encoded: `chat.completions.create` would encode the whole history again
        // for every request, with a replacer function that the SDK calls for every key and value (to find the
        // `stream` flag). Auth, headers and errors are the same.
        stream = await openai.post<AsyncIterable<unknown>>("/chat/completions", {
          body,
          headers: { "content-type": "application/json" },
          stream: true,
          signal,
        });
      } catch (error) {
        throw abortFailure(signal) ?? classifyOpenAIChatError(error);
      }
      return normalizeOpenAIChatStream(stream, { signal });
    },
  };
};
