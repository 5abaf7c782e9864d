import type { ErrorEvent, StatusEvent, StopReason } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { Timeline } from "../timeline.ts";
import { CallBoundary } from "./call-boundary.ts";

/** How a model call went, as its status and error events told. */
export interface StatusResult {
  /** `started` while streaming; the terminal status once it arrived; `undefined` before any status. */
  status: StatusEvent["status"] | undefined;
  /** From the terminal status. */
  stopReason: StopReason | undefined;
  /** From `status: started`, when the provider reported them. */
  model?: string;
  responseId?: string;
  /** Every error event, in order. */
  errors: ErrorEvent[];
}

/** Collects status, stop reason and errors of one model call (starts over at the next call on a reused Timeline). */
export function createStatusCollector(): Collector<StatusResult> {
  let state: StatusResult = { status: undefined, stopReason: undefined, errors: [] };
  const boundary = new CallBoundary();
  return {
    register(timeline: Timeline) {
      const offStatus = timeline.on("status", {
        name: "status-collector",
        onEvent(event) {
          if (boundary.next(event)) state = { status: undefined, stopReason: undefined, errors: [] };
          state.status = event.status;
          if (event.status === "started") {
            if (event.model !== undefined) state.model = event.model;
            if (event.responseId !== undefined) state.responseId = event.responseId;
          } else {
            state.stopReason = event.stopReason;
          }
        },
      });
      const offError = timeline.on("error", {
        name: "status-collector",
        onEvent(event) {
          state.errors.push(event);
        },
      });
      return () => {
        offStatus();
        offError();
      };
    },
    result: () => ({ ...state, errors: [...state.errors] }),
    reset() {
      state = { status: undefined, stopReason: undefined, errors: [] };
      boundary.reset();
    },
  };
}
