import type { Item, LlmClient, ToolResultItem, Usage } from "@yoi/llm-client";
import type { BlobStore } from "./blob-store.ts";

/**
 * Where in the loop a context checkpoint runs
 * (docs/design/context-management.md#checkpoints-in-the-loop).
 */
export type ContextCheckpoint = "after_model_call" | "after_tools" | "before_return";

export interface ContextState {
  /** The worker's history at this point (do not mutate; return a new array to replace it). */
  readonly history: readonly Item[];
  /** Usage of the most recent model call, in the llm-client convention. */
  readonly lastUsage: Usage | undefined;
  /** The client the worker uses (for a summary call when no compaction model is set). */
  readonly client: LlmClient;
  readonly blobStore: BlobStore | undefined;
  readonly signal: AbortSignal;
}

/** What a policy returns when it changes history. */
export interface HistoryReplacement {
  /** The new history (replaces the old one entirely). */
  history: Item[];
  /** Why, for the session log and UIs: `compaction` or `trim`. */
  reason: "compaction" | "trim";
  /** Free-form details for the log (e.g. tokens before/after, summary length). */
  detail?: Record<string, unknown>;
}

/**
 * The context-management port, declared here and implemented by
 * `@yoi/compaction` (tool output cache + compaction). The worker calls it at
 * the checkpoints of the loop; every method is optional.
 */
export interface ContextPolicy {
  /**
   * Called before every model request, before anything is sent. Throwing fails
   * the run with a `context_policy` error carrying the thrown message and
   * nothing is sent: for what the policy cannot work without (the model's
   * context window must be known:
   * docs/design/context-management.md#the-strict-context-limit).
   */
  checkRequest?(state: ContextState): Promise<void>;
  /**
   * Called for each tool result before it is committed; may return a new
   * result (e.g. the in-context view with an `outputRef`). `full` is the
   * tool's complete output text, before any Stored summary or cap.
   */
  prepareToolResult?(result: ToolResultItem, full: string, state: ContextState): Promise<ToolResultItem>;
  /**
   * Called at each checkpoint; returns a replacement to swap history, or
   * undefined. At `after_model_call` the history may end with tool calls
   * that have no results yet: a replacement must keep them (the worker runs
   * them next; calls that disappear are simply not run).
   */
  checkpoint?(point: ContextCheckpoint, state: ContextState): Promise<HistoryReplacement | undefined>;
  /**
   * Called when a model call failed with `context_overflow`. Returns a
   * replacement to retry the call once with it, or undefined to fail.
   */
  onContextOverflow?(state: ContextState): Promise<HistoryReplacement | undefined>;
}
