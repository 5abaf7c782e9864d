import { checkSessionId } from "./session-error.ts";
import type { FsyncPolicy, SyncedBefore } from "./session-log.ts";
import type { SessionRecord } from "./session-records.ts";
import { scanSessionFile } from "./session-scan.ts";
import {
  createSession,
  listSessions,
  loadSession,
  openSession,
  sessionPath,
  sessionsDir,
} from "./session-store.ts";
import type { NewSessionOptions, SessionStore, StoreOpenedSession } from "./session-store-port.ts";

/** The JSONL session files under a data directory, as a `SessionStore`. */
export class FileSessionStore implements SessionStore {
  readonly dir: string;
  readonly #fsync: FsyncPolicy | undefined;
  readonly #blobs: SyncedBefore | undefined;

  /**
   * `dir`: the data directory (`<dir>/sessions/*.jsonl`); `fsync` default
   * `"turn"`; `blobs`: a write-behind blob store (`FsBlobStore` with
   * `deferSync`) the sessions' records reference, synced before each log fsync.
   */
  constructor(options: { dir: string; fsync?: FsyncPolicy; blobs?: SyncedBefore }) {
    this.dir = options.dir;
    this.#fsync = options.fsync;
    this.#blobs = options.blobs;
  }

  #logOptions() {
    return {
      dir: this.dir,
      ...(this.#fsync && { fsync: this.#fsync }),
      ...(this.#blobs && { blobs: this.#blobs }),
    };
  }

  get location(): string {
    return sessionsDir(this.dir);
  }

  create(options: NewSessionOptions) {
    return createSession({ ...options, ...this.#logOptions() });
  }

  open(id: string): Promise<StoreOpenedSession> {
    return openSession({ ...this.#logOptions(), id });
  }

  load(id: string) {
    return loadSession({ dir: this.dir, id });
  }

  list(options: { limit?: number } = {}) {
    return listSessions({ dir: this.dir, ...options });
  }

  /** Scans the file (up to its size now; an incomplete last line is left for the next read). */
  async recordsAfter(id: string, afterSeq: number): Promise<SessionRecord[]> {
    const records: SessionRecord[] = [];
    await scanSessionFile(sessionPath(this.dir, checkSessionId(id)), (record) => {
      if (record.seq > afterSeq) records.push(record);
    });
    return records;
  }
}
