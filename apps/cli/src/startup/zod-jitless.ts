/**
 * zod without its generated fast paths. zod compiles a parser for each
 * object schema (generated code, `new Function`) on its first parse; that
 * pays off for a schema parsed thousands of times, and a yoi process parses
 * each a handful of times (config layers, tool inputs), so the compiling
 * was most of the cost: about 9 ms before the first request.
 *
 * zod reads the setting when an object schema is built, and our packages
 * build theirs as they are imported: this module must run before any of
 * them. main.ts imports it, and awaits it, before it imports a command or
 * the telemetry chunk (which loads our packages too: a traced run once built
 * its schemas first and paid the compiling); `--version`, `--help` and the
 * argument parser still load no zod.
 */
import * as z from "zod";

z.config({ jitless: true });
