/** Process exit codes of `yoi` (documented in `yoi --help` and the README). */
export const EXIT = Object.freeze({
  /** The command did what was asked. */
  ok: 0,
  /** The model or the runtime failed (provider error, unreachable server, a failed run). */
  error: 1,
  /** Bad usage: unknown flag, missing argument, bad configuration, unknown model. */
  usage: 2,
  /**
   * The provider's rate limit resets later than yoi waits by itself: try
   * again after the reset time printed on stderr (and in a JSON result's
   * `error.reset_at`). 75 is sysexits' EX_TEMPFAIL.
   */
  rateLimited: 75,
  /** Cancelled by the user (Ctrl-C, SIGINT). */
  cancelled: 130,
});

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
