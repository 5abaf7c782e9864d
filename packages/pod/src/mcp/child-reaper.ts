/**
 * Stdio MCP servers and background bash commands never outlive yoi. Closing a connection ends its process
 * (stdin closed, then SIGTERM, then SIGKILL); this covers the ways out that
 * skip the close: `process.exit`, an uncaught error, a signal handled by
 * exiting. On the process's `exit` every tracked child still running gets
 * SIGKILL (synchronously: nothing async runs at `exit`); a process group
 * (a background command and everything it started) is killed whole.
 */

/** Tracked pids; a negative one is a process group. */
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

/** Tracks a child process (an MCP server), or with `group` the process group it leads (a background command). */
export function trackChild(pid: number, options: { group?: boolean } = {}): void {
  children.add(options.group ? -pid : pid);
  if (!installed) {
    installed = true;
    process.on("exit", reap);
  }
}

/** Stops tracking a child (or its group) that was closed properly. */
export function untrackChild(pid: number, options: { group?: boolean } = {}): void {
  children.delete(options.group ? -pid : pid);
}

/** Pids of the children still tracked (tests, `/mcp`). */
export function trackedChildren(): readonly number[] {
  return [...children];
}
