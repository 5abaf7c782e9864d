export { type Command, OUTPUT_FORMATS, type OutputFormat, parseCommand } from "./args.ts";
export { CliError } from "./cli-error.ts";
export { EXIT, type ExitCode } from "./exit-codes.ts";
export { main } from "./main.ts";
export type { JsonUsage, StreamJsonEvent } from "./stream-json.ts";
