import type { StatusEvent, Usage } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { Timeline } from "../timeline.ts";
import { CallBoundary } from "./call-boundary.ts";

const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
] as const satisfies ReadonlyArray<keyof Usage>;

/**
 * Merges `next` into `into` (in place): per field, the latest reported value
 * wins; fields `next` does not report (absent, or not a finite number) keep
 * their value. Providers send running totals, so later values replace.
 * Returns whether any field was reported.
 */
export function mergeUsage(into: Usage, next: Usage): boolean {
  let any = false;
  for (const field of USAGE_FIELDS) {
    const value = next[field];
    if (typeof value === "number" && Number.isFinite(value)) {
      into[field] = value;
      any = true;
    }
  }
  return any;
}

export interface UsageCollectorOptions {
  /**
   * Called once per model call, at its terminal status, with the merged usage
   * of that call (not called for a call that reported none).
   */
  onUsage?: (usage: Usage) => void;
}

/**
 * Accumulates the usage of one model call (latest value per field). On a
 * reused Timeline it starts over at the next call's `status: started`;
 * `result()` is the usage of the current (or last) call, `undefined` when
 * none was reported.
 */
export function createUsageCollector(options: UsageCollectorOptions = {}): Collector<Usage | undefined> {
  let usage: Usage | undefined;
  let delivered = false;
  const boundary = new CallBoundary();
  const reset = (): void => {
    usage = undefined;
    delivered = false;
  };
  return {
    register(timeline: Timeline) {
      const offUsage = timeline.on("usage", {
        name: "usage-collector",
        onEvent(event) {
          const merged: Usage = usage === undefined ? {} : usage;
          if (mergeUsage(merged, event.usage)) usage = merged;
        },
      });
      const offStatus = timeline.on("status", {
        name: "usage-collector",
        onEvent(event: StatusEvent) {
          if (boundary.next(event)) reset();
          if (event.status === "started" || delivered) return;
          delivered = true;
          if (usage !== undefined) options.onUsage?.({ ...usage });
        },
      });
      return () => {
        offUsage();
        offStatus();
      };
    },
    result: () => (usage === undefined ? undefined : { ...usage }),
    reset() {
      reset();
      boundary.reset();
    },
  };
}
