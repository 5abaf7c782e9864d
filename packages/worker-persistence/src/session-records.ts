/**
 * The session log's record format: one JSON object per line, a versioned
 * discriminated union. Every record carries `v` (format version), `type`,
 * `seq` (0 for session_start, +1 per record, in file order) and `ts` (ISO
 * 8601 time of the append). Serialized with `v` first, so every line starts
 * with `{"v":` — recovery relies on that to split glued records.
 */
import { type Item, redactedJson, type StopReason, type Usage } from "@yoi/llm-client";
import { itemProblem } from "./item-problem.ts";

/** The record format version this package writes and reads. */
export const SESSION_LOG_VERSION = 1;

/** Why an item entered history. */
export type ItemReason =
  /** The user's own message. */
  | "user"
  /** Inserted by an Interceptor (`ContinueWith`). */
  | "interceptor"
  /** A `[File: <path>]` system message of an `@path` reference (docs/design/file-refs.md). */
  | "file_ref"
  /** Model output: assistant message, reasoning or tool call. */
  | "assistant"
  /** A tool's result. */
  | "tool_result"
  /** Made by the runtime (e.g. a cancelled tool call's synthetic result). */
  | "synthetic";

/** One piece of what the user typed: text or an `@path` file ref. */
export type InputSegment = { type: "text"; text: string } | { type: "file_ref"; path: string };

interface RecordBase {
  v: number;
  seq: number;
  /** ISO 8601 time of the append. */
  ts: string;
}

/**
 * What a session_start record tells about its session. The options that
 * create a session carry the same fields (every store writes them as they
 * are, see `sessionStartInput`).
 */
export interface SessionStartFields {
  /** The model id in use (e.g. `claude-sonnet-4-5`). */
  model?: string;
  provider?: string;
  /** Working directory of the session. */
  cwd?: string;
  /** Snapshot of the effective config for the audit trail (never secrets: the caller strips API keys). */
  config?: Record<string, unknown>;
  /** The provider's base URL, when one was set (a local or custom server), so a resume reaches the same server. */
  baseURL?: string;
  /** The permission mode the session runs in (e.g. `default`, `acceptEdits`, `plan`), so a resume runs in the same one. */
  permissionMode?: string;
  /** The session this one was forked or continued from. */
  parentSessionId?: string;
  /** For a fork: the parent's turn the copied history ends before (1-based; absent = the whole history). */
  forkedBeforeTurn?: number;
  /** Version of the software that created it. */
  appVersion?: string;
  /** The git branch checked out in the working directory when the session began ("detached HEAD" when none). */
  gitBranch?: string;
}

const SESSION_START_FIELDS = [
  "model",
  "provider",
  "cwd",
  "config",
  "baseURL",
  "permissionMode",
  "parentSessionId",
  "forkedBeforeTurn",
  "appVersion",
  "gitBranch",
] as const satisfies ReadonlyArray<keyof SessionStartFields>;

export interface SessionStartRecord extends RecordBase, SessionStartFields {
  type: "session_start";
  sessionId: string;
}

export interface UserInputRecord extends RecordBase {
  type: "user_input";
  /** The submitted text as typed. */
  text: string;
  segments?: InputSegment[];
  turn?: number;
  /** Who sent it, where the host knows users (a `yoi serve` token's name). */
  author?: string;
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

/**
 * A subagent (`task` tool call) ended: its whole transcript, so a resumed
 * or audited session can show what the child did. It does not change the
 * parent's history (the call's result is an item record of its own).
 */
export interface SubagentRecord extends RecordBase {
  type: "subagent";
  /** The parent's `task` call id. */
  callId: string;
  description: string;
  /** The named agent, when one was chosen. */
  agent?: string;
  /** `<provider>/<model>` the child ran on. */
  model: string;
  /** The child's run status (`completed`, `failed`, `cancelled`, `max_turns`, ...). */
  status: string;
  turns: number;
  usage: Usage;
  /** The blob holding the same transcript (readable with `inspect`). */
  blobId?: string;
  /** The child's history. */
  items: Item[];
}

export interface TitleRecord extends RecordBase {
  type: "title";
  title: string;
}

/**
 * A file's content at some moment, as a checkpoint keeps it: absent, kept
 * in the blob store (`blob`), or seen but not kept (too large; `reason`).
 */
export type FileState =
  | { kind: "absent" }
  | { kind: "file"; sha256: string; size: number; blob?: string; mode?: number }
  | { kind: "unsaved"; sha256: string; size: number; reason: string };

/**
 * A point a rewind can return to: written before a user turn starts
 * (`kind: "turn"`, numbered from 1) and before a rewind changes anything
 * (`kind: "rewind"`, so the rewind itself can be undone).
 */
export interface CheckpointRecord extends RecordBase {
  type: "checkpoint";
  kind: "turn" | "rewind";
  /** The user turn this checkpoint opens (1-based), or the turn number a rewind went back to. */
  turn: number;
  /** Short description (the turn's first prompt line). */
  label?: string;
}

/** A tool changed a file: its prior content (kept for a rewind) and the content it left. */
export interface FileChangeRecord extends RecordBase {
  type: "file_change";
  /** Real absolute path of the file. */
  path: string;
  /** The tool (`write_file`, `edit_file`, `bash`) or `rewind`. */
  tool: string;
  callId?: string;
  turn?: number;
  before: FileState;
  /** What the change left (`absent` for a deletion); blob never set. */
  after: FileState;
}

/** A rewind happened: files and/or conversation were put back to checkpoint `toSeq`. */
export interface RewindRecord extends RecordBase {
  type: "rewind";
  /** seq of the checkpoint record rewound to. */
  toSeq: number;
  /** Its turn number. */
  turn: number;
  files: boolean;
  conversation: boolean;
  /** Files put back. */
  restored: string[];
  /** Files changed outside yoi since, overwritten because the user said so. */
  forced?: string[];
  /** Files that could not be restored, and why. */
  failed?: { path: string; reason: string }[];
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
  | SubagentRecord
  | TitleRecord
  | CheckpointRecord
  | FileChangeRecord
  | RewindRecord;

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
  "subagent",
  "title",
  "checkpoint",
  "file_change",
  "rewind",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const optionalType = (value: unknown, type: "string" | "number" | "boolean"): boolean =>
  value === undefined || typeof value === type;

function fileStateProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not an object";
  switch (value.kind) {
    case "absent":
      return undefined;
    case "file":
      if (typeof value.sha256 !== "string" || typeof value.size !== "number")
        return "file state without sha256/size";
      return optionalType(value.blob, "string") ? undefined : "file state with a non-string blob";
    case "unsaved":
      return typeof value.sha256 === "string" && typeof value.size === "number"
        ? undefined
        : "unsaved state without sha256/size";
    default:
      return `unknown kind ${JSON.stringify(value.kind)}`;
  }
}

function usageProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "usage record without a `usage` object";
  for (const key of [
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "reasoningTokens",
  ]) {
    if (!optionalType(value[key], "number")) return `usage record whose \`${key}\` is not a number`;
  }
  return undefined;
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
  if (typeof value.ts !== "string") return "no `ts` time";
  switch (type) {
    case "item": {
      if (!Number.isInteger(value.index) || (value.index as number) < 0)
        return "item record without a valid `index`";
      const problem = itemProblem(value.item);
      return problem === undefined ? undefined : `item record: ${problem}`;
    }
    case "history_replaced": {
      if (!Array.isArray(value.history)) return "history_replaced record without a `history` array";
      for (let i = 0; i < value.history.length; i++) {
        const problem = itemProblem(value.history[i]);
        if (problem !== undefined) return `history_replaced record: history[${i}]: ${problem}`;
      }
      return typeof value.reason === "string" ? undefined : "history_replaced record without a `reason`";
    }
    case "session_start":
      if (typeof value.sessionId !== "string") return "session_start without `sessionId`";
      for (const key of [
        "model",
        "provider",
        "cwd",
        "baseURL",
        "permissionMode",
        "parentSessionId",
        "gitBranch",
      ]) {
        if (!optionalType(value[key], "string")) return `session_start whose \`${key}\` is not a string`;
      }
      return value.config === undefined || isObject(value.config)
        ? undefined
        : "session_start with a non-object `config`";
    case "user_input":
      if (typeof value.text !== "string") return "user_input without `text`";
      if (value.author !== undefined && typeof value.author !== "string")
        return "user_input whose `author` is not a string";
      return value.segments === undefined || Array.isArray(value.segments)
        ? undefined
        : "user_input whose `segments` is not an array";
    case "usage":
      return usageProblem(value.usage);
    case "turn_end":
    case "cancel":
    case "error":
      if (!optionalType(value.turn, "number")) return `${type} record whose \`turn\` is not a number`;
      if (type === "error" && (typeof value.code !== "string" || typeof value.message !== "string"))
        return "error record without `code` and `message`";
      return undefined;
    case "config_change":
      if (!isObject(value.changes)) return "config_change without a `changes` object";
      return optionalType(value.model, "string") ? undefined : "config_change whose `model` is not a string";
    case "alert":
      return typeof value.message === "string" && typeof value.source === "string"
        ? undefined
        : "alert without `source` and `message`";
    case "title":
      return typeof value.title === "string" ? undefined : "title record without a string `title`";
    case "checkpoint":
      if (value.kind !== "turn" && value.kind !== "rewind") return "checkpoint with an unknown `kind`";
      return Number.isInteger(value.turn) ? undefined : "checkpoint without an integer `turn`";
    case "file_change": {
      if (typeof value.path !== "string" || typeof value.tool !== "string")
        return "file_change without `path` and `tool`";
      const before = fileStateProblem(value.before);
      if (before !== undefined) return `file_change \`before\`: ${before}`;
      const after = fileStateProblem(value.after);
      return after === undefined ? undefined : `file_change \`after\`: ${after}`;
    }
    case "rewind":
      if (!Number.isInteger(value.toSeq) || !Number.isInteger(value.turn))
        return "rewind without `toSeq` and `turn`";
      return Array.isArray(value.restored) ? undefined : "rewind without a `restored` list";
    default:
      return undefined;
  }
}

/** The stored form of a record: format version, its sequence number and the time, set here only. */
export function stampRecord(input: SessionRecordInput, seq: number): SessionRecord {
  // `v` first: recovery splits glued lines at `{"v":`.
  const record = { v: SESSION_LOG_VERSION, seq, ts: "", ...input } as SessionRecord;
  // assigned after the spread so a caller cannot override them
  record.v = SESSION_LOG_VERSION;
  record.seq = seq;
  record.ts = new Date().toISOString();
  return record;
}

/**
 * Serializes a record as one line (with the trailing newline), `v` first,
 * with every secret yoi knows of redacted (keys, header values, URL
 * credentials): the session log never stores one.
 */
export function serializeRecord(record: SessionRecord): string {
  return `${redactedJson(record)}\n`;
}

/**
 * The session_start record of a new session, from the options that create
 * it (every store writes the same one): the fields of `SessionStartFields`
 * that are set, and nothing else of `options`.
 */
export function sessionStartInput(
  id: string,
  options: SessionStartFields,
): Extract<SessionRecordInput, { type: "session_start" }> {
  const input: Extract<SessionRecordInput, { type: "session_start" }> = {
    type: "session_start",
    sessionId: id,
  };
  for (const key of SESSION_START_FIELDS) {
    if (options[key] !== undefined) Object.assign(input, { [key]: options[key] });
  }
  return input;
}
