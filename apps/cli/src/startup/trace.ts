/**
 * Start-up phase timings (`YOI_TRACE_STARTUP=1`): each phase is marked with
 * the milliseconds since the process started (Node's `performance` clock
 * starts at process start), and the table is printed on stderr once the
 * first request leaves (or when the process exits, for commands that send
 * none). Off by default, and when off every call is one boolean test.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";

const enabled = process.env.YOI_TRACE_STARTUP === "1";
const marks: { phase: string; at: number }[] = [];
let printed = false;

/** Records that `phase` ended now. */
export function markStartup(phase: string): void {
  if (!enabled || printed) return;
  marks.push({ phase, at: performance.now() });
}

/** True when `YOI_TRACE_STARTUP=1`. */
export function startupTraceEnabled(): boolean {
  return enabled;
}

/**
 * Marks the first HTTP request and prints the table: the moment a request
 * is handed to Node's HTTP client, whichever provider it is (the SDKs send
 * with `node:http` in the bundle, ./provider-fetch.ts; with undici when
 * something uses Node's `fetch`).
 */
export function traceFirstRequest(): void {
  if (!enabled) return;
  const first = () => {
    if (printed) return;
    markStartup("first request sent");
    printStartupTrace();
  };
  diagnostics_channel.subscribe("http.client.request.start", first);
  diagnostics_channel.subscribe("undici:request:create", first);
  process.once("exit", () => printStartupTrace());
}

/** Writes the phases, with the time each took since the previous one. */
export function printStartupTrace(): void {
  if (!enabled || printed) return;
  printed = true;
  const timing = performance.nodeTiming;
  const rows: [string, number][] = [["node bootstrap", timing.bootstrapComplete]];
  for (const m of marks) rows.push([m.phase, m.at]);
  let previous = 0;
  const lines = rows.map(([phase, at]) => {
    const line = `  ${at.toFixed(1).padStart(7)} ms  +${(at - previous).toFixed(1).padStart(6)} ms  ${phase}`;
    previous = at;
    return line;
  });
  process.stderr.write(`yoi: start-up trace (ms since process start)\n${lines.join("\n")}\n`);
}
