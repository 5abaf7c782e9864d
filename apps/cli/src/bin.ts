/**
 * The `yoi` executable, as bundle.ts builds it into `dist/bin.js`. Kept
 * tiny: `--version` and `--help` load only what they print; every other
 * command line goes to the rest of the CLI, which the start-up machinery
 * (./startup/) loads from the bundle's chunks. bundle.ts puts the
 * launcher line in front of it (docs/cli-startup.md): run as a program, it
 * starts `node` on this file with a larger young generation.
 */
import { deferStdout, runBundled } from "./startup/index.ts";

/** Set by bundle.ts: the build's id (a hash of its chunks). */
declare const __YOI_BUILD_ID__: string | undefined;

deferStdout();
const argv = process.argv.slice(2);
// The two commands people time: answered without loading anything else.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${(await import("./version.ts")).cliVersion()}\n`);
} else if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
  process.stdout.write((await import("./help.ts")).HELP);
} else if (typeof __YOI_BUILD_ID__ !== "string") {
  process.stderr.write(
    "yoi: src/bin.ts is the bundle's entry; run `pnpm yoi` (it builds dist/bin.js and runs it)\n",
  );
  process.exitCode = 2;
} else {
  process.exitCode = await runBundled({ dir: import.meta.dirname, buildId: __YOI_BUILD_ID__ }, argv);
}
