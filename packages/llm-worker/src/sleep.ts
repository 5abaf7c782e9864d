import { setTimeout as delay } from "node:timers/promises";

/** Waits `ms`; resolves false early when `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, undefined, { signal }).then(
    () => true,
    () => false,
  );
}
