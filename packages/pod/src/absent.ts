/**
 * Session start looks for a dozen optional files and directories (custom
 * commands, skills, agents, instruction files) that are usually not there.
 * An asynchronous call that finds nothing costs some 50-100 µs of CPU (an
 * Error with a stack), on every session's way to its first request; this
 * answers in a few microseconds, without an exception. What is there is
 * then read the usual (asynchronous, checked) way.
 */
import { lstatSync } from "node:fs";

/** True when nothing at all is at `path`, not even a dangling symlink. */
export function isAbsent(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false; // ENOTDIR, EACCES, ...: the real read reports it as it always did
  }
}
