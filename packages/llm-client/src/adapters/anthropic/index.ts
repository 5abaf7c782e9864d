import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { Messages } from "@anthropic-ai/sdk/resources/messages";
import type { AdapterFactory, ProviderAdapter } from "../adapter.ts";
import { missingKeyError, stainlessClientOptions } from "../sdk-client.ts";
import { abortFailure } from "../stream-end.ts";
import { classifyAnthropicError } from "./errors.ts";
import { buildAnthropicRequest } from "./request.ts";
import { normalizeAnthropicStream } from "./stream.ts";

export { ANTHROPIC_DEFAULT_MAX_TOKENS, buildAnthropicRequest } from "./request.ts";

/**
 * The SDK's client with the one resource yoi calls. `Anthropic` wires every
 * resource of the API (admin, files, skills, beta...), so importing it loads
 * the whole SDK: 3x the code this needs, read and run before each
 * session's first request.
 */
class MessagesClient extends BaseAnthropic {
  messages = new Messages(this);
}

/**
 * Anthropic Messages adapter on `@anthropic-ai/sdk`. The SDK's retries are
 * off and its timeout is left far out: the client's policy and timeouts own
 * both. The key comes from `options.apiKey`, else `ANTHROPIC_API_KEY` (or
 * `ANTHROPIC_AUTH_TOKEN` for a bearer token).
 */
export const createAnthropicAdapter: AdapterFactory = (options): ProviderAdapter => {
  let client: MessagesClient | undefined;
  const sdk = (): MessagesClient => {
    if (client) return client;
    const apiKey = options.apiKey ?? process.env.ANTHROPIC_API_KEY;
    const authToken = apiKey === undefined ? process.env.ANTHROPIC_AUTH_TOKEN : undefined;
    if (!apiKey && !authToken) throw missingKeyError("anthropic", "ANTHROPIC_API_KEY");
    client = new MessagesClient({
      ...(apiKey ? { apiKey } : { apiKey: null, authToken: authToken ?? null }),
      ...stainlessClientOptions(options),
      // The SDK's own call spans (under yoi's chat span) never carry prompt text: content goes only
      // into yoi's spans, through the secret redaction. Its variables still turn them off.
      openTelemetry: {
        propagation: process.env.ANTHROPIC_OPEN_TELEMETRY_PROPAGATION?.toLowerCase() !== "false",
        traces: {
          enabled: process.env.ANTHROPIC_OPEN_TELEMETRY?.toLowerCase() !== "false",
          contentMode: "metadata_only",
        },
      },
    });
    return client;
  };

  return {
    async open(request, signal, warn = options.onWarning) {
      const anthropic = sdk();
      const { params, warnings } = buildAnthropicRequest(options.model, request);
      for (const warning of warnings) warn?.(warning);
      let stream: AsyncIterable<unknown>;
      try {
        // The SDK's public stream: it does HTTP, SSE framing, JSON and in-stream `error` events.
        stream = await anthropic.messages.create(params, { signal });
      } catch (error) {
        throw abortFailure(signal) ?? classifyAnthropicError(error);
      }
      return normalizeAnthropicStream(stream, { signal });
    },
  };
};
