/**
 * The OpenAI SDK's server-sent events, read without its `Stream` layer:
 * shared by the Chat Completions and Responses adapters. The SDK still does
 * HTTP and SSE framing (`_iterSSEMessages`, an SDK-internal entry point:
 * the `openai` version is pinned and test/sdk-internals.test.ts guards it);
 * {@link decodeOpenAIEvent} does the SDK's last step per event.
 */
import { APIError } from "openai";
import { _iterSSEMessages } from "openai/core/streaming";
import { type Decoder, END } from "./event-pump.ts";

/** One server-sent event as the SDK's reader yields it. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * The server-sent events of a streaming response. Aborting `signal` ends the
 * iteration quietly, as the SDK's own stream does; the normalizer then sees
 * the aborted signal and reports the cancellation.
 */
export function openAIEvents(response: Response, signal: AbortSignal): AsyncIterable<ServerSentEvent> {
  const reader = new AbortController();
  if (signal.aborted) reader.abort(signal.reason);
  else signal.addEventListener("abort", () => reader.abort(signal.reason), { once: true });
  return _iterSSEMessages(response, reader);
}

/**
 * What the SDK's `Stream` does to each server-sent event, done here so the
 * adapters read the SDK's event iterator (one generator layer less per
 * delta): `[DONE]` ends the stream, a payload that is not JSON throws, an
 * `error` event or an `error` field becomes the SDK's `APIError`.
 */
export function decodeOpenAIEvent(headers: Headers): Decoder {
  return (item) => {
    const sse = item as ServerSentEvent;
    if (sse.data === "[DONE]") return END;
    let data: { error?: unknown } | null;
    try {
      data = JSON.parse(sse.data);
    } catch {
      throw new SyntaxError("Error reading response: malformed server-sent event JSON.");
    }
    if (sse.event === "error")
      throw new APIError(undefined, (data?.error ?? data) as object, undefined, headers);
    if (data?.error) throw new APIError(undefined, data.error as object, undefined, headers);
    return data;
  };
}
