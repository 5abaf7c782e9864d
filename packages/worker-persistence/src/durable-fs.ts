/**
 * Small durable-filesystem primitives shared by the blob store and the
 * session log: fsync of a directory (so a created/renamed entry survives a
 * power loss) and the pid-liveness check used by temp-file cleanup and locks.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { errnoOf } from "./fs-errors.ts";

/**
 * Fsyncs a directory so entries created, renamed or removed in it are durable.
 * File systems that cannot fsync a directory (`EINVAL`, `EISDIR`, `EPERM` on
 * some platforms) are tolerated: there is nothing more a process can do.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch (error) {
    const errno = errnoOf(error);
    if (errno !== "EINVAL" && errno !== "EISDIR" && errno !== "EPERM" && errno !== "EBADF") throw error;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * Whether a process with this pid is alive on this host. `EPERM` means it
 * exists but belongs to another user, which counts as alive.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) === "EPERM";
  }
}
