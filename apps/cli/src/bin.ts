#!/usr/bin/env node
/**
 * The `yoi` executable. Kept tiny: `--version` and `--help` load only the
 * argument parser; every command is imported when it runs.
 */
import { main } from "./main.ts";

// A closed pipe (`yoi ... | head`) is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
