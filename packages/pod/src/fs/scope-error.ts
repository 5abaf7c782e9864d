/**
 * The typed error of every scoped filesystem operation. `path` is the path as
 * the caller (user or model) wrote it; `message` is one sentence that says
 * what was wrong and, where there is one, what to do instead.
 */
import { errorMessage, YoiError } from "@yoi/manifest/errors";

/**
 * What went wrong, as a stable string:
 *
 * - `out_of_scope`: The path (or a symlink on the way) leads outside the read/write roots.
 * - `not_found`: Nothing exists at the path (or a parent is not a directory).
 * - `invalid_path`: The path is malformed (empty, NUL byte, symlink loop) or of the wrong kind (a
 *   directory where a file was expected).
 * - `conflict`: The file changed (or appeared) while it was being written: the write did not happen.
 * - `io`: Any other failure of the operating system (permissions, disk full, ...).
 */
export type ScopeErrorCode = "out_of_scope" | "not_found" | "invalid_path" | "conflict" | "io";

export class ScopeError extends YoiError<ScopeErrorCode> {
  override readonly name = "ScopeError";
  static override readonly marker: symbol = Symbol.for("yoi.error.ScopeError");
  /** The path as the caller wrote it. */
  readonly path: string;
  /** The errno code (`EACCES`, `ENOSPC`, ...) for `io` errors. */
  readonly errno: string | undefined;

  constructor(
    code: ScopeErrorCode,
    path: string,
    message: string,
    options: { errno?: string; cause?: unknown } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.path = path;
    this.errno = options.errno;
  }
}

/** The errno code of a Node system error, if any. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** Maps an OS error on `path` to a ScopeError. */
export function scopeErrorFromOs(error: unknown, path: string, action: string): ScopeError {
  if (ScopeError.isInstance(error)) return error;
  const errno = errnoOf(error);
  switch (errno) {
    case "ENOENT":
    case "ENOTDIR":
      return new ScopeError("not_found", path, `${path}: no such file or directory`, { errno, cause: error });
    case "ELOOP":
      return new ScopeError("invalid_path", path, `${path}: too many levels of symbolic links`, {
        errno,
        cause: error,
      });
    case "EISDIR":
      return new ScopeError("invalid_path", path, `${path} is a directory; use list_dir to see its entries`, {
        errno,
        cause: error,
      });
    case "EACCES":
    case "EPERM":
      return new ScopeError("io", path, `cannot ${action} ${path}: permission denied`, {
        errno,
        cause: error,
      });
    default:
      return new ScopeError("io", path, `cannot ${action} ${path}: ${errno ?? errorMessage(error)}`, {
        ...(errno === undefined ? {} : { errno }),
        cause: error,
      });
  }
}
