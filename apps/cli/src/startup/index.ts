/**
 * The CLI's start-up machinery, behind the one call the `yoi` executable
 * makes. Everything that exists only to make the first request leave
 * sooner lives in this folder; docs/cli-startup.md explains each part,
 * why it is there and what it buys (measured by bench/first-request.bench.ts).
 *
 * - stdout.ts: `process.stdout` made on first use;
 * - chunk-loader.ts and code-pack.ts: the bundle's chunks run with V8 code
 *   caches taken after the run, one pack per kind of run;
 * - trace.ts: `YOI_TRACE_STARTUP=1`, the phases up to the first request;
 * - zod-jitless.ts: zod without its generated parsers;
 * - flags-event.ts: the pack written before a V8 flag changes;
 * - provider-fetch.ts: the provider SDKs' HTTP transport over node:http,
 *   which bundle.ts binds in their modules in place of Node's fetch;
 * - uuid-random.ts: uuid's random bytes, which bundle.ts binds in place of
 *   uuid's own (WebCrypto) source.
 *
 * The rest of the CLI knows of it only `markStartup` (trace.ts), the
 * import of zod-jitless.ts that main.ts makes before any command, and
 * `beforeV8FlagsChange` (flags-event.ts).
 */
import module from "node:module";
import * as path from "node:path";
import { deferStdout } from "./stdout.ts";

/** What bundle.ts compiled in: where the chunks are and which build they are. */
export interface Bundle {
  /** The directory holding `bin.js` and `chunks/`. */
  dir: string;
  /** A hash of the chunks: code caches of another build are never read. */
  buildId: string;
}

/** Makes stdout lazy; call first thing, before anything writes. */
export { deferStdout };

/**
 * Runs `yoi` from the bundle: loads `main` through the chunk loader (with
 * this kind of run's code pack) and returns its exit code.
 */
export async function runBundled(bundle: Bundle, argv: readonly string[]): Promise<number> {
  // Node's compile cache, for the modules it still loads itself (the packages left unbundled).
  module.enableCompileCache?.();
  // Imported here, not above: `--version` and `--help` (see bin.ts) evaluate none of it.
  const { createChunkLoader } = await import("./chunk-loader.ts");
  const chunks = createChunkLoader(path.join(bundle.dir, "chunks"), bundle.buildId, runKind(argv));
  const trace =
    process.env.YOI_TRACE_STARTUP === "1"
      ? (chunks.load("startup-trace.js") as typeof import("./trace.ts"))
      : undefined;
  trace?.markStartup("bin loaded");
  trace?.traceFirstRequest();
  const { main } = chunks.load("main.js") as typeof import("../main.ts");
  const { loaded, cached } = chunks.stats();
  trace?.markStartup(`main loaded (${cached} of ${loaded} chunks from the code cache)`);
  return main(argv);
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
