#!/usr/bin/env node
/**
 * The `yoi` executable. Kept tiny: `--version` and `--help` load only the
 * argument parser; every command is imported when it runs. Bundled, the
 * rest of the CLI is loaded from `chunks/` by the chunk loader (with code
 * caches that hold what start-up compiles); from source, as modules.
 */
import module from "node:module";
import * as path from "node:path";

/** Set by bundle.ts: the build's id (a hash of its chunks); absent when running from source. */
declare const __YOI_BUILD_ID__: string | undefined;

// A closed pipe (`yoi ... | head`) is the reader's choice, not an error.
const onStdoutError = (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
};
// Attached when stdout is first used, not now: Node creates the stream on first use, which costs 2-4 ms
// (a pipe loads the net module), and `yoi -p` first writes after its first answer.
const stdoutGetter = Object.getOwnPropertyDescriptor(process, "stdout")?.get;
if (stdoutGetter) {
  let stdout: NodeJS.WriteStream | undefined;
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: true,
    get: () => {
      if (stdout === undefined) {
        stdout = stdoutGetter.call(process) as NodeJS.WriteStream;
        stdout.on("error", onStdoutError);
      }
      return stdout;
    },
  });
} else process.stdout.on("error", onStdoutError);

const argv = process.argv.slice(2);
// The two commands people time: answered without loading anything else.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${(await import("./version.ts")).cliVersion()}\n`);
} else if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
  process.stdout.write((await import("./help.ts")).HELP);
} else if (typeof __YOI_BUILD_ID__ === "string") {
  // Node's compile cache, for the modules it still loads itself (the packages left unbundled).
  module.enableCompileCache?.();
  const { createChunkLoader } = await import("./chunk-loader.ts");
  const chunks = createChunkLoader(path.join(import.meta.dirname, "chunks"), __YOI_BUILD_ID__, runKind(argv));
  const trace =
    process.env.YOI_TRACE_STARTUP === "1"
      ? (chunks.load("startup-trace.js") as typeof import("./startup-trace.ts"))
      : undefined;
  trace?.markStartup("bin loaded");
  trace?.traceFirstRequest();
  const { main } = chunks.load("main.js") as typeof import("./main.ts");
  const { loaded, cached } = chunks.stats();
  trace?.markStartup(`main loaded (${cached} of ${loaded} chunks from the code cache)`);
  process.exitCode = await main(argv);
} else {
  // Cache compiled (and type-stripped) modules across runs: start-up is most of a short command's time.
  module.enableCompileCache?.();
  const trace = process.env.YOI_TRACE_STARTUP === "1" ? await import("./startup-trace.ts") : undefined;
  trace?.markStartup("bin loaded");
  trace?.traceFirstRequest();
  const { main } = await import("./main.ts");
  trace?.markStartup("main loaded");
  process.exitCode = await main(argv);
}

/**
 * The kind of run, for the chunk loader: each kind keeps a code pack of the
 * chunks it loads, with the caches of what it compiles.
 */
function runKind(args: readonly string[]): string {
  if (args.includes("-p") || args.includes("--print")) return "print";
  const first = args.find((a) => !a.startsWith("-"));
  // A subcommand is one lower-case word; a prompt is anything else.
  return first !== undefined && /^[a-z]+$/.test(first) ? "command" : "chat";
}
