/**
 * OpenTelemetry for the `yoi` command: when an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or a signal's own), the variables are
 * checked and the SDK chunk is loaded; otherwise nothing of it is. Invalid
 * variables give one line on stderr and the command runs without telemetry.
 */
import { exitAfterFlush, setExitFlush } from "./exit.ts";
import { readTelemetryConfig } from "./otel-env.ts";
import type { Telemetry } from "./start.ts";

export type { Telemetry };

/** Signals that would end the process before the flush at the end of `main`, and their exit codes. */
const SIGNALS = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const;

/** Starts telemetry as the environment asks; undefined when it is off (no endpoint) or invalid. */
export async function setupTelemetry(
  env: Readonly<Record<string, string | undefined>>,
): Promise<Telemetry | undefined> {
  const config = readTelemetryConfig(env);
  if (config.kind === "invalid") {
    process.stderr.write(`yoi: telemetry is off: ${config.message}\n`);
    return undefined;
  }
  if (config.kind === "off") return undefined;
  const { startTelemetry } = await import("./start.ts");
  const telemetry = startTelemetry(config.settings, (line) => process.stderr.write(`yoi: ${line}\n`));
  setExitFlush(() => telemetry.shutdown());
  for (const [signal, code] of SIGNALS) {
    // Only when nothing else handles the signal (print mode cancels a run on SIGINT, serve stops
    // on SIGINT/SIGTERM, the terminal guard exits through exitAfterFlush): then, as Node would,
    // the process ends, after the flush.
    const onSignal = () => {
      if (process.listenerCount(signal) === 1) exitAfterFlush(() => process.exit(code));
    };
    process.on(signal, onSignal);
  }
  return telemetry;
}
