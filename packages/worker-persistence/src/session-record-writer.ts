/**
 * The typed helpers every session writer offers (one per record type), on
 * top of the writer's own `append`: the JSONL `SessionLog` and the
 * PostgreSQL `PgSessionLog` both extend this, so a record is built one way.
 */
import type { Item, StopReason, Usage } from "@yoi/llm-client";
import type { HistoryReplacement } from "@yoi/llm-worker";
import type {
  AlertRecord,
  InputSegment,
  ItemReason,
  ItemRecord,
  SessionRecord,
  SessionRecordInput,
  SubagentRecord,
} from "./session-records.ts";

export abstract class SessionRecordWriter {
  /** Appends one record; resolves with it (seq and ts filled in) once stored. */
  abstract append<T extends SessionRecordInput>(
    input: T,
  ): Promise<Extract<SessionRecord, { type: T["type"] }>>;

  /** Length of the history the logged records describe. */
  abstract get historyLength(): number;

  /** What the user submitted, with its segments (text and `@path` refs). */
  userInput(text: string, segments?: InputSegment[], turn?: number): Promise<SessionRecord> {
    return this.append({
      type: "user_input",
      text,
      ...(segments && { segments }),
      ...(turn !== undefined && { turn }),
    });
  }

  /**
   * A committed history item and why. `index` defaults to the current end
   * of history (the log tracks its length across items and replacements).
   */
  item(item: Item, reason: ItemReason, options: { index?: number; turn?: number } = {}): Promise<ItemRecord> {
    return this.append({
      type: "item",
      index: options.index ?? this.historyLength,
      reason,
      item,
      ...(options.turn !== undefined && { turn: options.turn }),
    });
  }

  usage(
    usage: Usage,
    details: { model?: string; turn?: number; durationMs?: number; responseId?: string } = {},
  ) {
    return this.append({ type: "usage", usage, ...details });
  }

  turnEnd(details: { turn?: number; stopReason?: StopReason; durationMs?: number } = {}) {
    return this.append({ type: "turn_end", ...details });
  }

  cancel(reason?: string, turn?: number) {
    return this.append({
      type: "cancel",
      ...(reason !== undefined && { reason }),
      ...(turn !== undefined && { turn }),
    });
  }

  error(error: { code: string; message: string; retryable?: boolean }, turn?: number) {
    return this.append({
      type: "error",
      code: error.code,
      message: error.message,
      ...(error.retryable !== undefined && { retryable: error.retryable }),
      ...(turn !== undefined && { turn }),
    });
  }

  /** A compaction/trim boundary: the worker's `HistoryReplacement`, logged whole. */
  historyReplaced(
    replacement: HistoryReplacement | { history: Item[]; reason: string; detail?: Record<string, unknown> },
  ) {
    return this.append({
      type: "history_replaced",
      reason: replacement.reason,
      history: replacement.history,
      ...(replacement.detail !== undefined && { detail: replacement.detail }),
    });
  }

  configChange(changes: Record<string, unknown>, model?: string) {
    return this.append({ type: "config_change", changes, ...(model !== undefined && { model }) });
  }

  /** A subagent's transcript (see `SubagentRecord`). */
  subagent(record: Omit<SubagentRecord, "type" | "v" | "seq" | "ts">) {
    return this.append({ type: "subagent", ...record });
  }

  alert(level: AlertRecord["level"], source: string, message: string) {
    return this.append({ type: "alert", level, source, message });
  }

  title(title: string) {
    return this.append({ type: "title", title });
  }
}
