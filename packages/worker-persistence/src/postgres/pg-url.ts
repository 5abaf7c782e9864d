import { PgStoreError } from "./pg-error.ts";

/** Whether a store string names a PostgreSQL database (as opposed to a local directory). */
export function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store.trim());
}

/**
 * Checks a `postgres://` URL and returns where it points without secrets
 * (`host:port/db`), for messages and session paths.
 */
export function describePostgresUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PgStoreError("invalid_url", `not a URL: expected postgres://user@host:5432/database`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new PgStoreError(
      "invalid_url",
      `unsupported store URL scheme ${JSON.stringify(parsed.protocol)}: expected postgres://user@host:5432/database`,
    );
  }
  const host = parsed.hostname || parsed.searchParams.get("host") || "localhost";
  const port = parsed.port || "5432";
  const db = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || parsed.username || "postgres";
  return `${host}:${port}/${db}`;
}
