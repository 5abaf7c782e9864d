/**
 * Session files: `<dir>/sessions/<id>.jsonl` (the log) and `<id>.lock` (its
 * writer's lock). Creating, opening (resume, with crash recovery), loading
 * (read-only), listing and finding the latest session.
 */
import { constants } from "node:fs";
import { mkdir, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@yoi/llm-client";
import { v7 as uuidv7 } from "uuid";
import { fsyncDir } from "./durable-fs.ts";
import { errnoOf } from "./fs-errors.ts";
import { checkSessionId, SessionLogError, sessionIoError } from "./session-error.ts";
import { SessionLock } from "./session-lock.ts";
import { type FsyncPolicy, SessionLog, type SyncedBefore } from "./session-log.ts";
import { type SessionRecord, type SessionStartFields, sessionStartInput } from "./session-records.ts";
import { type SessionMeta, SessionReplay, titleFromInput } from "./session-replay.ts";
import { type ScanResult, type SessionWarning, scanSessionFile } from "./session-scan.ts";

const LOG_EXT = ".jsonl";
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** The directory holding session logs under a yoi data directory. */
export function sessionsDir(dir: string): string {
  return join(dir, "sessions");
}

/** The log file of a session (after validating the id). */
export function sessionPath(dir: string, id: string): string {
  return join(sessionsDir(dir), `${checkSessionId(id)}${LOG_EXT}`);
}

function lockPath(dir: string, id: string): string {
  return join(sessionsDir(dir), `${id}.lock`);
}

/**
 * What a session's log is, whatever opens it: its id (validated), file and
 * sync policy, and the blob store it syncs first. `createSession` and
 * `openSession` add the open file, its lock and where the log continues.
 */
function sessionFile(options: { dir: string; id: string; fsync?: FsyncPolicy; blobs?: SyncedBefore }) {
  const id = checkSessionId(options.id);
  return {
    id,
    path: sessionPath(options.dir, id),
    fsync: options.fsync ?? "turn",
    ...(options.blobs !== undefined && { blobs: options.blobs }),
  };
}

/** A new session: where and under which id, how its log syncs, and what its session_start record tells. */
export interface CreateSessionOptions extends SessionStartFields {
  /** Data directory; the log goes to `<dir>/sessions/<id>.jsonl` (directories created, mode 0700). */
  dir: string;
  /** Session id; default a new UUID v7. */
  id?: string;
  /** Default `"turn"`. */
  fsync?: FsyncPolicy;
  /** A write-behind blob store its records reference: the log syncs it before each of its own fsyncs. */
  blobs?: SyncedBefore;
}

/**
 * Creates a new session log, takes its lock and writes session_start
 * (synced unless the policy is `never`). Rejects with `exists` if the id is
 * taken, `locked`, `invalid_id` or `io`.
 */
export async function createSession(options: CreateSessionOptions): Promise<SessionLog> {
  const file = sessionFile({ ...options, id: options.id ?? uuidv7() });
  const { id, path, fsync } = file;
  const dir = sessionsDir(options.dir);
  try {
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    throw sessionIoError("create the sessions directory", dir, error);
  }
  const lock = await SessionLock.acquire(lockPath(options.dir, id), `session ${id}`);
  let log: SessionLog | undefined;
  try {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(
        path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        FILE_MODE,
      );
    } catch (error) {
      if (errnoOf(error) === "EEXIST") {
        throw new SessionLogError(
          "exists",
          `session ${id} already exists (${path}); open it with openSession`,
          { path },
        );
      }
      throw sessionIoError("create the session log", path, error);
    }
    log = new SessionLog({ ...file, handle, lock, nextSeq: 0, size: 0, historyLength: 0 });
    // the new directory entry must be durable before anything depends on it
    if (fsync !== "never")
      await fsyncDir(dir).catch((error) => Promise.reject(sessionIoError("fsync", dir, error)));
    await log.append(sessionStartInput(id, options));
    return log;
  } catch (error) {
    if (log) await log.close().catch(() => {});
    else await lock.release();
    throw error;
  }
}

export interface OpenSessionOptions {
  dir: string;
  id: string;
  /** Default `"turn"`. */
  fsync?: FsyncPolicy;
  /** As for `createSession`. */
  blobs?: SyncedBefore;
}

/** A session opened for appending, with the state its log describes. */
export interface OpenedSession {
  log: SessionLog;
  /** The rebuilt history: hand it to the worker. */
  history: Item[];
  meta: SessionMeta;
  /** What recovery found (skipped lines, a truncated torn tail). */
  warnings: SessionWarning[];
  /** Bytes of torn tail cut off the end of the file (0 after a clean shutdown). */
  truncatedBytes: number;
}

/**
 * Opens an existing session for appending (resume): takes the lock, replays
 * the log, truncates a torn tail so the next append starts on a fresh line,
 * and continues the seq. Rejects with `not_found`, `locked`, `invalid_id`, `io`.
 */
export async function openSession(options: OpenSessionOptions): Promise<OpenedSession> {
  const file = sessionFile(options);
  const { id, path, fsync } = file;
  await stat(path).catch((error) => {
    if (errnoOf(error) === "ENOENT")
      throw new SessionLogError("not_found", `no session ${id} (${path})`, { path });
    throw sessionIoError("stat", path, error);
  });
  const lock = await SessionLock.acquire(lockPath(options.dir, id), `session ${id}`);
  try {
    // Read under the lock: nobody appends while we replay.
    const replay = new SessionReplay(id, path);
    const scan = await scanSessionFile(path, (record, line) => replay.apply(record, line));
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    } catch (error) {
      throw sessionIoError("open the session log for appending", path, error);
    }
    let truncatedBytes = 0;
    try {
      const size = (await handle.stat()).size;
      if (size > scan.validBytes) {
        await handle.truncate(scan.validBytes);
        if (fsync !== "never") await handle.datasync();
        truncatedBytes = size - scan.validBytes;
      }
    } catch (error) {
      await handle.close().catch(() => {});
      throw sessionIoError("truncate the torn tail of", path, error);
    }
    const log = new SessionLog({
      ...file,
      handle,
      lock,
      nextSeq: replay.meta.lastSeq + 1,
      size: scan.validBytes,
      historyLength: replay.history.length,
    });
    return {
      log,
      history: replay.history,
      meta: replay.meta,
      warnings: mergeWarnings(scan, replay),
      truncatedBytes,
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

export interface ResumeSessionOptions {
  dir: string;
  /** The session to resume; default the most recently updated one. */
  id?: string;
  fsync?: FsyncPolicy;
}

/** `openSession` of the given id, or of the latest session; `not_found` if there is none. */
export async function resumeSession(options: ResumeSessionOptions): Promise<OpenedSession> {
  const id = options.id ?? (await latestSession({ dir: options.dir }))?.id;
  if (id === undefined) {
    throw new SessionLogError("not_found", `no session to resume in ${sessionsDir(options.dir)}`, {
      path: sessionsDir(options.dir),
    });
  }
  return openSession({ dir: options.dir, id, ...(options.fsync && { fsync: options.fsync }) });
}

/** A session read in full, without taking its lock. */
export interface LoadedSession {
  records: SessionRecord[];
  history: Item[];
  meta: SessionMeta;
  warnings: SessionWarning[];
}

/**
 * Reads a whole session (for audit, export, or a read-only view). Safe while
 * another process appends: it reads up to the size at open and ignores an
 * incomplete last line.
 */
export async function loadSession(options: { dir: string; id: string }): Promise<LoadedSession> {
  const id = checkSessionId(options.id);
  const path = sessionPath(options.dir, id);
  const replay = new SessionReplay(id, path);
  const records: SessionRecord[] = [];
  const scan = await scanSessionFile(path, (record, line) => {
    records.push(record);
    replay.apply(record, line);
  });
  return { records, history: replay.history, meta: replay.meta, warnings: mergeWarnings(scan, replay) };
}

function mergeWarnings(scan: ScanResult, replay: SessionReplay): SessionWarning[] {
  const warnings = [...scan.warnings, ...replay.warnings].sort((a, b) => a.line - b.line);
  if (replay.meta.records === 0) {
    warnings.unshift({
      line: 0,
      offset: 0,
      message: "the log holds no records (a crash right after it was created?)",
    });
  } else if (replay.meta.createdAt === undefined) {
    warnings.unshift({ line: 0, offset: 0, message: "the log has no session_start record" });
  }
  return warnings;
}

/** One row of `listSessions`. */
export interface SessionSummary {
  id: string;
  path: string;
  /** Last title record, else the first line of the first user input. */
  title?: string;
  /** ISO time of session_start. */
  createdAt?: string;
  /** ISO time of the file's last modification. */
  updatedAt: string;
  model?: string;
  provider?: string;
  /** The model as the config named it (`<provider>/<model>`), from the config snapshot or a later switch. */
  modelRef?: string;
  /** The provider's base URL the session used, when one was set. */
  baseURL?: string;
  /** The permission mode the session ran in. */
  permissionMode?: string;
  /** The first line of the first prompt (the title may be a later explicit one). */
  firstPrompt?: string;
  /** The session this one was forked from. */
  parentSessionId?: string;
  cwd?: string;
  /** The git branch the session began on, when it was in a repository. */
  gitBranch?: string;
  sizeBytes: number;
  /**
   * The run failed (or was cancelled) before the model said anything, and
   * nothing else happened: not worth listing by default.
   */
  failedBeforeOutput: boolean;
}

const HEAD_BYTES = 64 * 1024;
const HEAD_MAX_BYTES = 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

/**
 * Lists sessions, most recently updated first, without reading whole files:
 * size and times come from `stat`; start, model and title from the head of
 * the file (and a later title or model switch from its last 64 KiB).
 * A missing directory lists as empty.
 */
export async function listSessions(options: { dir: string; limit?: number }): Promise<SessionSummary[]> {
  const files = await statLogs(options.dir);
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const chosen = options.limit === undefined ? files : files.slice(0, options.limit);
  const out: SessionSummary[] = [];
  // bounded parallelism: a few heads at a time
  for (let i = 0; i < chosen.length; i += 8) {
    out.push(...(await Promise.all(chosen.slice(i, i + 8).map((f) => summarize(f)))));
  }
  return out;
}

/**
 * The full id of the session whose id starts with `prefix` (any unique
 * prefix, case-insensitive). Rejects with `not_found` when none does and
 * `ambiguous` (naming the candidates) when several do.
 */
export async function findSessionId(options: { dir: string; prefix: string }): Promise<string> {
  const prefix = options.prefix.trim().toLowerCase();
  if (prefix === "" || !/^[A-Za-z0-9_-]+$/.test(prefix)) {
    throw new SessionLogError(
      "invalid_id",
      `invalid session id ${JSON.stringify(options.prefix.slice(0, 80))}: give an id or the start of one`,
    );
  }
  const files = await statLogs(options.dir);
  const exact = files.find((f) => f.id.toLowerCase() === prefix);
  if (exact) return exact.id;
  const matches = files.filter((f) => f.id.toLowerCase().startsWith(prefix));
  if (matches.length === 1) return (matches[0] as LogFile).id;
  if (matches.length === 0) {
    throw new SessionLogError("not_found", `no session "${options.prefix}" in ${sessionsDir(options.dir)}`, {
      path: sessionsDir(options.dir),
    });
  }
  matches.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const shown = matches.slice(0, 5).map((f) => f.id);
  throw new SessionLogError(
    "ambiguous",
    `"${options.prefix}" matches ${matches.length} sessions (${shown.join(", ")}${matches.length > 5 ? ", ..." : ""}); give more of the id`,
    { path: sessionsDir(options.dir) },
  );
}

/** The most recently updated session, or undefined when there is none. */
export async function latestSession(options: { dir: string }): Promise<SessionSummary | undefined> {
  const files = await statLogs(options.dir);
  let latest: LogFile | undefined;
  for (const f of files) if (!latest || f.mtimeMs > latest.mtimeMs) latest = f;
  return latest && summarize(latest);
}

interface LogFile {
  id: string;
  path: string;
  size: number;
  mtimeMs: number;
}

const LOG_NAME = /^([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.jsonl$/;

async function statLogs(dir: string): Promise<LogFile[]> {
  const sdir = sessionsDir(dir);
  let names: string[];
  try {
    names = await readdir(sdir);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw sessionIoError("list", sdir, error);
  }
  const files: LogFile[] = [];
  await Promise.all(
    names.map(async (name) => {
      const match = LOG_NAME.exec(name);
      if (!match) return;
      const path = join(sdir, name);
      try {
        const info = await stat(path);
        if (info.isFile())
          files.push({ id: match[1] as string, path, size: info.size, mtimeMs: info.mtimeMs });
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw sessionIoError("stat", path, error);
      }
    }),
  );
  return files;
}

async function summarize(file: LogFile): Promise<SessionSummary> {
  const summary: SessionSummary = {
    id: file.id,
    path: file.path,
    updatedAt: new Date(file.mtimeMs).toISOString(),
    sizeBytes: file.size,
    failedBeforeOutput: false,
  };
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file.path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return summary; // deleted or unreadable meanwhile: list what stat said
  }
  try {
    let explicitTitle: string | undefined;
    let inputTitle: string | undefined;
    let model: string | undefined;
    let sawStart = false;
    let sawFailure = false;
    let sawOutput = false;
    const take = (record: Record<string, unknown>): void => {
      switch (record.type) {
        case "session_start":
          sawStart = true;
          if (typeof record.ts === "string") summary.createdAt = record.ts;
          if (typeof record.model === "string") model = record.model;
          if (typeof record.provider === "string") summary.provider = record.provider;
          if (typeof record.cwd === "string") summary.cwd = record.cwd;
          if (typeof record.gitBranch === "string") summary.gitBranch = record.gitBranch;
          if (typeof record.parentSessionId === "string") summary.parentSessionId = record.parentSessionId;
          if (typeof record.baseURL === "string") summary.baseURL = record.baseURL;
          if (typeof record.permissionMode === "string") summary.permissionMode = record.permissionMode;
          if (isRecord(record.config) && typeof record.config.model === "string")
            summary.modelRef = record.config.model;
          break;
        case "error":
        case "cancel":
          sawFailure = true;
          break;
        case "item":
          if (record.reason === "assistant" || record.reason === "tool_result") sawOutput = true;
          break;
        case "usage":
        case "turn_end":
        case "file_change":
        case "history_replaced":
        case "rewind":
          sawOutput = true;
          break;
        case "user_input":
          if (inputTitle === undefined && typeof record.text === "string")
            inputTitle = titleFromInput(record.text);
          break;
        case "title":
          if (typeof record.title === "string") explicitTitle = record.title;
          break;
        case "config_change":
          if (typeof record.model === "string") model = record.model;
          if (isRecord(record.changes)) {
            const ref = record.changes.ref ?? record.changes.model;
            if (typeof ref === "string") summary.modelRef = ref;
            if (typeof record.changes.baseURL === "string") summary.baseURL = record.changes.baseURL;
            else if (record.changes.baseURL === null) delete summary.baseURL;
            if (typeof record.changes.permissionMode === "string")
              summary.permissionMode = record.changes.permissionMode;
          }
          break;
      }
    };
    // Head: grow until session_start and a title source are seen (bounded).
    let headEnd = 0;
    for (let want = HEAD_BYTES; ; want *= 2) {
      const size = Math.min(want, HEAD_MAX_BYTES, file.size);
      const buf = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(buf, 0, size, 0);
      const end = buf.lastIndexOf(10, bytesRead - 1);
      sawStart = sawFailure = sawOutput = false;
      explicitTitle = inputTitle = undefined;
      if (end >= 0) for (const r of parseLines(buf.toString("utf8", 0, end))) take(r);
      headEnd = end + 1;
      const done = sawStart && (explicitTitle !== undefined || inputTitle !== undefined);
      if (done || size >= file.size || size >= HEAD_MAX_BYTES) break;
    }
    // Tail: a later title or model switch.
    if (file.size > headEnd) {
      const from = Math.max(headEnd, file.size - TAIL_BYTES);
      const buf = Buffer.allocUnsafe(file.size - from);
      const { bytesRead } = await handle.read(buf, 0, buf.length, from);
      const text = buf.toString("utf8", 0, bytesRead);
      const firstNl = from === headEnd ? -1 : text.indexOf("\n");
      for (const r of parseLines(text.slice(firstNl + 1))) {
        if (r.type === "title" || r.type === "config_change") take(r);
      }
    }
    // Only a log read whole can show that nothing but a failure happened.
    summary.failedBeforeOutput = headEnd >= file.size && sawFailure && !sawOutput;
    if (inputTitle !== undefined) summary.firstPrompt = inputTitle;
    const title = explicitTitle ?? inputTitle;
    if (title !== undefined) summary.title = title;
    if (model !== undefined) summary.model = model;
    return summary;
  } finally {
    await handle.close().catch(() => {});
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function* parseLines(text: string): Generator<Record<string, unknown>> {
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "object" && value !== null) yield value as Record<string, unknown>;
    } catch {
      // damaged lines do not stop a listing
    }
  }
}
