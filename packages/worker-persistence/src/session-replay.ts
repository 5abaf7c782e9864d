import type { Item, Usage } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import type { SessionRecord } from "./session-records.ts";
import type { SessionWarning } from "./session-scan.ts";

/** What a log says about its session, gathered while replaying it. */
export interface SessionMeta {
  id: string;
  /** Path of the log file. */
  path: string;
  /** `ts` of session_start. */
  createdAt?: string;
  /** `ts` of the last record. */
  updatedAt?: string;
  /** Model of session_start, or of the last config_change that switched it. */
  model?: string;
  provider?: string;
  /** The provider's base URL of session_start (a custom or local server). */
  baseURL?: string;
  /** The permission mode of session_start. */
  permissionMode?: string;
  /** The session this one was forked from. */
  parentSessionId?: string;
  cwd?: string;
  /** The config snapshot of session_start. */
  config?: Record<string, unknown>;
  /** The last title record, else the first line of the first user input. */
  title?: string;
  /** Completed turns (turn_end records). */
  turns: number;
  /** The highest user turn a checkpoint opened (0 before the first). */
  userTurns: number;
  /** Whether the model ever answered (an assistant item, usage or a turn end). */
  hasOutput: boolean;
  /** Records loaded. */
  records: number;
  /** seq of the last record, -1 when there is none. */
  lastSeq: number;
  /** Summed usage of every model call. */
  usage: Required<Usage>;
}

const TITLE_MAX = 100;

/** The title a user input gives a session: its first non-blank line, shortened. */
export function titleFromInput(text: string): string | undefined {
  const first = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (first === undefined) return undefined;
  return first.length > TITLE_MAX ? `${first.slice(0, TITLE_MAX - 1)}…` : first;
}

/**
 * What a replay has rebuilt after some records: enough to continue it with
 * the records that follow (a snapshot). Plain JSON.
 */
export interface ReplayState {
  history: Item[];
  meta: Omit<SessionMeta, "id" | "path">;
  warnings: SessionWarning[];
}

/**
 * Rebuilds history and metadata from records in file order: items are
 * inserted at their recorded index (normally appended), a history_replaced
 * record swaps the whole history. The result equals the writer's history
 * after its last logged record.
 */
export class SessionReplay {
  readonly history: Item[] = [];
  readonly warnings: SessionWarning[] = [];
  readonly meta: SessionMeta;

  constructor(id: string, path: string) {
    this.meta = {
      id,
      path,
      turns: 0,
      userTurns: 0,
      hasOutput: false,
      records: 0,
      lastSeq: -1,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    };
  }

  /** A replay that continues from `state` (taken over as is, not copied). */
  static fromState(id: string, path: string, state: ReplayState): SessionReplay {
    const replay = new SessionReplay(id, path);
    Object.assign(replay.meta, state.meta, { id, path });
    for (const item of state.history) replay.history.push(item);
    for (const warning of state.warnings) replay.warnings.push(warning);
    return replay;
  }

  /** The state rebuilt so far; `warnings` replaces this replay's own (a caller may merge in its own). */
  state(warnings: SessionWarning[] = this.warnings): ReplayState {
    const { id: _id, path: _path, ...meta } = this.meta;
    return { history: this.history, meta, warnings };
  }

  /** Applies one record; a record that cannot be applied is skipped with a warning naming its line. */
  apply(record: SessionRecord, line: number): void {
    try {
      this.#apply(record, line);
    } catch (error) {
      this.warnings.push({
        line,
        offset: -1,
        message: `skipped: ${record.type} record seq ${record.seq} could not be applied (${errorMessage(error)})`,
      });
    }
  }

  #apply(record: SessionRecord, line: number): void {
    const meta = this.meta;
    if (record.seq <= meta.lastSeq) {
      this.warnings.push({
        line,
        offset: -1,
        message: `record seq ${record.seq} does not follow seq ${meta.lastSeq} (two writers, or a copied log?); applied in file order`,
      });
    }
    meta.lastSeq = record.seq;
    meta.records++;
    meta.updatedAt = record.ts;
    switch (record.type) {
      case "session_start":
        meta.createdAt ??= record.ts;
        meta.model = record.model ?? meta.model;
        meta.provider = record.provider ?? meta.provider;
        meta.cwd = record.cwd ?? meta.cwd;
        meta.baseURL = record.baseURL ?? meta.baseURL;
        meta.permissionMode = record.permissionMode ?? meta.permissionMode;
        meta.parentSessionId = record.parentSessionId ?? meta.parentSessionId;
        meta.config = record.config ?? meta.config;
        break;
      case "user_input":
        if (meta.title === undefined) meta.title = titleFromInput(record.text);
        break;
      case "title":
        meta.title = record.title;
        break;
      case "config_change":
        if (record.model !== undefined) meta.model = record.model;
        if (typeof record.changes.permissionMode === "string")
          meta.permissionMode = record.changes.permissionMode;
        break;
      case "turn_end":
        meta.turns++;
        meta.hasOutput = true;
        break;
      case "checkpoint":
        if (record.kind === "turn") meta.userTurns = Math.max(meta.userTurns, record.turn);
        break;
      case "usage": {
        meta.hasOutput = true;
        const u = record.usage ?? {};
        meta.usage.inputTokens += u.inputTokens ?? 0;
        meta.usage.outputTokens += u.outputTokens ?? 0;
        meta.usage.cacheReadTokens += u.cacheReadTokens ?? 0;
        meta.usage.cacheWriteTokens += u.cacheWriteTokens ?? 0;
        meta.usage.reasoningTokens += u.reasoningTokens ?? 0;
        break;
      }
      case "item": {
        if (record.reason === "assistant") meta.hasOutput = true;
        const history = this.history;
        if (record.index === history.length) history.push(record.item);
        else if (record.index < history.length) history.splice(record.index, 0, record.item);
        else {
          this.warnings.push({
            line,
            offset: -1,
            message: `item seq ${record.seq} has index ${record.index} but history has ${history.length} items (a record is missing); appended`,
          });
          history.push(record.item);
        }
        break;
      }
      case "history_replaced":
        // keep the same array object so `history` stays a live view
        this.history.length = 0;
        for (const item of record.history) this.history.push(item);
        break;
      default:
        break;
    }
  }
}

/** Rebuilds history from records (the pure form of `SessionReplay`). */
export function replayHistory(records: Iterable<SessionRecord>): Item[] {
  const replay = new SessionReplay("", "");
  let line = 0;
  for (const record of records) replay.apply(record, ++line);
  return replay.history;
}
