/**
 * Never leave the terminal in raw mode or with a hidden cursor: restore it
 * on every way out (normal exit, uncaught exception, unhandled rejection,
 * SIGTERM/SIGHUP/SIGQUIT).
 */

import { errorMessage } from "@yoi/manifest/errors";
import { scrub } from "../describe-error.ts";
import { exitAfterFlush } from "../telemetry/exit.ts";

const SHOW_CURSOR = "\x1b[?25h";
const RESET = "\x1b[0m";

let installed = false;

/** Puts the terminal back: cooked mode, cursor shown, attributes reset. Safe to call many times. */
export function restoreTerminal(): void {
  const stdin = process.stdin;
  try {
    if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false);
  } catch {
    // stdin may already be closed.
  }
  if (process.stdout.isTTY) {
    try {
      process.stdout.write(`${RESET}${SHOW_CURSOR}`);
    } catch {
      // stdout may be gone.
    }
  }
}

/**
 * Values of the environment's secret-looking variables (`*_KEY`, `*_TOKEN`,
 * `*_SECRET`, `*PASSWORD*`): a crash report may hold any of them (an SDK
 * error quoting its request), so all are scrubbed, not only the model's key.
 */
export function environmentSecrets(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value && /(_KEY|_TOKEN|_SECRET|PASSWORD)$/i.test(name)) out.push(value.trim());
  }
  return out;
}

/** The text a crash prints: the stack (or message), keys removed. */
export function crashReport(error: unknown, secrets: readonly string[]): string {
  const message = (error instanceof Error ? error.stack : undefined) ?? errorMessage(error);
  return `\nyoi: internal error: ${scrub(message, secrets)}\n`;
}

/**
 * Restores the terminal on every way out and turns a crash into a short
 * report on stderr with secrets scrubbed. `secrets` is asked at crash time
 * (default: the environment's secret-looking values).
 */
export function installTerminalGuard(secrets: () => readonly string[] = environmentSecrets): void {
  if (installed) return;
  installed = true;
  process.on("exit", restoreTerminal);
  const crash = (error: unknown) => {
    restoreTerminal();
    let report: string;
    try {
      report = crashReport(error, [...environmentSecrets(), ...secrets()]);
    } catch {
      report = "\nyoi: internal error (the report could not be made safe to print)\n";
    }
    process.stderr.write(report);
    exitAfterFlush(() => process.exit(1));
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGHUP", 129],
    ["SIGQUIT", 131],
  ] as const) {
    process.on(signal, () => {
      restoreTerminal();
      exitAfterFlush(() => process.exit(code));
    });
  }
}
