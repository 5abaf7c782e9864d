/** An async iterator over worker events, for consumers that prefer `for await` to callbacks. */
import type { WorkerEvent, WorkerEventListener } from "./events.ts";

export function eventIterator(
  subscribe: (listener: WorkerEventListener) => () => void,
  signal?: AbortSignal,
): AsyncIterableIterator<WorkerEvent> {
  const queue: WorkerEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const unsubscribe = subscribe((event) => {
    queue.push(event);
    wake?.();
  });
  const finish = () => {
    done = true;
    unsubscribe();
    wake?.();
  };
  signal?.addEventListener("abort", finish, { once: true });
  if (signal?.aborted) finish();
  const iterator: AsyncIterableIterator<WorkerEvent> = {
    async next(): Promise<IteratorResult<WorkerEvent>> {
      for (;;) {
        const event = queue.shift();
        if (event !== undefined) return { value: event, done: false };
        if (done) return { value: undefined, done: true };
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    },
    async return(): Promise<IteratorResult<WorkerEvent>> {
      finish();
      queue.length = 0;
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
