/**
 * Stdio MCP servers never outlive yoi. Closing a connection ends its process
 * (stdin closed, then SIGTERM, then SIGKILL); this covers the ways out that
 * skip the close: `process.exit`, an uncaught error, a signal handled by
 * exiting. On the process's `exit` every tracked child still running gets
 * SIGKILL (synchronously: nothing async runs at `exit`).
 */

const children = new Set<number>();
let installed = false;

function reap(): void {
  for (const pid of children) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  children.clear();
}

/** Tracks a child process started for an MCP server. */
export function trackChild(pid: number): void {
  children.add(pid);
  if (!installed) {
    installed = true;
    process.on("exit", reap);
  }
}

/** Stops tracking a child that was closed properly. */
export function untrackChild(pid: number): void {
  children.delete(pid);
}

/** Pids of the children still tracked (tests, `/mcp`). */
export function trackedChildren(): readonly number[] {
  return [...children];
}
