/**
 * What every session writer shares, the JSONL `SessionLog` and the
 * PostgreSQL `PgSessionLog` alike: appends serialized in one queue (so
 * `seq` order is storage order), each record stamped with the next `seq`,
 * the history length tracked across items and replacements, a writer that
 * stops taking records once closed or broken, and the typed helpers (one
 * per record type), so a record is built one way. A subclass stores one
 * stamped record and says what a closed writer answers.
 */
import type { Item, StopReason, Usage } from "@yoi/llm-client";
import type { HistoryReplacement } from "@yoi/llm-worker";
import type { SessionLogError } from "./session-error.ts";
import {
  type AlertRecord,
  type InputSegment,
  type ItemReason,
  type ItemRecord,
  type SessionRecord,
  type SessionRecordInput,
  type SubagentRecord,
  stampRecord,
} from "./session-records.ts";

export abstract class SessionRecordWriter {
  /** The session's id. */
  readonly id: string;
  /** Where its records go (a file path, or a database location with the id). */
  readonly path: string;
  #nextSeq: number;
  #historyLength: number;
  #queue: Promise<unknown> = Promise.resolve();
  /** `broken`: a write failed in a way the writer could not undo; it takes no more records. */
  protected state: "open" | "closing" | "closed" | "broken" = "open";

  protected constructor(init: { id: string; path: string; nextSeq: number; historyLength: number }) {
    this.id = init.id;
    this.path = init.path;
    this.#nextSeq = init.nextSeq;
    this.#historyLength = init.historyLength;
  }

  /** seq the next record gets. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Length of the history the logged records describe. */
  get historyLength(): number {
    return this.#historyLength;
  }

  /** Appends one record; resolves with it (seq and ts filled in) once stored. */
  append<T extends SessionRecordInput>(input: T): Promise<Extract<SessionRecord, { type: T["type"] }>> {
    if (this.state !== "open") return Promise.reject(this.closedError());
    return this.serialized(() => this.#write(input)) as Promise<Extract<SessionRecord, { type: T["type"] }>>;
  }

  /**
   * Resolves while this writer may still act for the session; a host checks
   * it before work the log cannot fence (running a tool). A JSONL log holds
   * its lock file as long as the process lives, so it always may; the
   * PostgreSQL log confirms its lease.
   */
  async ensureHeld(): Promise<void> {}

  /** Resolves when every append issued so far has settled. */
  async flush(): Promise<void> {
    await this.#queue;
  }

  /** Runs `work` once every append issued before it has settled, and before any issued after. */
  protected serialized<R>(work: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Stores one stamped record, or throws (and, if the storage cannot be trusted any more, sets `broken`). */
  protected abstract store(record: SessionRecord): Promise<void>;

  /** Runs after a record is stored and counted (the JSONL log fsyncs here, per its policy). */
  protected async stored(_record: SessionRecord): Promise<void> {}

  /** What an append to a closed or broken writer rejects with. */
  protected abstract closedError(): SessionLogError;

  async #write(input: SessionRecordInput): Promise<SessionRecord> {
    if (this.state === "broken" || this.state === "closed") throw this.closedError();
    const record = stampRecord(input, this.#nextSeq);
    await this.store(record);
    this.#nextSeq++;
    if (record.type === "item") this.#historyLength = Math.max(this.#historyLength, record.index) + 1;
    else if (record.type === "history_replaced") this.#historyLength = record.history.length;
    await this.stored(record);
    return record;
  }

  /** What the user submitted, with its segments (text and `@path` refs). */
  userInput(text: string, segments?: InputSegment[], turn?: number, author?: string): Promise<SessionRecord> {
    return this.append({
      type: "user_input",
      text,
      ...(segments && { segments }),
      ...(turn !== undefined && { turn }),
      ...(author !== undefined && { author }),
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
