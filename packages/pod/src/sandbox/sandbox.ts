/**
 * How bash runs inside an OS sandbox: a sandbox turns "run this shell line"
 * into the program and arguments that run it confined. Linux uses bubblewrap
 * (bwrap.ts), macOS sandbox-exec (seatbelt.ts).
 */

/** What a sandboxed command may touch. */
export interface SandboxPolicy {
  /** Directories the command may write (the scope's write roots), absolute and real. */
  writeRoots: readonly string[];
  /**
   * Files and directories hidden from the command, absolute: yoi's data
   * directory where no write root holds it, and its private parts (session
   * logs, blobs, saved keys, prompt history) where one does.
   */
  hidden: readonly string[];
  /**
   * Directories the command reads but may not write (a language server's
   * project), absolute and real; bound over the private /tmp where they lie in it.
   */
  readOnlyRoots?: readonly string[];
  /** Network access. Default false: no network at all. */
  network: boolean;
}

/** The program to spawn for one command line. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  /**
   * Call once the command has ended (every process of it): undoes what the
   * sandbox set up on the host for it. Returns a note for the command's
   * output when it had to undo something the command did.
   */
  release?: () => string | undefined;
}

/** An available OS sandbox. */
export interface Sandbox {
  /** `bwrap` (Linux bubblewrap) or `seatbelt` (macOS sandbox-exec). */
  readonly kind: "bwrap" | "seatbelt";
  /** Wraps `shell -c line`, to run in `cwd`, confined by `policy`. */
  wrap(shell: string, line: string, cwd: string, policy: SandboxPolicy): SandboxedCommand;
}

/** Why no sandbox is available, for the one-time notice. */
export interface SandboxUnavailable {
  /** One sentence: what is missing and how to get it. */
  reason: string;
}
