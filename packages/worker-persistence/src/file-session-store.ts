import type { FsyncPolicy } from "./session-log.ts";
import { createSession, listSessions, loadSession, openSession, sessionsDir } from "./session-store.ts";
import type { NewSessionOptions, SessionStore, StoreOpenedSession } from "./session-store-port.ts";

/** The JSONL session files under a data directory, as a `SessionStore`. */
export class FileSessionStore implements SessionStore {
  readonly dir: string;
  readonly #fsync: FsyncPolicy | undefined;

  /** `dir`: the data directory (`<dir>/sessions/*.jsonl`); `fsync` default `"turn"`. */
  constructor(options: { dir: string; fsync?: FsyncPolicy }) {
    this.dir = options.dir;
    this.#fsync = options.fsync;
  }

  get location(): string {
    return sessionsDir(this.dir);
  }

  create(options: NewSessionOptions) {
    return createSession({ ...options, dir: this.dir, ...(this.#fsync ? { fsync: this.#fsync } : {}) });
  }

  open(id: string): Promise<StoreOpenedSession> {
    return openSession({ dir: this.dir, id, ...(this.#fsync ? { fsync: this.#fsync } : {}) });
  }

  load(id: string) {
    return loadSession({ dir: this.dir, id });
  }

  list(options: { limit?: number } = {}) {
    return listSessions({ dir: this.dir, ...options });
  }
}
