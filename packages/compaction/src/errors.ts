import { YoiError } from "@yoi/manifest/errors";

/**
 * The one error type `@yoi/compaction` throws across its boundary. Callers
 * switch on `code`, never on the message.
 *
 * - `invalid_config`: A config value is invalid (the message names the field and the fix).
 * - `unknown_model`: The model's context window is not in the catalog
 *   (docs/design/context-management.md#the-strict-context-limit).
 * - `summary_failed`: The summary call failed (provider error, empty answer, cancelled).
 * - `no_progress`: Compacting again would not free room; stopping instead of looping.
 * - `cache`: A tool output cache operation failed (unknown ref, bad range, bad pattern, store error).
 */
export type CompactionErrorCode =
  | "invalid_config"
  | "unknown_model"
  | "summary_failed"
  | "no_progress"
  | "cache";

export class CompactionError extends YoiError<CompactionErrorCode> {
  override readonly name = "CompactionError";
  static override readonly marker: symbol = Symbol.for("yoi.error.CompactionError");
}
