import { EXIT, type ExitCode } from "./exit-codes.ts";

/**
 * An error the CLI reports as it is: `message` is printed after `yoi: ` and
 * the process exits with `exitCode`. Messages are one line unless the user
 * needs a short list (what to set when nothing is configured).
 */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = EXIT.error) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A usage error (exit 2). */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
