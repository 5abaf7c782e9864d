/**
 * Where `yoi serve` keeps sessions and blobs: PostgreSQL for a
 * `postgres://` store (the driver is loaded only then), else the local files
 * of a data directory.
 */
import { stat } from "node:fs/promises";
import type { BlobStore } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import {
  FileSessionAccess,
  FileSessionStore,
  FsBlobStore,
  type SessionAccessStore,
  type SessionStore,
  sessionPath,
} from "@yoi/worker-persistence";
import { CliError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import type { LiveSignals } from "./live.ts";

/** The stores a server runs on. */
export interface ServeStore {
  readonly sessions: SessionStore;
  readonly blobs: BlobStore;
  /** Owners and members of sessions (users from `--token-file`). */
  readonly access: SessionAccessStore;
  /** This host's name in leases and 409 answers. */
  readonly holder: string;
  /** Where the data lives (no credentials), for the start-up line. */
  readonly location: string;
  /** Messages between the hosts of the store (PostgreSQL `LISTEN`/`NOTIFY`); none on files, where readers poll. */
  readonly signals?: LiveSignals;
  /** The size of a session's log file, for readers polling it (files only). */
  logSize?(id: string): Promise<number | undefined>;
  /** Who runs a session now (PostgreSQL leases); undefined when nobody does or the store cannot tell. */
  leaseHolder(id: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export interface OpenServeStoreOptions {
  /** `postgres://...`, or a data directory. */
  store: string | undefined;
  /** The data directory when `store` is not given. */
  dataDir: string;
  holder: string;
  /** Session lease length (PostgreSQL), ms. */
  leaseMs?: number;
  onLeaseLost?: (sessionId: string, reason: string) => void;
}

/**
 * Opens the store. A database that cannot be used rejects with a CliError
 * saying why in one line: a usage error (exit 2) for a URL that is not one,
 * exit 1 when the database is unreachable, too new or fails to migrate.
 */
export async function openServeStore(options: OpenServeStoreOptions): Promise<ServeStore> {
  const store = options.store;
  if (store !== undefined && /^postgres(ql)?:\/\//i.test(store)) {
    const { PgStore, PgStoreError } = await import("@yoi/worker-persistence/postgres");
    let pg: Awaited<ReturnType<typeof PgStore.connect>>;
    try {
      pg = await PgStore.connect({
        url: store,
        holder: options.holder,
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        ...(options.onLeaseLost ? { onLeaseLost: options.onLeaseLost } : {}),
        maxConnections: 20,
      });
    } catch (error) {
      if (!PgStoreError.isInstance(error)) throw error;
      const exit = error.code === "invalid_url" ? EXIT.usage : EXIT.error;
      throw new CliError(errorMessage(error).split("\n")[0] as string, exit, { cause: error });
    }
    return {
      sessions: pg.sessions,
      blobs: pg.blobs,
      access: pg.access,
      signals: pg.signals,
      holder: pg.holder,
      location: `postgres://${pg.where}`,
      leaseHolder: async (id) => (await pg.sessions.leaseHolder(id))?.holder,
      close: () => pg.close(),
    };
  }
  const dir = store ?? options.dataDir;
  // As a pod's own stores: the blobs' fsyncs run behind the tool loop (grouped), and each fsync of a session log
  // waits for them first, so a record on disk never points at a blob that is not.
  const blobs = await FsBlobStore.open({ dir, deferSync: true });
  return {
    sessions: new FileSessionStore({ dir, blobs }),
    blobs,
    access: new FileSessionAccess({ dir }),
    holder: options.holder,
    location: dir,
    // one host per data directory: the file lock refuses a second writer itself
    leaseHolder: async () => undefined,
    logSize: async (id) => (await stat(sessionPath(dir, id)).catch(() => undefined))?.size,
    close: async () => {},
  };
}
