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

const DONE: IteratorResult<Event> = Object.freeze({ value: undefined, done: true }) as IteratorResult<Event>;

export class EventPump implements AsyncIterableIterator<Event> {
  private readonly source: AsyncIterator<unknown>;
  private readonly normalizer: Normalizer;
  private readonly onRawEvent: ((payload: unknown) => void) | undefined;
  private readonly queue: Event[] = [];
  private head = 0;
  private finished = false;

  constructor(
    source: AsyncIterable<unknown>,
    normalizer: Normalizer,
    onRawEvent?: (payload: unknown) => void,
  ) {
    this.source = source[Symbol.asyncIterator]();
    this.normalizer = normalizer;
    this.onRawEvent = onRawEvent;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Event> {
    return this;
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
    }
    return { value, done: false };
  }

  /** Pulls one payload; `.then` rather than an async function: one promise per payload, no more. */
  private fill(): Promise<IteratorResult<Event>> {
    return this.source.next().then(this.received, this.threw);
  }

  private readonly received = (
    result: IteratorResult<unknown>,
  ): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    if (this.finished) return this.next(); // return() was called while waiting
    const out = this.queue;
    if (result.done) {
      this.finished = true;
      this.normalizer.end(out);
      return this.drained();
    }
    const payload = result.value;
    this.onRawEvent?.(payload);
    if (this.normalizer.payload(payload, out)) return this.stop();
    if (out.length === 1) {
      // The common case, one event per payload: no queue bookkeeping.
      return { value: out.pop()!, done: false };
    }
    return out.length === 0 ? this.fill() : this.take();
  };

  private readonly threw = (error: unknown): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    if (this.finished) return this.queue.length > 0 ? this.take() : DONE;
    return this.failed(error);
  };

  private failed(error: unknown): Promise<IteratorResult<Event>> {
    this.finished = true;
    this.normalizer.fail(error, this.queue);
    // The source may still hold the connection: release it.
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
    return this.queue.length > 0 ? this.take() : DONE;
  }
}

/** An Event iterator over an SDK stream, normalized by `normalizer`. */
export function pumpEvents(
  source: AsyncIterable<unknown>,
  normalizer: Normalizer,
  onRawEvent?: (payload: unknown) => void,
): AsyncIterableIterator<Event> {
  return new EventPump(source, normalizer, onRawEvent);
}
