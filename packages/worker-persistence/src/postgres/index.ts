/**
 * `@yoi/worker-persistence/postgres`: the session store and BlobStore on
 * PostgreSQL, behind a subpath so the file-only install never loads a
 * driver. Install the optional peer dependency `postgres` to use it.
 */
export { PgBlobStore } from "./pg-blob-store.ts";
export { PgStoreError, type PgStoreErrorCode } from "./pg-error.ts";
export { type LeaseHolder, SessionLeasedError } from "./pg-lease.ts";
export { MIGRATIONS, type Migration, SCHEMA_VERSION } from "./pg-migrations.ts";
export { PgSessionAccess } from "./pg-session-access.ts";
export { PgSessionLog } from "./pg-session-log.ts";
export { PgSessionStore } from "./pg-session-store.ts";
export { MAX_SIGNAL_BYTES, PgSignals } from "./pg-signals.ts";
export { PgStore, type PgStoreOptions } from "./pg-store.ts";
export { describePostgresUrl, isPostgresUrl } from "./pg-url.ts";
