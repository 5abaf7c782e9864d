/**
 * The single-writer lock of a session log: `<id>.lock` next to the log,
 * created with O_EXCL and holding the owner's pid, host and a nonce. A lock
 * whose owner is dead (same host, no such pid) is taken over; a live owner
 * gets the caller a `locked` error naming the pid and the file.
 */
import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { link, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { v7 as uuidv7 } from "uuid";
import { isProcessAlive } from "./durable-fs.ts";
import { errnoOf } from "./fs-errors.ts";
import { SessionLogError, sessionIoError } from "./session-error.ts";

interface LockOwner {
  pid: number;
  host: string;
  nonce: string;
  since: string;
}

/** Locks held by this process (path -> nonce), released at exit if not before. */
const held = new Map<string, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const path of held.keys()) {
      try {
        unlinkSync(path);
      } catch {
        // best effort: a dead owner's lock is taken over by the next opener anyway
      }
    }
  });
}

// A lock file is written right after its O_EXCL create; one that is still
// empty or unparsable after this long belongs to a writer that died in between.
const UNREADABLE_LOCK_GRACE_MS = 2000;

export class SessionLock {
  readonly path: string;
  readonly #nonce: string;
  #released = false;

  private constructor(path: string, nonce: string) {
    this.path = path;
    this.#nonce = nonce;
  }

  static async acquire(path: string, what: string): Promise<SessionLock> {
    installExitHook();
    for (let attempt = 0; attempt < 5; attempt++) {
      const nonce = uuidv7();
      const owner: LockOwner = { pid: process.pid, host: hostname(), nonce, since: new Date().toISOString() };
      try {
        const handle = await open(path, "wx", 0o600);
        try {
          await handle.writeFile(JSON.stringify(owner));
        } finally {
          await handle.close();
        }
        held.set(path, nonce);
        return new SessionLock(path, nonce);
      } catch (error) {
        if (errnoOf(error) !== "EEXIST") throw sessionIoError("create the lock file", path, error);
      }
      const current = await readOwner(path);
      if (current === "gone") continue;
      if (current === "unreadable") {
        const age = await stat(path).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age < UNREADABLE_LOCK_GRACE_MS) {
          throw new SessionLogError(
            "locked",
            `${what} is being opened by another process (lock file ${path})`,
            {
              path,
            },
          );
        }
      } else if (held.get(path) === current.nonce) {
        throw new SessionLogError(
          "locked",
          `${what} is already open for writing in this process (pid ${current.pid}, lock file ${path}); close the other SessionLog first`,
          { path, pid: current.pid },
        );
      } else if (current.host !== hostname()) {
        throw new SessionLogError(
          "locked",
          `${what} is locked by pid ${current.pid} on host ${current.host} (lock file ${path}); if that process is gone, delete the lock file`,
          { path, pid: current.pid },
        );
      } else if (current.pid !== process.pid && isProcessAlive(current.pid)) {
        throw new SessionLogError(
          "locked",
          `${what} is open for writing in another process (pid ${current.pid}, lock file ${path}); close it there, or if pid ${current.pid} is not yoi, delete the lock file`,
          { path, pid: current.pid },
        );
      }
      // The owner is dead (or an earlier process that had our pid): take over.
      await takeOver(path, current === "unreadable" ? undefined : current.nonce);
    }
    throw new SessionLogError("locked", `${what}: could not acquire the lock file ${path} (contended)`, {
      path,
    });
  }

  /** Removes the lock file if it is still ours. Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    held.delete(this.path);
    const current = await readOwner(this.path);
    if (current !== "gone" && current !== "unreadable" && current.nonce === this.#nonce) {
      await unlink(this.path).catch(() => {});
    }
  }
}

async function readOwner(path: string): Promise<LockOwner | "gone" | "unreadable"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return "gone";
    throw sessionIoError("read the lock file", path, error);
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (Number.isInteger(owner.pid) && typeof owner.nonce === "string" && typeof owner.host === "string")
      return owner;
  } catch {
    // fall through
  }
  return "unreadable";
}

/**
 * Moves a stale lock aside atomically (rename), then checks that what was
 * moved is the stale lock that was judged, not a fresh one another process
 * created in between; a fresh one is put back.
 */
async function takeOver(path: string, staleNonce: string | undefined): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return; // someone else took it over first; retry the create
    throw sessionIoError("take over the stale lock file", path, error);
  }
  const moved = await readOwner(aside);
  const isJudged =
    moved === "unreadable" ? staleNonce === undefined : moved !== "gone" && moved.nonce === staleNonce;
  if (!isJudged) await link(aside, path).catch(() => {});
  await unlink(aside).catch(() => {});
}
