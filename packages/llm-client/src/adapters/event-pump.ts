/**
 * The iterator every adapter returns: pulls provider payloads from the SDK
 * stream and maps each one synchronously into Events through a
 * {@link Normalizer}. Hand-written rather than an async generator because
 * it sits on the per-delta hot path: one await per provider payload and no
 * generator machinery, so normalization costs little next to the SDK's own
 * SSE parsing (see bench/normalize.bench.ts).
 */
import type { Event } from "../event.ts";

export interface Normalizer {
  /**
   * Maps one provider payload to Events, pushed onto `out`. Returns true when
   * the payload was the provider's terminal marker: reading stops there.
   */
  payload(payload: unknown, out: Event[]): boolean;
  /** The stream ended (after the terminal marker, or without one): push the closing events. */
  end(out: Event[]): void;
  /** Reading the stream threw: push the closing events. */
  fail(error: unknown, out: Event[]): void;
}

/**
 * Lets the client watch a pump without wrapping it in another iterator
 * layer: it learns when the pump waits on the provider (for the idle
 * timeout) and when the stream has ended.
 */
export interface PumpWatcher {
  /** The pump is about to wait for the next provider payload. */
  pulling(): void;
  /** A payload (or the end, or an error) arrived. */
  pulled(): void;
  /** The last event has been handed out. */
  ended(): void;
}

/** A {@link Decoder} result: pass over this item (keep-alive comments, pings the SDK would drop). */
export const SKIP: unique symbol = Symbol("skip");
/** A {@link Decoder} result: the provider's end-of-stream marker (`[DONE]`); reading stops. */
export const END: unique symbol = Symbol("end");

/**
 * Turns one item of the source into a provider payload, when the source is
 * the SDK's server-sent-event iterator rather than its parsed stream (one
 * generator layer less on the hot path; the SDK still does HTTP and SSE).
 * May throw: a malformed payload, an error event.
 */
export type Decoder = (item: unknown) => unknown;

const DONE: IteratorResult<Event> = Object.freeze({ value: undefined, done: true }) as IteratorResult<Event>;

export class EventPump implements AsyncIterableIterator<Event> {
  watcher: PumpWatcher | undefined;
  private readonly source: AsyncIterator<unknown>;
  private readonly normalizer: Normalizer;
  private readonly onRawEvent: ((payload: unknown) => void) | undefined;
  private readonly decode: Decoder | undefined;
  private readonly queue: Event[] = [];
  private head = 0;
  private finished = false;

  constructor(
    source: AsyncIterable<unknown>,
    normalizer: Normalizer,
    onRawEvent?: (payload: unknown) => void,
    decode?: Decoder,
  ) {
    this.source = source[Symbol.asyncIterator]();
    this.normalizer = normalizer;
    this.onRawEvent = onRawEvent;
    this.decode = decode;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Event> {
    return this;
  }

  /** Every event has been handed out and the source returned or drained: nothing is left to release. */
  get exhausted(): boolean {
    return this.finished && this.head >= this.queue.length;
  }

  next(): Promise<IteratorResult<Event>> {
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    if (this.finished) return Promise.resolve(DONE);
    return this.fill();
  }

  async return(): Promise<IteratorResult<Event>> {
    if (!this.finished) {
      this.finished = true;
      this.queue.length = 0;
      this.head = 0;
      await this.source.return?.();
    }
    return DONE;
  }

  private take(): IteratorResult<Event> {
    const value = this.queue[this.head++]!;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.finished) this.watcher?.ended();
    }
    return { value, done: false };
  }

  /** Pulls one payload; `.then` rather than an async function: one promise per payload, no more. */
  private fill(): Promise<IteratorResult<Event>> {
    this.watcher?.pulling();
    return this.source.next().then(this.received, this.threw);
  }

  private readonly received = (
    result: IteratorResult<unknown>,
  ): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    this.watcher?.pulled();
    if (this.finished) return this.next(); // return() was called while waiting
    const out = this.queue;
    if (result.done) {
      this.finished = true;
      this.normalizer.end(out);
      return this.drained();
    }
    let payload = result.value;
    if (this.decode) {
      try {
        payload = this.decode(payload);
      } catch (error) {
        return this.failed(error);
      }
      if (payload === SKIP) return this.fill();
      if (payload === END) return this.stop();
    }
    this.onRawEvent?.(payload);
    if (this.normalizer.payload(payload, out)) return this.stop();
    if (out.length === 1) {
      // The common case, one event per payload: no queue bookkeeping.
      return { value: out.pop()!, done: false };
    }
    return out.length === 0 ? this.fill() : this.take();
  };

  private readonly threw = (error: unknown): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    this.watcher?.pulled();
    if (this.finished) return this.queue.length > 0 ? this.take() : DONE;
    return this.failed(error);
  };

  private failed(error: unknown): Promise<IteratorResult<Event>> {
    this.finished = true;
    this.normalizer.fail(error, this.queue);
    // The source may still hold the connection (a decode failure): release it.
    return Promise.resolve(this.source.return?.())
      .catch(() => undefined)
      .then(() => this.drained());
  }

  /** The terminal marker arrived: stop reading, which releases the connection. */
  private stop(): Promise<IteratorResult<Event>> {
    this.finished = true;
    return Promise.resolve(this.source.return?.())
      .catch(() => undefined)
      .then(() => {
        this.normalizer.end(this.queue);
        return this.drained();
      });
  }

  private drained(): IteratorResult<Event> {
    if (this.queue.length > 0) return this.take();
    this.watcher?.ended();
    return DONE;
  }
}

/**
 * An Event iterator over an SDK stream, normalized by `normalizer`; with
 * `decode`, over the SDK's server-sent events (see {@link Decoder}).
 */
export function pumpEvents(
  source: AsyncIterable<unknown>,
  normalizer: Normalizer,
  onRawEvent?: (payload: unknown) => void,
  decode?: Decoder,
): AsyncIterableIterator<Event> {
  return new EventPump(source, normalizer, onRawEvent, decode);
}
