import { type GenerateContentResponse, GoogleGenAI } from "@google/genai";
import { retryAfterFromHeaders } from "../../retry.ts";
import type { AdapterFactory, ProviderAdapter } from "../adapter.ts";
import { missingKeyError } from "../sdk-client.ts";
import { abortFailure } from "../stream-end.ts";
import { classifyGeminiError } from "./errors.ts";
import { buildGeminiRequest } from "./request.ts";
import { normalizeGeminiStream } from "./stream.ts";

export { buildGeminiRequest } from "./request.ts";

/**
 * Gemini adapter on `@google/genai` (`models.generateContentStream`, SSE).
 *
 * The SDK's HTTP retries and its automatic stream continuation are off: the
 * client's retry policy owns retries, and a cut stream must surface as
 * `incomplete_stream`. The API key comes from `options.apiKey`, else
 * `GEMINI_API_KEY` / `GOOGLE_API_KEY`.
 */
export const createGeminiAdapter: AdapterFactory = (options): ProviderAdapter => {
  let client: GoogleGenAI | undefined;
  const sdk = (): GoogleGenAI => {
    if (client) return client;
    const apiKey = options.apiKey ?? process.env.GEMINI_API_KEY ?? process.env.GOOGLE_API_KEY;
    if (!apiKey) throw missingKeyError("gemini", "GEMINI_API_KEY");
    client = new GoogleGenAI({
      apiKey,
      httpOptions: {
        ...(options.baseURL === undefined ? {} : { baseUrl: options.baseURL }),
        ...(options.headers === undefined ? {} : { headers: options.headers }),
      },
    });
    return client;
  };

  return {
    async open(request, signal, warn = options.onWarning) {
      const ai = sdk();
      const { contents, config, warnings } = buildGeminiRequest(request, options.model);
      for (const warning of warnings) warn?.(warning);
      // The SDK's ApiError drops headers; keep the retry-after of an error response.
      let retryAfterMs: number | undefined;
      const fetchWithHeaders: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (!response.ok) retryAfterMs = retryAfterFromHeaders(response.headers);
        return response;
      };
      let stream: AsyncGenerator<GenerateContentResponse>;
      try {
        stream = await ai.models.generateContentStream({
          model: options.model,
          contents,
          config: {
            ...config,
            abortSignal: signal,
            automaticContinuation: false,
            automaticFunctionCalling: { disable: true },
            httpOptions: { fetch: fetchWithHeaders },
          },
        });
      } catch (error) {
        throw abortFailure(signal) ?? classifyGeminiError(error, { retryAfterHeaderMs: retryAfterMs });
      }
      return normalizeGeminiStream(stream, {
        signal,
        retryAfterMs: () => retryAfterMs,
      });
    },
  };
};
