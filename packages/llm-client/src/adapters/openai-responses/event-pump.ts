import type { Event } from "../../event.ts";

/**
 * A normalizer driven by {@link pumpEvents}: it turns each provider payload
 * into zero or more Events pushed onto the shared output array.
 */
export interface EventPump<T> {
  /** Handles one payload; returns true once the terminal status was pushed. */
  step(payload: T): boolean;
  /** The source ended without a terminal payload. Must push a terminal status. */
  end(): void;
  /** The source threw. Must push a terminal status. */
  fail(error: unknown): void;
}

/**
 * Runs a pump over an SDK stream as a plain async iterator. A hand-written
 * iterator instead of an async generator: the generator's own promise per
 * yield was most of the normalization overhead over raw SDK iteration.
 * Breaking out early (or a terminal payload) closes the SDK stream, which
 * aborts its HTTP request.
 */
export function pumpEvents<T>(
  source: AsyncIterable<T>,
  out: Event[],
  pump: EventPump<T>,
): AsyncIterable<Event> {
  const iterator = source[Symbol.asyncIterator]();
  let head = 0;
  let finished = false;
  const close = async (): Promise<void> => {
    try {
      await iterator.return?.();
    } catch {
      // The request is being torn down; nothing is left to report.
    }
  };
  const events: AsyncIterator<Event> = {
    async next(): Promise<IteratorResult<Event>> {
      for (;;) {
        if (head < out.length) {
          const value = out[head++] as Event;
          if (head === out.length) {
            out.length = 0;
            head = 0;
          }
          return { value, done: false };
        }
        if (finished) return { value: undefined, done: true };
        let result: IteratorResult<T>;
        try {
          result = await iterator.next();
        } catch (error) {
          finished = true;
          pump.fail(error);
          continue;
        }
        if (result.done) {
          finished = true;
          pump.end();
          continue;
        }
        if (pump.step(result.value)) {
          finished = true;
          await close();
        }
      }
    },
    async return(): Promise<IteratorResult<Event>> {
      if (!finished) {
        finished = true;
        await close();
      }
      out.length = 0;
      head = 0;
      return { value: undefined, done: true };
    },
  };
  return { [Symbol.asyncIterator]: () => events };
}
