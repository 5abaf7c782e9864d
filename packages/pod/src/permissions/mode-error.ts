/** The typed error of permission settings a session cannot take (a mode, a rule written wrong). */
import { YoiError } from "@yoi/manifest/errors";

export type PermissionSettingErrorCode =
  /**
   * bypassPermissions was asked for where no sandbox is active and the explicit opt-in
   * (`allowUnsandboxedBypass`) was not given.
   */
  | "bypass_without_sandbox"
  /** A rule like `bash(git status)` was written wrong. */
  | "invalid_rule";

export class PermissionModeError extends YoiError<PermissionSettingErrorCode> {
  override readonly name = "PermissionModeError";
  static override readonly marker: symbol = Symbol.for("yoi.error.PermissionModeError");
}
