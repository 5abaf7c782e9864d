/**
 * What every adapter asks of the provider SDK it wraps: the same client
 * options (retries off, since the client's policy owns them; a base URL
 * and extra headers passed through) and the same error when no key is
 * found.
 */
import { LlmError } from "../errors.ts";
import type { ClientOptions } from "../request.ts";

/** The options of a Stainless SDK client (`openai`, `@anthropic-ai/sdk`) that yoi sets alike. */
export function stainlessClientOptions(options: ClientOptions): {
  baseURL?: string;
  defaultHeaders?: Record<string, string>;
  maxRetries: 0;
  timeout: number;
} {
  return {
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
    maxRetries: 0,
    // The client's first-event and idle timeouts apply; this only bounds a hung connect.
    timeout: 10 * 60_000,
  };
}

/** The error of a call with no API key: not retryable, and it names where a key goes. */
export function missingKeyError(provider: string, variable: string): LlmError {
  return new LlmError("auth", `${provider}: no API key; pass apiKey to createClient or set ${variable}`, {
    provider,
    retryable: false,
  });
}
