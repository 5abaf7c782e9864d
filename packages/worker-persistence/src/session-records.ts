/**
 * The session log's record format: one JSON object per line, a versioned
 * discriminated union. Every record carries `v` (format version), `type`,
 * `seq` (0 for session_start, +1 per record, in file order) and `ts` (ISO
 * 8601 time of the append). Serialized with `v` first, so every line starts
 * with `{"v":` — recovery relies on that to split glued records.
 */
import type { Item, StopReason, Usage } from "@yoi/llm-client";

/** The record format version this package writes and reads. */
export const SESSION_LOG_VERSION = 1;

/** Why an item entered history. */
export type ItemReason =
  /** The user's own message. */
  | "user"
  /** Inserted by an Interceptor (`ContinueWith`). */
  | "interceptor"
  /** A `[File: <path>]` system message of an `@path` reference (seed 001). */
  | "file_ref"
  /** Model output: assistant message, reasoning or tool call. */
  | "assistant"
  /** A tool's result. */
  | "tool_result"
  /** Made by the runtime (e.g. a cancelled tool call's synthetic result). */
  | "synthetic";

/** One piece of what the user typed (seed 001: text and `@path` file refs). */
export type InputSegment = { type: "text"; text: string } | { type: "file_ref"; path: string };

interface RecordBase {
  v: number;
  seq: number;
  /** ISO 8601 time of the append. */
  ts: string;
}

export interface SessionStartRecord extends RecordBase {
  type: "session_start";
  sessionId: string;
  /** The model id in use (e.g. `claude-sonnet-4-5`). */
  model?: string;
  provider?: string;
  /** Working directory of the session. */
  cwd?: string;
  /** Snapshot of the effective config (never secrets: the caller strips API keys). */
  config?: Record<string, unknown>;
  /** The session this one was forked or continued from. */
  parentSessionId?: string;
  /** Version of the software that created it. */
  appVersion?: string;
}

export interface UserInputRecord extends RecordBase {
  type: "user_input";
  /** The submitted text as typed. */
  text: string;
  segments?: InputSegment[];
  turn?: number;
}

export interface ItemRecord extends RecordBase {
  type: "item";
  /** The item's position in history after this commit (normally the old length). */
  index: number;
  reason: ItemReason;
  item: Item;
  turn?: number;
}

export interface UsageRecord extends RecordBase {
  type: "usage";
  /** The model that served the call. */
  model?: string;
  usage: Usage;
  turn?: number;
  durationMs?: number;
  responseId?: string;
}

export interface TurnEndRecord extends RecordBase {
  type: "turn_end";
  turn?: number;
  stopReason?: StopReason;
  durationMs?: number;
}

export interface CancelRecord extends RecordBase {
  type: "cancel";
  reason?: string;
  turn?: number;
}

export interface ErrorRecord extends RecordBase {
  type: "error";
  code: string;
  message: string;
  retryable?: boolean;
  turn?: number;
}

/** A compaction (or trim) boundary: history was replaced wholesale. */
export interface HistoryReplacedRecord extends RecordBase {
  type: "history_replaced";
  /** `compaction`, `trim`, `rewind`, ... */
  reason: string;
  history: Item[];
  detail?: Record<string, unknown>;
}

export interface ConfigChangeRecord extends RecordBase {
  type: "config_change";
  /** Changed settings (key -> new value); never secrets. */
  changes: Record<string, unknown>;
  /** The new model, when the change switched it. */
  model?: string;
}

export interface AlertRecord extends RecordBase {
  type: "alert";
  level: "info" | "warn" | "error";
  /** What raised it, e.g. `file_ref`, `hook`, `pod`. */
  source: string;
  message: string;
}

export interface TitleRecord extends RecordBase {
  type: "title";
  title: string;
}

export type SessionRecord =
  | SessionStartRecord
  | UserInputRecord
  | ItemRecord
  | UsageRecord
  | TurnEndRecord
  | CancelRecord
  | ErrorRecord
  | HistoryReplacedRecord
  | ConfigChangeRecord
  | AlertRecord
  | TitleRecord;

export type SessionRecordType = SessionRecord["type"];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What a caller appends: a record without the fields the log assigns. */
export type SessionRecordInput = DistributiveOmit<SessionRecord, "v" | "seq" | "ts">;

const TYPES = new Set<string>([
  "session_start",
  "user_input",
  "item",
  "usage",
  "turn_end",
  "cancel",
  "error",
  "history_replaced",
  "config_change",
  "alert",
  "title",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isItemShape(value: unknown): value is Item {
  return isObject(value) && typeof value.type === "string";
}

/**
 * Checks a parsed line; returns undefined when it is a record this version
 * can apply, or why not. Deliberately shallow (it runs once per line of a
 * possibly 100 MB log): it checks what replay depends on.
 */
export function recordProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not a JSON object";
  const { v, type, seq } = value;
  if (typeof v !== "number") return "no version field `v`";
  if (typeof type !== "string") return "no `type`";
  if (v > SESSION_LOG_VERSION)
    return `written by a newer format (v${v}; this reader knows v${SESSION_LOG_VERSION})`;
  if (!TYPES.has(type)) return `unknown record type ${JSON.stringify(type)}`;
  if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) return "no integer `seq`";
  switch (type) {
    case "item":
      if (!Number.isInteger(value.index) || (value.index as number) < 0)
        return "item record without a valid `index`";
      if (!isItemShape(value.item)) return "item record without an `item`";
      return undefined;
    case "history_replaced":
      if (!Array.isArray(value.history) || !value.history.every(isItemShape)) {
        return "history_replaced record without a valid `history` array";
      }
      return undefined;
    case "session_start":
      return typeof value.sessionId === "string" ? undefined : "session_start without `sessionId`";
    case "user_input":
      return typeof value.text === "string" ? undefined : "user_input without `text`";
    default:
      return undefined;
  }
}

/** Serializes a record as one line (with the trailing newline), `v` first. */
export function serializeRecord(record: SessionRecord): string {
  return `${JSON.stringify(record)}\n`;
}
