/**
 * Interceptor (docs/design/file-refs.md#interceptors-and-hooks): the internal
 * extension surface with full power over a run. Every method is optional;
 * several interceptors run in the order given, and the first non-continue
 * action wins.
 */
import type { Item, Request, StopReason, ToolCallItem } from "@yoi/llm-client";
import type { ToolOutput } from "./tool-output.ts";

/** A tool call as interceptors and hooks see it. */
export interface ToolCallInfo {
  readonly callId: string;
  readonly name: string;
  /** The raw arguments JSON the model sent. */
  readonly arguments: string;
  /** The parsed arguments (undefined when they were not valid JSON). */
  readonly args: unknown;
  readonly batchId: string;
  readonly callIndex: number;
  readonly batchSize: number;
  readonly turnIndex: number;
  /** The committed tool call item. */
  readonly item: ToolCallItem;
  /** The run's signal (e.g. to stop waiting for a user's approval when the run is cancelled). */
  readonly signal: AbortSignal;
  /**
   * Runs the tool's own check of this call (`Tool.check`): the refusal the
   * tool would give, or undefined when it would run the call (also when it
   * has no check, or the arguments are invalid: the call then fails on its
   * own). For a permission hook, before it asks the user.
   */
  readonly precheck?: () => Promise<string | undefined>;
}

/** A tool result as interceptors and hooks see it. */
export interface ToolResultInfo {
  /** What the model will see (summary for Stored output). */
  readonly output: string;
  readonly isError: boolean;
  /** How the result came about. */
  readonly outcome: ToolOutcome;
  readonly durationMs: number;
  /** Blob id when the output was stored. */
  readonly blobId?: string;
}

/**
 * How a tool call ended: `ok` / `error` (ran), `invalid_args`, `unknown_tool`,
 * `timeout`, `skipped` (interceptor Skip or hook Deny), `synthetic`
 * (interceptor SyntheticResult), `aborted` (interceptor or hook Abort),
 * `interrupted` (cancelled run, or a pending call dropped by a new prompt).
 */
export type ToolOutcome =
  | "ok"
  | "error"
  | "invalid_args"
  | "unknown_tool"
  | "timeout"
  | "skipped"
  | "synthetic"
  | "aborted"
  | "interrupted";

export interface PromptSubmitInfo {
  /** The items about to be committed for this prompt (the user item first). */
  readonly input: readonly Item[];
  readonly history: readonly Item[];
  readonly signal: AbortSignal;
}

/** `continue_with`: append `items` right after the user item (committed with reason `interceptor`). */
export type PromptAction =
  | { action: "continue" }
  | { action: "cancel"; reason: string }
  | { action: "continue_with"; items: Item[] };

export interface BeforeRequestInfo {
  readonly request: Request;
  readonly turnIndex: number;
  readonly history: readonly Item[];
  readonly signal: AbortSignal;
}

/** `continue` may carry a replacement request (full power: the interceptor owns what is sent). */
export type RequestAction = { action: "continue"; request?: Request } | { action: "cancel"; reason: string };

/**
 * Before a tool call runs (called in call order, before the batch starts):
 * - `continue` with `args`: run the call with these arguments instead of the
 *   model's (an approval that edits the call); the interceptors after this
 *   one and the tool see them, the committed tool call keeps the model's;
 * - `skip`: do not run; `result` is committed as an error result;
 * - `synthetic_result`: do not run; `result` is committed as if the tool returned it;
 * - `abort`: do not run this or any later call; the run ends `cancelled`;
 * - `pause`: stop before the batch runs; the calls stay pending and
 *   `Worker.resume()` runs them (asking interceptors again) first.
 */
export type ToolCallAction =
  | { action: "continue"; args?: unknown }
  | { action: "skip"; result: string }
  | { action: "synthetic_result"; result: string | ToolOutput }
  | { action: "abort"; reason: string }
  | { action: "pause"; reason?: string };

/** After a tool call: `replace` swaps the result the model sees. */
export type AfterToolCallAction =
  | { action: "continue" }
  | { action: "replace"; output: string | ToolOutput; isError?: boolean };

export interface TurnEndInfo {
  readonly turnIndex: number;
  readonly stopReason: StopReason | undefined;
  /** The assistant items committed for this model call. */
  readonly items: readonly Item[];
  readonly history: readonly Item[];
  readonly signal: AbortSignal;
}

/**
 * When the model ends its turn:
 * - `finish`: the run completes;
 * - `continue_with_messages`: append `items` (reason `interceptor`) and call the model again;
 * - `pause`: the run ends `paused`.
 */
export type TurnEndAction =
  | { action: "finish" }
  | { action: "continue_with_messages"; items: Item[] }
  | { action: "pause"; reason?: string };

type MaybePromise<T> = T | Promise<T>;

/** Internal, full-power extension of the loop. Returning undefined means continue/finish. */
export interface Interceptor {
  readonly name?: string;
  onPromptSubmit?(info: PromptSubmitInfo): MaybePromise<PromptAction | undefined>;
  beforeRequest?(info: BeforeRequestInfo): MaybePromise<RequestAction | undefined>;
  beforeToolCall?(call: ToolCallInfo): MaybePromise<ToolCallAction | undefined>;
  afterToolCall?(call: ToolCallInfo, result: ToolResultInfo): MaybePromise<AfterToolCallAction | undefined>;
  onTurnEnd?(info: TurnEndInfo): MaybePromise<TurnEndAction | undefined>;
}
