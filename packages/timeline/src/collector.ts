import type { Unsubscribe } from "./handler.ts";
import type { Timeline } from "./timeline.ts";

/**
 * A bundle of handlers that builds one result from the stream. Register it on
 * a Timeline, let the stream run, read `result()` (a fresh snapshot each call).
 */
export interface Collector<R> {
  /** Registers the collector's handlers; the returned function removes them all. */
  register(timeline: Timeline): Unsubscribe;
  /** What was collected so far (a copy; later events do not change it). */
  result(): R;
  /** Forgets everything collected (handlers stay registered). */
  reset(): void;
}
