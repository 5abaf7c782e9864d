/**
 * Dispatch: parse arguments, run the command (imported lazily, so that
 * `--version` and `--help` load no provider SDK and nothing heavy), turn
 * errors into one clear line and an exit code.
 */
import { type Command, commandOptions, parseCommand } from "./args.ts";
import { CliError, usageError } from "./cli-error.ts";
import { EXIT } from "./exit-codes.ts";
import { HELP, topicHelp } from "./help.ts";
import type { Telemetry } from "./telemetry/index.ts";
import { cliVersion } from "./version.ts";

/** Runs `yoi` with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    return fail(error);
  }
  const loads = command.kind !== "version" && command.kind !== "help";
  // Before any command's modules and the telemetry chunk's: they build zod schemas as they load (see startup/zod-jitless.ts).
  if (loads) await import("./startup/zod-jitless.ts");
  const telemetry = loads && hasOtelVariables(process.env) ? await startTelemetry() : undefined;
  try {
    return await run(command);
  } catch (error) {
    return fail(error);
  } finally {
    // Bounded: a collector that does not answer holds the exit no longer than one export's limit.
    await telemetry?.shutdown();
  }
}

/**
 * Whether any OpenTelemetry variable is set: the start-up path's only cost
 * of telemetry (the telemetry chunk decides whether they ask for export).
 */
function hasOtelVariables(env: NodeJS.ProcessEnv): boolean {
  for (const name in env) if (name.startsWith("OTEL_")) return true;
  return false;
}

/** The SDK and its exporters, loaded only when an OTLP endpoint is set. */
async function startTelemetry(): Promise<Telemetry | undefined> {
  return (await import("./telemetry/index.ts")).setupTelemetry(process.env);
}

async function run(command: Command): Promise<number> {
  switch (command.kind) {
    case "version":
      process.stdout.write(`${cliVersion()}\n`);
      return EXIT.ok;
    case "help": {
      if (command.topic === undefined) {
        process.stdout.write(HELP);
        return EXIT.ok;
      }
      const text = topicHelp(command.topic, commandOptions(command.topic) ?? []);
      if (text === undefined)
        throw usageError(`no command ${JSON.stringify(command.topic)} (yoi --help lists them)`);
      process.stdout.write(text);
      return EXIT.ok;
    }
    case "config":
      return (await import("./commands/config.ts")).configCommand(command);
    case "sessions":
      return (await import("./commands/sessions.ts")).sessionsCommand(command);
    case "inspect":
      return (await import("./commands/inspect.ts")).inspectCommand(command);
    case "replay":
      return (await import("./commands/replay.ts")).replayCommand(command);
    case "rewind":
      return (await import("./commands/rewind.ts")).rewindCommand(command);
    case "demo":
      return (await import("./commands/demo.ts")).demoCommand(command);
    case "serve":
      return (await import("./serve/serve-command.ts")).serveCommand(command);
    case "mcp":
      return (await import("./commands/mcp.ts")).mcpCommand(command);
    case "setup":
      return (await import("./commands/setup.ts")).setupCommand(command);
    case "logout":
      return (await import("./commands/setup.ts")).logoutCommand(command);
    case "permissions":
      return (await import("./commands/permissions.ts")).permissionsCommand(command);
    case "acp":
      return (await import("./acp/acp-command.ts")).acpCommand(command);
    case "lsp":
      return (await import("./commands/lsp.ts")).lspCommand(command);
    case "worktree":
      return (await import("./commands/worktree.ts")).worktreeCommand(command);
    case "chat":
      if (command.worktree !== undefined)
        command = await (await import("./commands/worktree.ts")).enterWorktree(command);
      // The UI needs a terminal on both sides; anything else is print mode (pipes, scripts).
      if (!command.print && process.stdin.isTTY && process.stdout.isTTY) {
        return (await import("./commands/interactive.ts")).interactiveCommand(command);
      }
      return (await import("./commands/print.ts")).printCommand(command);
  }
}

async function fail(error: unknown): Promise<number> {
  if (CliError.isInstance(error)) {
    // A usage error may quote what was given (a flag value): shown through the sanitiser like the rest
    // (loaded here: the parser's path loads nothing it does not need).
    const { sanitize } = await import("./terminal-text.ts");
    await say(`yoi: ${sanitize(error.message)}`);
    return error.exitCode;
  }
  const { describeError } = await import("./describe-error.ts");
  const { message, exitCode } = describeError(error);
  await say(`yoi: ${message}`);
  return exitCode;
}

/** The failure's line on stderr, laid out between words on a terminal (one line into a pipe). */
async function say(line: string): Promise<void> {
  const { writeLines } = await import("./text-width.ts");
  writeLines(line, process.stderr);
}
