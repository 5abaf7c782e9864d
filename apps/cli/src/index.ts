// The event shapes live in the pod, which query() shares with print mode and yoi serve.
export type { JsonUsage, StreamJsonEvent } from "@yoi/pod";
export { type Command, OUTPUT_FORMATS, type OutputFormat, parseCommand } from "./args.ts";
export { CliError } from "./cli-error.ts";
export { EXIT, type ExitCode } from "./exit-codes.ts";
export { main } from "./main.ts";
