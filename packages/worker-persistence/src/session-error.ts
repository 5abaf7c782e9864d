import { YoiError } from "@yoi/manifest/errors";
import { errnoHint, errnoOf } from "./fs-errors.ts";

/**
 * What went wrong, as a stable string:
 *
 * - `locked`: Another process (or another handle in this one) holds the session's write lock.
 * - `not_found`: No log file for this session id.
 * - `ambiguous`: A session id prefix matches more than one session.
 * - `exists`: A session with this id already exists (createSession).
 * - `invalid_id`: The session id is not a safe file name.
 * - `closed`: Appending to a log that was closed (or broken by an unrecoverable write error).
 * - `io`: A file-system error; `errno` and `path` say which.
 */
export type SessionLogErrorCode =
  | "locked"
  | "not_found"
  | "ambiguous"
  | "exists"
  | "invalid_id"
  | "closed"
  | "io";

/** Typed error of the session log. */
export class SessionLogError extends YoiError<SessionLogErrorCode> {
  override readonly name = "SessionLogError";
  static override readonly marker: symbol = Symbol.for("yoi.error.SessionLogError");
  /** The file involved (log or lock file). */
  readonly path: string | undefined;
  /** The underlying errno code, for `io`. */
  readonly errno: string | undefined;
  /** For `locked`: the pid recorded in the lock file. */
  readonly pid: number | undefined;
  /** For `locked` by a lease (PostgreSQL store): the host that holds it. */
  readonly holder: string | undefined;

  constructor(
    code: SessionLogErrorCode,
    message: string,
    options: { path?: string; errno?: string; pid?: number; holder?: string; cause?: unknown } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.path = options.path;
    this.errno = options.errno;
    this.pid = options.pid;
    this.holder = options.holder;
  }
}

/** Wraps a Node fs error into a typed `io` SessionLogError naming the path and errno. */
export function sessionIoError(action: string, path: string, error: unknown): SessionLogError {
  if (SessionLogError.isInstance(error)) return error;
  const errno = errnoOf(error);
  return new SessionLogError("io", `cannot ${action} ${path}: ${errno ?? "error"} (${errnoHint(errno)})`, {
    path,
    errno,
    cause: error,
  });
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Validates a session id before it becomes part of a path. */
export function checkSessionId(id: unknown): string {
  if (typeof id !== "string" || !SESSION_ID.test(id)) {
    const shown = typeof id === "string" ? JSON.stringify(id.slice(0, 80)) : typeof id;
    throw new SessionLogError(
      "invalid_id",
      `invalid session id ${shown}: use 1-128 letters, digits, '-' or '_' (ids from createSession are UUID v7)`,
    );
  }
  return id;
}
