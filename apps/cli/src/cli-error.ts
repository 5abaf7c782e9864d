import { YoiError } from "@yoi/manifest/errors";
import { EXIT, type ExitCode } from "./exit-codes.ts";

/**
 * An error the CLI reports as it is: `message` is printed after `yoi: ` and
 * the process exits with `exitCode`. Messages are one line unless the user
 * needs a short list (what to set when nothing is configured). `code` names
 * the exit code's kind: `usage` (2), `cancelled` (130), otherwise `failed`.
 */
export class CliError extends YoiError<"usage" | "cancelled" | "failed"> {
  override readonly name = "CliError";
  static override readonly marker: symbol = Symbol.for("yoi.error.CliError");
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = EXIT.error, options: { cause?: unknown } = {}) {
    super(
      exitCode === EXIT.usage ? "usage" : exitCode === EXIT.cancelled ? "cancelled" : "failed",
      message,
      options,
    );
    this.exitCode = exitCode;
  }
}

/** A usage error (exit 2). */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
