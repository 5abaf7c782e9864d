/** Typed errors of the PostgreSQL stores. */

export type PgStoreErrorCode =
  /** The database cannot be reached (refused, timed out, DNS, authentication). */
  | "unreachable"
  /** The store URL is not a `postgres://` / `postgresql://` URL. */
  | "invalid_url"
  /** The database holds a schema newer than this version of yoi knows. */
  | "schema_too_new"
  /** A migration failed; the schema was left at the last version that applied. */
  | "migration_failed";

const MARK = Symbol.for("yoi.PgStoreError");

/** Connecting, migrating or a lost connection; session-level failures are `SessionLogError`s. */
export class PgStoreError extends Error {
  override readonly name = "PgStoreError";
  readonly code: PgStoreErrorCode;
  /** The server, without user or password (`host:port/db`). */
  readonly where: string | undefined;

  constructor(code: PgStoreErrorCode, message: string, options: { where?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.where = options.where;
    Object.defineProperty(this, MARK, { value: true });
  }

  /** Recognises the error across copies of this package. */
  static is(error: unknown): error is PgStoreError {
    return typeof error === "object" && error !== null && MARK in error;
  }
}

/** Node/network error codes that mean the server is not there (or went away). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // server-side: admin shutdown, crash shutdown, cannot connect now
  "57P01",
  "57P02",
  "57P03",
  // authentication and unknown database: reachable in a sense, but unusable
  "28P01",
  "28000",
  "3D000",
]);

/** Whether a driver error means the database connection is lost or impossible. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECTION_CODES.has(code);
}

/** A short description of a driver error: its code and message, nothing from the URL. */
export function describeDbError(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === "string" && e.message !== "" ? e.message : String(error);
  const code = typeof e?.code === "string" ? e.code : undefined;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
