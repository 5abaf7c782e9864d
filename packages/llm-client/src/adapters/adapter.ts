import type { Event } from "../event.ts";
import type { ClientOptions, ClientWarning, Request } from "../request.ts";

/**
 * Maps a provider's stream payloads (as its SDK parses them) to Events,
 * synchronously, pushing onto the array it is handed. The client drives it:
 * one call per payload, then exactly one of `end` or `fail`.
 */
export interface Normalizer {
  /**
   * Maps one provider payload to Events, pushed onto `out`. Returns true when
   * the payload was the provider's terminal marker: reading stops there and
   * `end` follows.
   */
  payload(payload: unknown, out: Event[]): boolean;
  /** The stream ended (after the terminal marker, or without one): push the closing events. */
  end(out: Event[]): void;
  /** Reading the stream threw: push the closing events. */
  fail(error: unknown, out: Event[]): void;
}

/** What `open` resolves to: the provider's payloads and the normalizer that maps them. */
export interface AdapterStream {
  payloads: AsyncIterable<unknown>;
  normalizer: Normalizer;
}

/**
 * What each provider adapter implements. The client wraps it with the shared
 * retry policy, timeouts and cancellation; an adapter only translates.
 *
 * Contract:
 * - `open` sends the request and resolves once the HTTP response has arrived
 *   (headers), or rejects with a classified `LlmError` (this is the part the
 *   retry policy may repeat).
 * - Its normalizer turns the payloads into normalized Events, starting with
 *   `status: started` and ending with exactly one terminal status. Failures
 *   are pushed as events (`fail`); a stream that ends without the provider's
 *   terminal marker ends with an `incomplete_stream` error (`end`).
 * - Aborting `signal` ends the stream with `block_abort` for open blocks and
 *   `status: cancelled`.
 * - What the request could not carry (a setting the model does not take) is
 *   told to `warn`, which reaches the client's and the call's `onWarning`
 *   (called without one, an adapter tells its options' `onWarning`).
 *
 * The client holds the contract when a normalizer does not: a throw, a
 * missing terminal status and a timeout reported as a cancellation all end
 * the stream the same way for every adapter.
 */
export interface ProviderAdapter {
  open(
    request: Request,
    signal: AbortSignal,
    warn?: (warning: ClientWarning) => void,
  ): Promise<AdapterStream>;
}

export type AdapterFactory = (options: ClientOptions) => ProviderAdapter;

/** Passes Events through as they come: for an adapter that produces Events itself. */
const PASS_THROUGH: Normalizer = {
  payload(payload, out) {
    out.push(payload as Event);
    return false;
  },
  end() {},
  fail() {},
};

/**
 * An {@link AdapterStream} over Events the adapter produces itself (an async
 * generator, say) rather than provider payloads: the client applies its
 * contract to them unchanged (a throw fails the stream, a missing terminal
 * status is `incomplete_stream`).
 */
export function eventStream(events: AsyncIterable<Event>): AdapterStream {
  return { payloads: events, normalizer: PASS_THROUGH };
}
