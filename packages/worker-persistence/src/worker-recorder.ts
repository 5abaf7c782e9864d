import type { WorkerEvent, WorkerEventListener } from "@yoi/llm-worker";
import type { ItemReason } from "./session-records.ts";
import type { SessionWriter } from "./session-store-port.ts";

/** Anything with the Worker's `subscribe` (the Worker itself, or a test double). */
export interface WorkerEventSource {
  subscribe(listener: WorkerEventListener): () => void;
}

export interface RecordWorkerOptions {
  /** The model that serves calls, for usage records (a getter, since config can change). */
  model?: () => string | undefined;
  /**
   * Overrides the reason of a committed item, e.g. `file_ref` for the pod's
   * `[File: ...]` messages that reach the worker as interceptor items.
   */
  reason?: (event: Extract<WorkerEvent, { type: "item_committed" }>) => ItemReason | undefined;
  /** Called when an append fails (the run goes on; the error is also kept in `errors`). */
  onError?: (error: unknown) => void;
}

export interface WorkerRecorder {
  /** Append failures so far. */
  readonly errors: unknown[];
  /** Resolves when every record of the events seen so far is written. */
  flush(): Promise<void>;
  /** Unsubscribes and flushes. */
  stop(): Promise<void>;
}

/**
 * Writes a Worker's history-relevant events to a session log: committed
 * items (with index and reason), history replacements (compaction, trim,
 * rollback), usage per model call, turn ends, cancellations, errors, and
 * client warnings and retries as alerts. Deltas and tool progress are not
 * logged: the committed items carry their results. Events arrive
 * synchronously; their records are appended in event order.
 *
 * The user's input text and segments are the caller's to log
 * (`log.userInput`) before `worker.run`, since the worker only sees items.
 */
export function recordWorker(
  log: SessionWriter,
  worker: WorkerEventSource,
  options: RecordWorkerOptions = {},
): WorkerRecorder {
  const errors: unknown[] = [];
  let turn: number | undefined;
  const track = (p: Promise<unknown>): void => {
    p.catch((error: unknown) => {
      errors.push(error);
      options.onError?.(error);
    });
  };
  const listener = (event: WorkerEvent): void => {
    switch (event.type) {
      case "request_start":
        turn = event.turnIndex;
        break;
      case "item_committed":
        track(
          log.item(event.item, options.reason?.(event) ?? event.reason, {
            index: event.index,
            ...(turn !== undefined && { turn }),
          }),
        );
        break;
      case "history_replaced":
        track(
          log.historyReplaced({
            history: [...event.items],
            reason: event.reason,
            ...(event.detail !== undefined && { detail: event.detail }),
          }),
        );
        break;
      case "usage": {
        const model = options.model?.();
        track(log.usage(event.usage, { turn: event.turnIndex, ...(model !== undefined && { model }) }));
        break;
      }
      case "turn_end":
        track(
          log.turnEnd({
            turn: event.turnIndex,
            ...(event.stopReason !== undefined && { stopReason: event.stopReason }),
          }),
        );
        break;
      case "run_end":
        if (event.status === "cancelled") track(log.cancel(event.reason ?? "cancelled", turn));
        break;
      case "error":
        track(log.error(event.error, turn));
        break;
      case "warning":
        track(log.alert("warn", "client", event.warning.message));
        break;
      case "retry":
        track(log.alert("info", `retry:${event.source}`, `attempt ${event.attempt}: ${event.reason}`));
        break;
      default:
        break;
    }
  };
  const unsubscribe = worker.subscribe(listener);
  return {
    errors,
    flush: () => log.flush(),
    async stop() {
      unsubscribe();
      await log.flush();
    },
  };
}
