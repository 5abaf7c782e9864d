/** Typed errors of the PostgreSQL stores. */
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import { SessionLogError } from "../session-error.ts";

/**
 * What went wrong, as a stable string:
 *
 * - `unreachable`: The database cannot be reached (refused, timed out, DNS, authentication).
 * - `invalid_url`: The store URL is not a `postgres://` / `postgresql://` URL.
 * - `schema_too_new`: The database holds a schema newer than this version of yoi knows.
 * - `migration_failed`: A migration failed; the schema was left at the last version that applied.
 */
export type PgStoreErrorCode = "unreachable" | "invalid_url" | "schema_too_new" | "migration_failed";

/** Connecting, migrating or a lost connection; session-level failures are `SessionLogError`s. */
export class PgStoreError extends YoiError<PgStoreErrorCode> {
  override readonly name = "PgStoreError";
  static override readonly marker: symbol = Symbol.for("yoi.error.PgStoreError");
  /** The server, without user or password (`host:port/db`). */
  readonly where: string | undefined;

  constructor(code: PgStoreErrorCode, message: string, options: { where?: string; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.where = options.where;
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
  // An AggregateError (every address refused) has an empty message: its name says more.
  const message = errorMessage(error) || String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

/** A driver failure as a `SessionLogError` `io` naming the database (`location`), never the URL. */
export function dbIoError(location: string, action: string, error: unknown): SessionLogError {
  if (SessionLogError.isInstance(error)) return error;
  const hint = isConnectionError(error) ? " (the database is unreachable)" : "";
  return new SessionLogError("io", `cannot ${action} in ${location}: ${describeDbError(error)}${hint}`, {
    path: location,
    cause: error,
  });
}
