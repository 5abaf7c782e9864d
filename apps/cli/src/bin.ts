#!/usr/bin/env node
/**
 * The `yoi` executable. Kept tiny: `--version` and `--help` load only the
 * argument parser; every command is imported when it runs.
 */
import module from "node:module";

// Cache compiled (and type-stripped) modules across runs: start-up is most of a short command's time.
module.enableCompileCache?.();

// A closed pipe (`yoi ... | head`) is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

// Phase timings on request only: `--version` and `--help` load nothing for it otherwise.
const trace = process.env.YOI_TRACE_STARTUP === "1" ? await import("./startup-trace.ts") : undefined;
trace?.markStartup("bin loaded");
trace?.traceFirstRequest();

const argv = process.argv.slice(2);
// The two commands people time: answered with one module each.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${(await import("./version.ts")).cliVersion()}\n`);
} else if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
  process.stdout.write((await import("./help.ts")).HELP);
} else {
  const { main } = await import("./main.ts");
  trace?.markStartup("main loaded");
  process.exitCode = await main(argv);
}
