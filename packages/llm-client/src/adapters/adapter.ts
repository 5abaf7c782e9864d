import type { Event } from "../event.ts";
import type { ClientOptions, Request } from "../request.ts";

/**
 * What each provider adapter implements. The client wraps it with the shared
 * retry policy, timeouts and cancellation; an adapter only translates.
 *
 * Contract:
 * - `open` sends the request and resolves once the HTTP response has arrived
 *   (headers), or rejects with a classified `LlmError` (this is the part the
 *   retry policy may repeat).
 * - The returned iterable yields normalized Events, starting with
 *   `status: started` and ending with exactly one terminal status. Once it
 *   has started, failures are yielded as events, never thrown; a stream that
 *   ends without the provider's terminal marker yields an `incomplete_stream`
 *   error.
 * - Aborting `signal` ends the stream with `block_abort` for open blocks and
 *   `status: cancelled`.
 */
export interface ProviderAdapter {
  open(request: Request, signal: AbortSignal): Promise<AsyncIterable<Event>>;
}

export type AdapterFactory = (options: ClientOptions) => ProviderAdapter;
