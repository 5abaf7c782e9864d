import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { yoiArgv } from "./helpers.ts";

/** How long a wait may take before it fails: safe on a loaded 2-core CI machine (a match returns at once). */
export const WAIT_MS = 45_000;

/** A program running in a real pseudo-terminal under a private tmux server. */
export class TmuxSession {
  readonly #socket: string;
  readonly name = "yoi";

  private constructor(socket: string) {
    this.#socket = socket;
  }

  static available(): boolean {
    try {
      execFileSync("tmux", ["-V"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  }

  /** Starts `command` (a shell command line) in a 120x40 terminal. */
  static start(command: string, options: { width?: number; height?: number } = {}): TmuxSession {
    const socket = `yoi-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const session = new TmuxSession(socket);
    session.#tmux([
      "new-session",
      "-d",
      "-s",
      session.name,
      "-x",
      String(options.width ?? 120),
      "-y",
      String(options.height ?? 40),
      command,
    ]);
    return session;
  }

  #tmux(args: string[]): string {
    return execFileSync("tmux", ["-L", this.#socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  }

  /** Runs a tmux command on this session's server (`list-buffers`, `display -p '#{pane_title}'`). */
  query(...args: string[]): string {
    try {
      return this.#tmux(args);
    } catch {
      return "";
    }
  }

  /** Types literal text. */
  type(text: string): void {
    this.#tmux(["send-keys", "-t", this.name, "-l", text]);
  }

  /** Sends named keys (Enter, Tab, C-c). */
  keys(...keys: string[]): void {
    this.#tmux(["send-keys", "-t", this.name, ...keys]);
  }

  /**
   * Pastes text the way a terminal does: bracketed (`ESC[200~ … ESC[201~`,
   * when the program asked for it) or, with `bracketed: false`, as raw
   * keystrokes with each newline sent as Enter, as an old terminal would.
   */
  paste(text: string, options: { bracketed?: boolean } = {}): void {
    this.#tmux(["set-buffer", "-b", "yoi-paste", "--", text]);
    const bracketed = options.bracketed ?? true;
    this.#tmux(["paste-buffer", ...(bracketed ? ["-p"] : []), "-d", "-b", "yoi-paste", "-t", this.name]);
  }

  /**
   * The screen and 200 lines of scrollback; with `escapes`, colour and
   * attribute sequences kept; with `joined`, lines the terminal soft-wrapped
   * joined again (`capture-pane -J`, what a mouse copy gets).
   */
  screen(options: { escapes?: boolean; joined?: boolean } = {}): string {
    try {
      return this.#tmux([
        "capture-pane",
        "-p",
        ...(options.escapes ? ["-e"] : []),
        ...(options.joined ? ["-J"] : []),
        "-t",
        this.name,
        "-S",
        "-200",
      ]);
    } catch {
      return "";
    }
  }

  resize(width: number, height: number): void {
    this.#tmux(["resize-window", "-t", this.name, "-x", String(width), "-y", String(height)]);
  }

  /**
   * Waits until the screen matches (a string, a pattern, or a predicate);
   * fails with the screen when it does not in time. Returns as soon as it
   * matches, so the generous default only costs time on a failure.
   */
  async waitFor(
    match: string | RegExp | ((screen: string) => boolean),
    timeoutMs = WAIT_MS,
  ): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    const hits = (screen: string) =>
      typeof match === "string"
        ? screen.includes(match)
        : typeof match === "function"
          ? match(screen)
          : match.test(screen);
    for (;;) {
      const screen = this.screen();
      if (hits(screen)) {
        // tmux may have drawn only part of what yoi wrote with the match (a list's first row, not
        // its last): a second look a moment later sees the rest, on a loaded machine too.
        await new Promise((resolve) => setTimeout(resolve, 40));
        const settled = this.screen();
        return hits(settled) ? settled : screen;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${String(match)}; the screen:\n${screen}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  kill(): void {
    try {
      execFileSync("tmux", ["-L", this.#socket, "kill-server"], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }
}

/** Waits for a file written by the shell after the program exits. */
export async function waitForFile(path: string, timeoutMs = WAIT_MS): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(path, "utf8").catch(() => undefined);
    if (text !== undefined && text.trim() !== "") return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** The shell line that runs yoi in the terminal, then records its exit code and the tty mode. */
export function yoiCommand(opts: {
  project: string;
  home: string;
  baseURL: string;
  args: string[];
  out: string;
  /** More `NAME=value` settings for the environment. */
  env?: string[];
  /** The `-m` value. Default `anthropic/claude-haiku-4-5`. */
  model?: string;
  /** Leave ANTHROPIC_BASE_URL unset (the test passes --base-url instead). */
  noBaseURLEnv?: boolean;
  /** Flags for node, before the script (`--import=...`). */
  nodeArgs?: string[];
}): string {
  const env = [
    `HOME=${quote(opts.home)}`,
    `PATH=${quote(process.env.PATH ?? "/usr/bin:/bin")}`,
    "TERM=xterm-256color",
    "LANG=C.UTF-8",
    "ANTHROPIC_API_KEY=test-key",
    ...(opts.noBaseURLEnv ? [] : [`ANTHROPIC_BASE_URL=${quote(opts.baseURL)}`]),
    ...(opts.env ?? []).map(quote),
  ].join(" ");
  const yoi = [...yoiArgv(opts.nodeArgs), "-m", opts.model ?? "anthropic/claude-haiku-4-5", ...opts.args]
    .map(quote)
    .join(" ");
  return `cd ${quote(opts.project)} && env -i ${env} ${yoi}; echo "EXIT=$?" > ${quote(`${opts.out}.exit`)}; stty -a > ${quote(`${opts.out}.stty`)}; sleep 30`;
}
