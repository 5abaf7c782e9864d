import type { Item, LlmClient, RequestSettings, Usage } from "@yoi/llm-client";
import type { BlobStore } from "./blob-store.ts";
import type { ContextPolicy } from "./context-policy.ts";
import type { RunStatus, WorkerError } from "./events.ts";
import type { Hook } from "./hook.ts";
import type { Interceptor } from "./interceptor.ts";
import type { Tool } from "./tool.ts";

/** Byte limits of tool output. Defaults from `@yoi/manifest`. */
export interface ToolOutputLimits {
  /** A string result over this many UTF-8 bytes is promoted to Stored (with a BlobStore). Default `INLINE_THRESHOLD_BYTES` (800). */
  inlineThresholdBytes?: number;
  /** Cap of a generated summary. Default `SUMMARY_MAX_BYTES` (400). */
  summaryMaxBytes?: number;
  /** Head lines of a text summary. Default `SUMMARY_HEAD_LINES` (5). */
  summaryHeadLines?: number;
  /** Tail lines of a text summary. Default `SUMMARY_TAIL_LINES` (3). */
  summaryTailLines?: number;
  /**
   * Cap of an inline result when a `blobStore` is set (per tool, overridable
   * by `Tool.maxOutputBytes`), with a visible truncation note. Default
   * `TOOL_OUTPUT_MAX_BYTES` (16 KiB). Not applied without a store.
   */
  maxBytes?: number;
  /**
   * Cap of every result when no `blobStore` is set, with a visible note that
   * the rest was not kept. Default: none. Without a store everything stays
   * Inline and whole (docs/design/tool-output-storage.md#without-a-blob-store);
   * what bounds the context then is the context policy's trimming
   * (`@yoi/compaction`). Set it only for a worker that has neither a store nor
   * a context policy.
   */
  maxBytesWithoutStore?: number;
}

/**
 * Bounds on what one model response may make the worker do (defaults from
 * `@yoi/manifest`). Messages name them by yoi's config keys (`worker.<name>`).
 */
export interface ResponseBounds {
  /** Tool calls of one response that run; each further call gets an error result. Default 200. */
  maxToolCallsPerResponse?: number;
  /** Tool calls running at once. Default 10. */
  toolConcurrency?: number;
  /** Bytes of one response (text, reasoning, tool arguments); past it the stream stops and the run fails. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Bytes of one tool call's arguments; past it the stream stops and the run fails. Default 4 MiB. */
  maxToolArgumentBytes?: number;
}

export interface WorkerOptions {
  client: LlmClient;
  /** Tools the model may call. `inspect` is added automatically when `blobStore` is set. */
  tools?: readonly Tool[];
  /** System prompt. */
  system?: string;
  /** Request settings sent with every call. `maxTokens` defaults to `WORKER_DEFAULTS.maxTokens`. */
  settings?: RequestSettings;
  /** Most model calls in one run (or resume). Default `WORKER_DEFAULTS.maxTurns` (50). */
  maxTurns?: number;
  /** Where Stored output goes. Without one every output stays inline. */
  blobStore?: BlobStore;
  /**
   * Context management (tool output cache, compaction), called at the
   * checkpoints of the loop (docs/design/context-management.md#checkpoints-in-the-loop).
   */
  contextPolicy?: ContextPolicy;
  /** Internal, full-power extensions; run before hooks. */
  interceptors?: readonly Interceptor[];
  /** Public read-only extensions. */
  hooks?: readonly Hook[];
  /** Default wall-clock limit of one tool call. Default `WORKER_DEFAULTS.toolTimeoutMs` (120 s). */
  toolTimeoutMs?: number;
  toolOutput?: ToolOutputLimits;
  /** Bounds on one model response. */
  bounds?: ResponseBounds;
  /** History to resume from (e.g. loaded from a session log). Copied. */
  history?: readonly Item[];
}

/** Options of one `run` or `resume`. */
export interface RunOptions {
  signal?: AbortSignal;
  /**
   * Who runs, for the run's `invoke_agent` span (OpenTelemetry): the
   * agent's name and id and the conversation (session) id. Telemetry only.
   */
  agent?: { name?: string; id?: string; conversationId?: string };
}

export interface RunResult {
  status: RunStatus;
  /** Model calls made by this run. */
  turns: number;
  /** Summed usage of those calls. */
  usage: Usage;
  /** Why the run was cancelled or paused (interceptor reason, abort reason). */
  reason?: string;
  /** Set when `status` is `failed`. */
  error?: WorkerError;
}
