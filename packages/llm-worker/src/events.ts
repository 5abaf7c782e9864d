/**
 * WorkerEvent: what a Worker tells UIs (the CLI) and the pod (session log).
 * Events are delivered synchronously to subscribers, in order.
 */
import type { ClientWarning, Item, LlmErrorCode, ServerToolItem, StopReason, Usage } from "@yoi/llm-client";
import type { ToolOutcome } from "./interceptor.ts";

/** Why an item entered history. The session log records these. */
export type CommitReason = "user" | "interceptor" | "assistant" | "tool_result" | "synthetic";

/** Final status of a run. */
export type RunStatus = "completed" | "max_turns" | "cancelled" | "paused" | "failed";

/** Why history was replaced: by the ContextPolicy, a rollback of a cancelled turn, or `Worker.replaceHistory`. */
export type HistoryReplaceReason = "compaction" | "trim" | "rollback" | "external";

export interface RunStartEvent {
  type: "run_start";
  runId: string;
  /** `run` for a new prompt, `resume` for `Worker.resume()`. */
  mode: "run" | "resume";
  /** Items submitted (empty for resume). */
  input: readonly Item[];
}

export interface RequestStartEvent {
  type: "request_start";
  runId: string;
  turnIndex: number;
  /** 1 for the first attempt of this model call; higher after a stream retry or a context-overflow retry. */
  attempt: number;
  /** Items sent. */
  itemCount: number;
}

export interface TextDeltaEvent {
  type: "text_delta";
  turnIndex: number;
  text: string;
}

/**
 * A tool the provider runs itself (web search) started (`item.status`
 * `running`, its query when known) or finished (its sources). Several per
 * call; the item is committed with the response like any other.
 */
export interface ServerToolWorkerEvent {
  type: "server_tool";
  turnIndex: number;
  item: ServerToolItem;
}

export interface ThinkingDeltaEvent {
  type: "thinking_delta";
  turnIndex: number;
  text: string;
}

export interface ToolCallStartEvent {
  type: "tool_call_start";
  callId: string;
  name: string;
  /** Parsed arguments (undefined when the model sent invalid JSON). */
  args: unknown;
  batchId: string;
  callIndex: number;
  turnIndex: number;
  /** `Date.now()` when execution started. */
  startedAt: number;
}

export interface ToolCallEndEvent {
  type: "tool_call_end";
  callId: string;
  name: string;
  batchId: string;
  callIndex: number;
  turnIndex: number;
  isError: boolean;
  outcome: ToolOutcome;
  durationMs: number;
  /** The first ~200 characters of what the model sees. */
  preview: string;
  /**
   * Size in UTF-8 bytes of what entered the context: the result as
   * committed, after the Stored summary or cap and the context policy's view.
   */
  outputBytes: number;
  /** Size in UTF-8 bytes of the tool's whole output (what the blob store keeps), before any summary, view or cap. */
  fullBytes: number;
  /**
   * Where the whole output is, when the model did not see all of it: the
   * worker's Stored blob, or the context policy's ref of a cut view.
   */
  blobId?: string;
}

/**
 * Output a running tool reported through `ToolExecutionContext.progress`
 * (a bash command's output as it arrives), between the call's
 * `tool_call_start` and `tool_call_end`. For UIs only: it is not history
 * and not logged; the result the model sees comes with `tool_call_end`.
 */
export interface ToolOutputDeltaEvent {
  type: "tool_output_delta";
  callId: string;
  name: string;
  turnIndex: number;
  /** The new text (not redacted: a UI passes it through the stream redactor like streamed text). */
  text: string;
}

export interface UsageWorkerEvent {
  type: "usage";
  turnIndex: number;
  /** Usage of this model call. */
  usage: Usage;
  /** Sum over the run so far. */
  total: Usage;
}

/**
 * A retry the user should know about. `source: "client"`: the client's
 * retry policy sends the call again (the one owner of retries; the worker
 * forwards its `retry` stream events); `context_overflow`: history was
 * replaced by the ContextPolicy and the call is sent again.
 */
export interface RetryEvent {
  type: "retry";
  source: "client" | "context_overflow";
  /** The attempt that is about to start (2 = first retry). */
  attempt: number;
  maxAttempts?: number;
  delayMs: number;
  reason: string;
  code?: LlmErrorCode;
  /**
   * The previous attempt had streamed text, thinking or tool calls, and they
   * are void: the `text_delta` / `thinking_delta` events of this turn since
   * its `request_start` must be dropped (a UI clears them, stream-json marks
   * the line). Always false for `context_overflow`.
   */
  discarded: boolean;
}

export interface ItemCommittedEvent {
  type: "item_committed";
  item: Item;
  /** Position in history. */
  index: number;
  reason: CommitReason;
}

export interface HistoryReplacedEvent {
  type: "history_replaced";
  /** The new history as it was at the replacement (a copy: later commits do not change it). */
  items: readonly Item[];
  reason: HistoryReplaceReason;
  detail?: Record<string, unknown>;
}

export interface TurnEndEvent {
  type: "turn_end";
  turnIndex: number;
  stopReason: StopReason | undefined;
  /** Tool calls the response made (0 when the model ended its turn). */
  toolCalls: number;
}

export interface RunEndEvent {
  type: "run_end";
  runId: string;
  status: RunStatus;
  turns: number;
  usage: Usage;
  /** Why a run was cancelled, paused or failed, when known. */
  reason?: string;
  error?: WorkerError;
}

/** A non-fatal notice of the worker's own: a response's calls over the bound, more tools than a model handles well. */
export interface WorkerWarning {
  code: "tool_calls_over_limit" | "tools_over_budget";
  message: string;
}

/** A non-fatal notice from the client (dropped setting, unknown event) or the worker. */
export interface WarningEvent {
  type: "warning";
  warning: ClientWarning | WorkerWarning;
}

export interface ErrorWorkerEvent {
  type: "error";
  error: WorkerError;
  /** Whether the run ends because of it (false: it will be retried). */
  fatal: boolean;
}

/** An error as events and results carry it (plain data, safe to log: no secrets, no stack). */
export interface WorkerError {
  /**
   * A provider code, `context_policy` (the ContextPolicy threw),
   * `limit_exceeded` (the model's response passed one of the worker's
   * bounds: `maxResponseBytes`, `maxToolArgumentBytes`; the message names
   * it), `storage` (the blob store or the session log could not write: a
   * full disk) or `internal` (a bug: an unexpected throw inside the
   * worker). Tool failures are tool results, not worker errors.
   */
  code: LlmErrorCode | "context_policy" | "limit_exceeded" | "storage" | "internal";
  message: string;
  retryable: boolean;
  status?: number;
  /** A `rate_limit` beyond the client's retry budget: when it resets (epoch ms), so a UI may wait and go on. */
  resetAt?: number;
  /** A `network` error: why no connection was made, in the system's words, so a UI can say it its own way. */
  networkReason?: string;
}

export type WorkerEvent =
  | RunStartEvent
  | RequestStartEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | ServerToolWorkerEvent
  | ToolCallStartEvent
  | ToolCallEndEvent
  | ToolOutputDeltaEvent
  | UsageWorkerEvent
  | RetryEvent
  | ItemCommittedEvent
  | HistoryReplacedEvent
  | TurnEndEvent
  | RunEndEvent
  | WarningEvent
  | ErrorWorkerEvent;

export type WorkerEventType = WorkerEvent["type"];

export type WorkerEventListener = (event: WorkerEvent) => void;
