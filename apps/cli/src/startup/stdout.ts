/**
 * `process.stdout`, created when first used instead of at start-up, with
 * the handler for a closed pipe attached then. Node creates the stream on
 * first use, which costs 2-4 ms (a pipe loads the net module), and `yoi -p`
 * first writes after its first answer.
 */

/** A closed pipe (`yoi ... | head`) is the reader's choice, not an error. */
function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
}

/** Replaces the `process.stdout` getter with one that attaches the EPIPE handler when the stream is made. */
export function deferStdout(): void {
  const getter = Object.getOwnPropertyDescriptor(process, "stdout")?.get;
  if (!getter) {
    process.stdout.on("error", onStdoutError);
    return;
  }
  let stdout: NodeJS.WriteStream | undefined;
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: true,
    get: () => {
      if (stdout === undefined) {
        stdout = getter.call(process) as NodeJS.WriteStream;
        stdout.on("error", onStdoutError);
      }
      return stdout;
    },
  });
}
