/**
 * The telemetry flush on the ways out that end with `process.exit` (a crash
 * report, a signal): those cannot await, so they hand their exit here. No
 * SDK is imported: without telemetry the exit happens at once, as before.
 */
let flush: (() => Promise<void>) | undefined;

/** Set by the telemetry set-up: what must run before the process exits. */
export function setExitFlush(fn: () => Promise<void>): void {
  flush = fn;
}

/** Calls `exit` after the telemetry flush (which bounds its own time), or at once when there is none. */
export function exitAfterFlush(exit: () => void): void {
  if (flush === undefined) {
    exit();
    return;
  }
  flush().then(exit, exit);
}
