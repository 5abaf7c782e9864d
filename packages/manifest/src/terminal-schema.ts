/**
 * Settings of the interactive terminal: the prompt editor's key bindings,
 * the status line command, notifications, and how large pastes are shown.
 * None of them changes what a session may do; `statusLine` runs a command,
 * so a project's own config sets it only when the project is trusted
 * (see project-trust.ts).
 */
import * as z from "zod";
import {
  NOTIFY_LONG_TURN_SECONDS,
  PASTE_COLLAPSE_LINES,
  STATUS_LINE_DEBOUNCE_MS,
  STATUS_LINE_TIMEOUT_MS,
} from "./defaults.ts";
import { bool, expecting, nonBlank, nonNegativeInt, positiveInt } from "./schema-helpers.ts";

const obj = <S extends z.core.$ZodLooseShape>(shape: S) => z.strictObject(shape, expecting("an object"));

export const EDITOR_MODES = ["emacs", "vim"] as const;

export const EditorModeSchema = z.enum(EDITOR_MODES, expecting('one of "emacs", "vim"')).meta({
  description:
    'Key bindings of the prompt editor: "emacs" (Ctrl-A, Ctrl-E, ...; the default) or "vim" (normal and insert modes). /vim toggles it for the session.',
});

/** `statusLine`: a command whose first line of output is shown under the prompt. */
export const StatusLineSchema = obj({
  type: z.literal("command", expecting('"command"')),
  command: nonBlank("a non-empty shell command").meta({
    description:
      "Run in your shell with the session's state as JSON on stdin (session_id, model, workspace, cwd, cost, git branch, mode, context use) whenever that state changes; the first line it prints is shown under the prompt.",
  }),
  padding: nonNegativeInt().default(0).meta({ description: "Spaces before the line." }),
  timeoutMs: positiveInt().default(STATUS_LINE_TIMEOUT_MS).meta({
    description: "A run that takes longer is stopped and the line is left empty (said once).",
  }),
  debounceMs: nonNegativeInt()
    .default(STATUS_LINE_DEBOUNCE_MS)
    .meta({ description: "Changes within this time cause one run." }),
});

const NOTIFY_METHODS = ["auto", "osc9", "osc777", "bell"] as const;

/** `notifications`: tell the terminal when a long turn ends or a question waits. */
export const NotificationsSchema = obj({
  enabled: bool().default(true).meta({
    description:
      "Off also when YOI_NO_NOTIFY is set (or NO_COLOR-style opt-outs), or stdout is not a terminal.",
  }),
  longTurnSeconds: nonNegativeInt()
    .default(NOTIFY_LONG_TURN_SECONDS)
    .meta({ description: "A turn that took at least this long notifies when it ends." }),
  method: z.enum(NOTIFY_METHODS, expecting('one of "auto", "osc9", "osc777", "bell"')).default("auto").meta({
    description:
      '"auto": OSC 9 for terminals that show it (iTerm2, WezTerm, Ghostty, kitty, Windows Terminal), OSC 777 for rxvt/foot/VTE, else the bell.',
  }),
});

/** `paste`: how a large paste is shown in the prompt editor. */
export const PasteSchema = obj({
  collapseLines: positiveInt().default(PASTE_COLLAPSE_LINES).meta({
    description: "A paste of more lines than this shows as [Pasted text #N +L lines]; it is sent whole.",
  }),
});
