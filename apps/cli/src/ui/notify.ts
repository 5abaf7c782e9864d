/**
 * Terminal notifications: when a long turn ends or a permission question
 * waits, yoi tells the terminal, which can show a desktop notification or
 * mark the tab. OSC 9 for the terminals that show it (iTerm2, WezTerm,
 * Ghostty, kitty), OSC 777 for those that speak rxvt's `notify` (urxvt,
 * foot, VTE-based ones), else the bell. Under tmux or screen an OSC would
 * be swallowed, so the bell is used (tmux passes it on as an alert).
 * `YOI_NO_NOTIFY` (any value), `notifications.enabled: false`, a dumb
 * terminal or an output that is not a terminal turn it off.
 */
import type { NotificationsConfig } from "@yoi/manifest";

export type NotifyMethod = "osc9" | "osc777" | "bell";

/** Terminals that show an OSC 9 message as a notification, by `TERM_PROGRAM`. */
const OSC9_PROGRAMS = new Set(["iTerm.app", "WezTerm", "ghostty", "kitty"]);

/** How to notify on this terminal, or undefined when notifications are off. */
export function notifyMethod(
  config: NotificationsConfig,
  env: Readonly<Record<string, string | undefined>>,
  isTTY: boolean,
): NotifyMethod | undefined {
  if (!config.enabled || !isTTY) return undefined;
  if (env.YOI_NO_NOTIFY !== undefined && env.YOI_NO_NOTIFY !== "") return undefined;
  const term = env.TERM ?? "";
  if (term === "dumb") return undefined;
  if (config.method !== "auto") return config.method;
  // A multiplexer in between: the bell gets through, an OSC does not.
  if (env.TMUX || env.STY || term.startsWith("screen") || term.startsWith("tmux")) return "bell";
  const program = env.TERM_PROGRAM ?? "";
  if (OSC9_PROGRAMS.has(program) || term === "xterm-kitty" || env.KITTY_WINDOW_ID || env.WEZTERM_PANE)
    return "osc9";
  if (term.startsWith("rxvt") || term === "foot" || term.startsWith("foot-") || env.VTE_VERSION)
    return "osc777";
  return "bell";
}

/** Text safe inside an OSC string: no control characters, no `;` in the title field. */
function oscText(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, " ").slice(0, 200);
}

/** The bytes that notify with `method`. */
export function notificationSequence(method: NotifyMethod, title: string, body: string): string {
  switch (method) {
    case "osc9":
      return `\x1b]9;${oscText(`${title}: ${body}`)}\x07`;
    case "osc777":
      return `\x1b]777;notify;${oscText(title).replaceAll(";", ",")};${oscText(body)}\x07`;
    case "bell":
      return "\x07";
  }
}

/** Sends the session's notifications to the terminal. */
export class Notifier {
  readonly #method: NotifyMethod | undefined;
  readonly #longTurnMs: number;
  readonly #write: (text: string) => void;

  constructor(
    config: NotificationsConfig,
    options: {
      env: Readonly<Record<string, string | undefined>>;
      isTTY: boolean;
      write: (text: string) => void;
    },
  ) {
    this.#method = notifyMethod(config, options.env, options.isTTY);
    this.#longTurnMs = config.longTurnSeconds * 1000;
    this.#write = options.write;
  }

  /** A turn ended after `elapsedMs`: notifies when it was long. */
  turnEnded(elapsedMs: number, outcome: string): void {
    if (elapsedMs < this.#longTurnMs) return;
    this.#send("yoi", `${outcome} after ${Math.round(elapsedMs / 1000)}s`);
  }

  /** A permission question waits for an answer. */
  waiting(what: string): void {
    this.#send("yoi", `waiting for permission: ${what}`);
  }

  #send(title: string, body: string): void {
    if (this.#method === undefined) return;
    this.#write(notificationSequence(this.#method, title, body));
  }
}
