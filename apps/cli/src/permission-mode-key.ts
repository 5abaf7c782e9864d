/**
 * Shift+Tab in the interactive session: cycles the pod's permission mode
 * (default → acceptEdits → plan → default; bypassPermissions only in a
 * session started with it allowed, see `PermissionPolicy.nextMode`) and the
 * prompt, the session's status line, names the mode.
 */
import type { PermissionMode } from "@yoi/manifest";
import type { Pod } from "@yoi/pod";
import type { Style } from "./style.ts";

/** The mode as the prompt shows it; empty for `default`. */
export function modeTag(mode: PermissionMode, style: Style): string {
  switch (mode) {
    case "acceptEdits":
      return style.green("⏵ accept edits ");
    case "plan":
      return style.cyan("⏸ plan ");
    case "bypassPermissions":
      return style.red("⏵⏵ bypass permissions ");
    default:
      return "";
  }
}

interface Keypress {
  name?: string;
  shift?: boolean;
  sequence?: string;
}

/**
 * Listens for Shift+Tab on `input` (readline has put it in keypress mode) and
 * switches `pod()`'s mode; `changed` redraws the prompt. Returns the function
 * that stops listening.
 */
export function cycleModesOnShiftTab(
  input: NodeJS.ReadStream,
  pod: () => Pod,
  changed: (mode: PermissionMode) => void,
): () => void {
  const onKey = (_text: string | undefined, key: Keypress | undefined) => {
    if (key === undefined) return;
    const shiftTab = (key.name === "tab" && key.shift === true) || key.sequence === "\x1b[Z";
    if (!shiftTab) return;
    const permissions = pod().permissions;
    const next = permissions.nextMode();
    if (next === permissions.mode) return;
    permissions.setMode(next);
    changed(next);
  };
  input.on("keypress", onKey);
  return () => {
    input.off("keypress", onKey);
  };
}
