/**
 * The status line: `statusLine.command` from the config, run in the user's
 * shell with the session's state as JSON on stdin whenever that state
 * changes (changes close together cause one run), and the first line it
 * prints shown under the prompt. The JSON has the fields Claude Code's
 * status line scripts read (session_id, model.id / display_name,
 * workspace.current_dir / project_dir, cwd, cost.*, context_window.*,
 * version) plus yoi's own (git.branch, permission_mode, vim.mode).
 *
 * A command that fails, prints nothing or runs past its timeout shows
 * nothing; why is said once a session. The command is the user's own
 * config (a project's sets it only when trusted, as with hooks).
 */
import { spawn } from "node:child_process";
import type { StatusLineConfig } from "@yoi/manifest";
import { guardStyled } from "../terminal-text.ts";

/** Most bytes of the command's output read. */
const MAX_OUTPUT_BYTES = 64 * 1024;

/** The session's state as the status line command gets it. */
export interface StatusState {
  session_id: string;
  transcript_path?: string;
  cwd: string;
  model: { id: string; display_name: string };
  workspace: { current_dir: string; project_dir: string };
  version: string;
  cost: {
    total_cost_usd: number | null;
    total_duration_ms: number;
    total_api_duration_ms: number;
    total_lines_added: number;
    total_lines_removed: number;
  };
  context_window: {
    total_input_tokens: number;
    total_output_tokens: number;
    context_window_size: number;
    used_percentage: number | null;
  };
  git: { branch: string | null };
  permission_mode: string;
  vim?: { mode: "NORMAL" | "INSERT" };
}

export interface StatusLineOptions {
  config: StatusLineConfig;
  /** Where the command runs (the session's working directory). */
  cwd: string;
  /** The user's shell (`$SHELL`, else /bin/sh). */
  shell: string;
  env: NodeJS.ProcessEnv;
  /** Shows the line (styled, one row), or nothing. */
  show: (line: string | undefined) => void;
  /** Says why nothing is shown; called at most once. */
  problem: (message: string) => void;
}

/** Why a run showed nothing, or the line it printed. */
export type StatusRun = { ok: true; line: string } | { ok: false; why: string };

/** Runs `command` once with `input` on stdin; never rejects. */
export function runStatusCommand(
  command: string,
  input: string,
  options: { cwd: string; shell: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<StatusRun> {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    let settled = false;
    const finish = (run: StatusRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(run);
    };
    const child = spawn(options.shell, ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: a timeout stops the command and what it started.
      detached: true,
    });
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      finish({ ok: false, why: `took longer than ${options.timeoutMs} ms (statusLine.timeoutMs)` });
    }, options.timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (out.length < MAX_OUTPUT_BYTES) out += chunk;
    });
    child.stderr.on("data", (chunk: string) => {
      if (err.length < MAX_OUTPUT_BYTES) err += chunk;
    });
    child.on("error", (error) => finish({ ok: false, why: `could not start: ${error.message}` }));
    child.on("close", (code, signal) => {
      if (code !== 0) {
        const said = err.trim().split("\n")[0] ?? "";
        const how = signal ? `was stopped by ${signal}` : `exited with ${code}`;
        finish({ ok: false, why: said === "" ? how : `${how}: ${said}` });
        return;
      }
      const line = (out.split("\n")[0] ?? "").trimEnd();
      finish(line === "" ? { ok: false, why: "printed nothing" } : { ok: true, line });
    });
    // A command that does not read its stdin must not fail the run.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

export class StatusLine {
  readonly #o: StatusLineOptions;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  /** The state to run with next (set while a run is in progress or the debounce waits). */
  #next: StatusState | undefined;
  /** The input of the last run: the same state again runs nothing. */
  #lastInput: string | undefined;
  #told = false;
  #disposed = false;

  constructor(options: StatusLineOptions) {
    this.#o = options;
  }

  /** The state changed: runs the command after the debounce. */
  update(state: StatusState): void {
    if (this.#disposed) return;
    this.#next = state;
    if (this.#timer !== undefined || this.#running) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#run();
    }, this.#o.config.debounceMs);
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  async #run(): Promise<void> {
    const state = this.#next;
    this.#next = undefined;
    if (state === undefined || this.#disposed) return;
    const input = JSON.stringify(state);
    // The session's age always moves: it is left out of what "changed" means.
    const key = JSON.stringify({ ...state, cost: { ...state.cost, total_duration_ms: 0 } });
    if (key === this.#lastInput) return;
    this.#lastInput = key;
    this.#running = true;
    const { config } = this.#o;
    const run = await runStatusCommand(config.command, input, {
      cwd: this.#o.cwd,
      shell: this.#o.shell,
      env: this.#o.env,
      timeoutMs: config.timeoutMs,
    });
    this.#running = false;
    if (this.#disposed) return;
    if (run.ok) {
      // Colours pass; any other escape sequence is shown, never acted on.
      this.#o.show(`${" ".repeat(config.padding)}${guardStyled(run.line)}`);
    } else {
      this.#o.show(undefined);
      if (!this.#told) {
        this.#told = true;
        this.#o.problem(`status line: the command ${run.why}; nothing is shown`);
      }
    }
    if (this.#next !== undefined) this.update(this.#next);
  }
}
