import { YoiError } from "@yoi/manifest/errors";

/**
 * The one error type `@yoi/compaction` throws across its boundary. Callers
 * switch on `code`, never on the message.
 */
export type CompactionErrorCode =
  /** A config value is invalid (the message names the field and the fix). */
  | "invalid_config"
  /**
   * The model's context window is not in the catalog
   * (docs/design/context-management.md#the-strict-context-limit).
   */
  | "unknown_model"
  /** The summary call failed (provider error, empty answer, cancelled). */
  | "summary_failed"
  /** Compacting again would not free room; stopping instead of looping. */
  | "no_progress"
  /** A tool output cache operation failed (unknown ref, bad range, bad pattern, store error). */
  | "cache";

export class CompactionError extends YoiError<CompactionErrorCode> {
  override readonly name = "CompactionError";
  static override readonly marker: symbol = Symbol.for("yoi.error.CompactionError");
}
