/**
 * Never leave the terminal in raw mode or with a hidden cursor: restore it
 * on every way out (normal exit, uncaught exception, unhandled rejection,
 * SIGTERM/SIGHUP/SIGQUIT).
 */
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

export function installTerminalGuard(): void {
  if (installed) return;
  installed = true;
  process.on("exit", restoreTerminal);
  const crash = (error: unknown) => {
    restoreTerminal();
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`\nyoi: internal error: ${message}\n`);
    process.exit(1);
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
      process.exit(code);
    });
  }
}
