/**
 * The flat event stream (docs/design/timeline.md#events). Every adapter
 * yields exactly this union; the Timeline gives it block structure.
 *
 * Contract of a stream:
 * - it starts with `status: started`;
 * - blocks are announced by `block_start` (some providers omit it: a
 *   `block_delta` for an unknown index implicitly opens the block), receive
 *   `block_delta`s and end with exactly one `block_stop` or `block_abort`;
 *   several blocks may be open at once (parallel tool calls);
 * - it ends with exactly one terminal `status` (`completed`, `cancelled`,
 *   `failed`), and that status carries the stop reason;
 * - once started, failures are events (`error` then `status: failed`), not throws.
 */

import type { LlmErrorCode } from "./errors.ts";
import type { Citation, ProviderData, ReasoningItem, ServerToolItem } from "./item.ts";

export type BlockKind = "text" | "thinking" | "tool_use";

export type StopReason =
  | "end_turn"
  /**
   * The provider paused a long server-side tool loop (Anthropic web search);
   * sending the history back, the paused response last, lets it go on.
   */
  | "pause_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "refusal"
  | "content_filter"
  | "error";

/**
 * Token usage of one model call.
 *
 * Convention (the same for every provider):
 * - `inputTokens` counts every prompt token, cached ones included;
 *   `cacheReadTokens` and `cacheWriteTokens` are parts of it.
 * - `outputTokens` includes reasoning tokens; `reasoningTokens` is part of it.
 * A field is absent when the provider did not report it.
 */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export interface PingEvent {
  type: "ping";
}

/** Usage so far; providers may send several, later values win per field. */
export interface UsageEvent {
  type: "usage";
  usage: Usage;
}

export type StatusEvent =
  | { type: "status"; status: "started"; model?: string; responseId?: string }
  | {
      type: "status";
      status: "completed" | "cancelled" | "failed";
      /** Why the model stopped; `error` for failed streams, absent when cancelled before any output. */
      stopReason?: StopReason;
    };

export interface ErrorEvent {
  type: "error";
  code: LlmErrorCode;
  message: string;
  retryable: boolean;
  status?: number;
  /** Server-requested delay before a retry, in milliseconds, when it sent one. */
  retryAfterMs?: number;
  /** When a rate limit the retry policy gave up on resets (epoch ms): see `LlmError.resetAt`. */
  resetAt?: number;
  /** For a `network` error, why no connection was made: see `LlmError.networkReason`. */
  networkReason?: string;
  /**
   * True when the call failed before any output, after the client's retry
   * policy had its say (attempts, backoff, retry-after, or no retry for a
   * non-retryable error): a caller should not send the same request again at
   * once. Absent when a stream broke after it started.
   */
  beforeOutput?: boolean;
}

/**
 * The client is about to send the request again (the one retry policy of
 * `retry.ts`). Comes after `status: started` and before the next attempt's
 * events. `discarded`: the failed attempt had already streamed blocks (they
 * were closed with `block_abort`); everything it streamed is void and the
 * next attempt starts the response from the beginning, so a consumer drops
 * what it showed or collected of it.
 */
export interface RetryEvent {
  type: "retry";
  /** The attempt about to start (2 = the first retry). */
  attempt: number;
  maxAttempts: number;
  /** Wait before that attempt, in milliseconds. */
  delayMs: number;
  /** Why the previous attempt failed. */
  code: LlmErrorCode;
  message: string;
  status?: number;
  discarded: boolean;
}

export interface BlockStartEvent {
  type: "block_start";
  index: number;
  block: BlockKind;
  /** tool_use only: the call id. */
  id?: string;
  /** tool_use only: the tool name. */
  name?: string;
  /** tool_use only: `custom` for OpenAI Responses free-form tools. */
  toolKind?: "function" | "custom";
}

export type DeltaKind = "text" | "thinking" | "input_json";

export interface BlockDeltaEvent {
  type: "block_delta";
  index: number;
  delta: DeltaKind;
  text: string;
}

/**
 * Data needed to replay a thinking block to the provider that produced it:
 * the fields of the reasoning item the block becomes, besides its text.
 */
export type ThinkingReplay = Omit<ReasoningItem, "type" | "text">;

export interface BlockStopEvent {
  type: "block_stop";
  index: number;
  block: BlockKind;
  /** thinking only. */
  replay?: ThinkingReplay;
  /** tool_use only: the complete arguments when the provider gives them whole (e.g. Gemini). */
  providerData?: ProviderData;
  /** text only: the sources the provider cited for this block. */
  citations?: Citation[];
}

export interface BlockAbortEvent {
  type: "block_abort";
  index: number;
  block: BlockKind;
  reason: string;
}

/**
 * A tool the provider runs on its own side (web search) started or
 * finished. Each event carries the whole state so far; a later one for the
 * same `index` replaces the earlier (the call, then its results). `index`
 * places it among the response's blocks (the provider's position of the call).
 */
export interface ServerToolEvent {
  type: "server_tool";
  index: number;
  item: ServerToolItem;
}

export type Event =
  | PingEvent
  | ServerToolEvent
  | UsageEvent
  | StatusEvent
  | ErrorEvent
  | RetryEvent
  | BlockStartEvent
  | BlockDeltaEvent
  | BlockStopEvent
  | BlockAbortEvent;

export type EventType = Event["type"];
