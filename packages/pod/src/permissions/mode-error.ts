/** The typed error of permission settings a session cannot take (a mode, a rule written wrong). */

export type PermissionSettingErrorCode =
  /** bypassPermissions was asked for where no sandbox is active and the explicit opt-in was not given. */
  | "bypass_without_sandbox"
  /** A rule like `bash(git status)` was written wrong. */
  | "invalid_rule";

const MARK = Symbol.for("yoi.PermissionModeError");

export class PermissionModeError extends Error {
  override readonly name = "PermissionModeError";
  readonly code: PermissionSettingErrorCode;
  readonly [MARK] = true;

  constructor(code: PermissionSettingErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** True for a PermissionModeError, also from another copy of this package. */
export function isPermissionModeError(value: unknown): value is PermissionModeError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
}
