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

/** One record to append: a write against the session log (queued by the caller in event order). */
export type SessionWrite = (log: SessionWriter) => Promise<unknown>;

/**
 * The one mapping from Worker events to session records, shared by
 * {@link recordWorker} and hosts that own their log's lifecycle (the pod
 * creates its log lazily and queues writes). Feed it every event in order;
 * it returns the write for an event that is recorded, or undefined.
 *
 * Recorded: committed items (with index, reason and turn), history
 * replacements (compaction, trim, rollback), usage per model call, turn
 * ends, cancellations, errors, and client warnings and retries as alerts.
 * Deltas and tool progress are not: the committed items carry their
 * results.
 */
export class WorkerEventRecords {
  #turn: number | undefined;
  readonly #options: RecordWorkerOptions;

  constructor(options: RecordWorkerOptions = {}) {
    this.#options = options;
  }

  /** The write for `event`, or undefined when it is not recorded. */
  record(event: WorkerEvent): SessionWrite | undefined {
    const options = this.#options;
    const turn = this.#turn;
    switch (event.type) {
      case "request_start":
        this.#turn = event.turnIndex;
        return undefined;
      case "item_committed": {
        const reason = options.reason?.(event) ?? event.reason;
        return (log) =>
          log.item(event.item, reason, { index: event.index, ...(turn !== undefined && { turn }) });
      }
      case "history_replaced":
        return (log) =>
          log.historyReplaced({
            history: [...event.items],
            reason: event.reason,
            ...(event.detail !== undefined && { detail: event.detail }),
          });
      case "usage": {
        const model = options.model?.();
        return (log) =>
          log.usage(event.usage, { turn: event.turnIndex, ...(model !== undefined && { model }) });
      }
      case "turn_end":
        return (log) =>
          log.turnEnd({
            turn: event.turnIndex,
            ...(event.stopReason !== undefined && { stopReason: event.stopReason }),
          });
      case "run_end":
        return event.status === "cancelled"
          ? (log) => log.cancel(event.reason ?? "cancelled", turn)
          : undefined;
      case "error":
        return (log) => log.error(event.error, turn);
      case "warning":
        return (log) => log.alert("warn", "client", event.warning.message);
      case "retry":
        return (log) =>
          log.alert("info", `retry:${event.source}`, `attempt ${event.attempt}: ${event.reason}`);
      default:
        return undefined;
    }
  }
}

/**
 * Writes a Worker's history-relevant events to a session log (see
 * {@link WorkerEventRecords} for what is recorded). Events arrive
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
  const records = new WorkerEventRecords(options);
  const listener = (event: WorkerEvent): void => {
    const write = records.record(event);
    write?.(log).catch((error: unknown) => {
      errors.push(error);
      options.onError?.(error);
    });
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
