/**
 * What a session store offers, whatever keeps the records: the JSONL files
 * (`FileSessionStore`) or PostgreSQL (`PgSessionStore` from
 * `@yoi/worker-persistence/postgres`). A host (the pod, `yoi serve`) is
 * written against these two types only.
 */
import type { SessionLog } from "./session-log.ts";
import type { SessionRecord } from "./session-records.ts";
import type { CreateSessionOptions, LoadedSession, OpenedSession, SessionSummary } from "./session-store.ts";

/**
 * An open session for appending, single writer. Both stores serialize
 * appends (seq order is storage order) and resolve an append only once the
 * record is stored.
 */
export type SessionWriter = Pick<
  SessionLog,
  | "id"
  | "path"
  | "nextSeq"
  | "historyLength"
  | "append"
  | "userInput"
  | "item"
  | "usage"
  | "turnEnd"
  | "cancel"
  | "error"
  | "historyReplaced"
  | "configChange"
  | "alert"
  | "subagent"
  | "title"
  | "flush"
  | "sync"
  | "ensureHeld"
  | "close"
>;

/** A session opened for appending through a `SessionStore`. */
export type StoreOpenedSession = Omit<OpenedSession, "log"> & { log: SessionWriter };

/** The session-start fields of a new session (the store decides where it lives). */
export type NewSessionOptions = Omit<CreateSessionOptions, "dir" | "fsync">;

/** A place sessions live in. Errors are `SessionLogError`s with the same codes for every store. */
export interface SessionStore {
  /** Where the sessions are, for messages: a directory, or `host:port/db` (never credentials). */
  readonly location: string;
  /** Creates a session and takes its writer lock; `exists` if the id is taken. */
  create(options: NewSessionOptions): Promise<SessionWriter>;
  /** Opens a session for appending (takes its lock, replays it); `not_found`, `locked`. */
  open(id: string): Promise<StoreOpenedSession>;
  /** Reads a whole session without taking its lock. */
  load(id: string): Promise<LoadedSession>;
  /** Sessions, most recently updated first. */
  list(options?: { limit?: number }): Promise<SessionSummary[]>;
  /**
   * The stored records whose seq is above `afterSeq`, in seq order, without
   * taking the lock (a reader following a session another host writes);
   * records that do not parse are left out. `not_found` for no such session.
   */
  recordsAfter(id: string, afterSeq: number): Promise<SessionRecord[]>;
}

/** Who may reach a session, where a host has users (`yoi serve` with tokens). */
export interface SessionAccess {
  /** The user who created it; undefined for a session made without users. */
  owner: string | undefined;
  /** Users the owner (or an administrator) granted it to, in the order granted. */
  members: string[];
}

/**
 * The users of each session, kept beside the sessions (the same directory,
 * the same database), so every host serving the store sees the same grants.
 */
export interface SessionAccessStore {
  /** The owner and members of a session (no owner and none for a session never recorded). */
  get(id: string): Promise<SessionAccess>;
  /** Records the session's owner (when it is created). */
  setOwner(id: string, owner: string): Promise<void>;
  /** Adds a member; granting one twice changes nothing. */
  grant(id: string, member: string): Promise<void>;
  /** The ids of the sessions `user` owns or was granted. */
  visibleTo(user: string): Promise<Set<string>>;
}
