/**
 * Renders pod events for a person: streamed text, thinking dimmed, a
 * spinner line per running tool that becomes a summary line (arguments in
 * short, duration, size) when it ends, alerts, retries, compactions, and a
 * usage line with the context fill after each turn.
 */
import type { Usage } from "@yoi/llm-client";
import type { RunResult } from "@yoi/llm-worker";
import type { PodEvent } from "@yoi/pod";
import { describeFailure, type ProviderContext } from "../describe-error.ts";
import { contextTokens } from "../stream-json.ts";
import type { Style } from "../style.ts";
import { type LiveOutput, LiveRegion } from "./live-region.ts";
import { formatDuration, formatTokens, shortArgs, toolSize } from "./tool-summary.ts";

export interface RendererOptions {
  out: LiveOutput;
  style: Style;
  /** Spinners and in-place updates (a terminal). */
  animate: boolean;
  /** Context window of the model, for the fill shown after each turn (0: unknown). */
  window: number;
  provider: ProviderContext;
}

type Mode = "none" | "text" | "thinking";

export class Renderer {
  readonly #o: RendererOptions;
  readonly #live: LiveRegion;
  #mode: Mode = "none";
  /** The cursor is at the start of a line. */
  #atLineStart = true;
  #lastUsage: Usage | undefined;
  #runStarted = 0;
  readonly #tools = new Map<string, { name: string; args: string; startedAt: number }>();

  constructor(options: RendererOptions) {
    this.#o = options;
    this.#live = new LiveRegion(options.out, options.animate);
  }

  set window(value: number) {
    this.#o.window = value;
  }

  set provider(value: ProviderContext) {
    this.#o.provider = value;
  }

  /** Permanent output on its own line(s). */
  line(text: string): void {
    this.#endBlock();
    this.#live.print(`${text}\n`);
    this.#atLineStart = true;
  }

  /** Clears the spinners before a question; `resume()` brings them back. */
  suspend(): void {
    this.#endBlock();
    this.#live.suspend();
  }

  resume(): void {
    this.#live.resume();
  }

  resized(): void {
    this.#live.resized();
  }

  dispose(): void {
    this.#live.dispose();
  }

  handle(event: PodEvent): void {
    const s = this.#o.style;
    switch (event.type) {
      case "run_start":
        this.#runStarted = Date.now();
        this.#lastUsage = undefined;
        break;
      case "text_delta":
        this.#stream("text", event.text);
        break;
      case "thinking_delta":
        this.#stream("thinking", event.text);
        break;
      case "tool_call_start": {
        this.#endBlock();
        const args = shortArgs(event.name, event.args);
        this.#tools.set(event.callId, { name: event.name, args, startedAt: event.startedAt });
        if (this.#o.animate) {
          this.#live.set(event.callId, (frame) => {
            const elapsed = formatDuration(Date.now() - event.startedAt);
            return `${s.cyan(frame)} ${s.bold(event.name)} ${args} ${s.dim(elapsed)}`;
          });
        } else {
          this.line(`${s.dim("•")} ${s.bold(event.name)} ${args}`);
        }
        break;
      }
      case "tool_call_end": {
        const tool = this.#tools.get(event.callId);
        this.#tools.delete(event.callId);
        this.#live.delete(event.callId);
        const mark = event.isError ? s.red("✗") : s.green("✓");
        const size = toolSize(event.outputBytes, event.fullBytes, event.blobId);
        const facts = s.dim(`${formatDuration(event.durationMs)} · ${size}`);
        let text = `${mark} ${s.bold(event.name)} ${tool?.args ?? ""} ${facts}`;
        if (event.isError) {
          // The first lines, joined: an error often says "X:" on one line and why on the next.
          const why = event.preview
            .split("\n")
            .map((l) => l.trim())
            .filter((l) => l !== "")
            .slice(0, 3)
            .join(" ");
          text += `\n  ${s.red(why.length > 160 ? `${why.slice(0, 157)}...` : why)}`;
        }
        this.line(text);
        break;
      }
      case "permission_outcome":
        // A user's own "no" is already on screen ("→ denied"); say only what others decided.
        if (event.outcome.action === "deny" && event.outcome.by !== "user") {
          const subject = event.outcome.subject ? `: ${event.outcome.subject.split("\n")[0]}` : "";
          const by = {
            rule: "a permissions rule",
            default: "the default",
            session: "this session",
            user: "you",
            no_ui: "no UI",
            mode: "the permission mode",
            scope: "the project scope",
            sandbox: "the missing sandbox",
            parse: "an unreadable command line",
          }[event.outcome.by];
          this.line(s.yellow(`⊘ denied ${event.outcome.tool}${subject} (by ${by})`));
        }
        break;
      case "alert": {
        const { level, source, message } = event.alert;
        const paint = level === "error" ? s.red : level === "warn" ? s.yellow : s.dim;
        this.line(paint(`${level === "info" ? "·" : "!"} ${source}: ${message}`));
        break;
      }
      case "retry": {
        const of = event.maxAttempts !== undefined ? ` of ${event.maxAttempts}` : "";
        const reason = event.reason.split("; retrying")[0] ?? "";
        this.line(
          s.dim(`↻ retrying in ${formatDuration(event.delayMs)} (attempt ${event.attempt}${of}): ${reason}`),
        );
        break;
      }
      case "history_replaced":
        if (event.reason === "compaction") {
          const trimmed = event.detail?.keptTurnsTrimmedRefs;
          const n = Array.isArray(trimmed) ? trimmed.length : 0;
          const note = n > 0 ? `; ${n} tool output(s) in the kept turns trimmed to refs` : "";
          this.line(s.magenta(`⟳ compacted the conversation: ${event.items.length} items now${note}`));
        }
        break;
      case "usage":
        this.#lastUsage = event.usage;
        break;
      case "warning":
        if (event.warning.code !== "retry") this.line(s.dim(`· ${event.warning.message}`));
        break;
      case "run_end":
        this.#endBlock();
        break;
      default:
        break;
    }
  }

  /** The closing lines of a run: status, usage, context fill. */
  finish(result: RunResult): void {
    const s = this.#o.style;
    this.#endBlock();
    this.#live.dispose();
    switch (result.status) {
      case "cancelled":
        this.line(s.yellow("⊘ cancelled"));
        break;
      case "failed":
        this.line(
          s.red(
            `✗ ${result.error ? describeFailure(result.error, this.#o.provider) : (result.reason ?? "the run failed")}`,
          ),
        );
        break;
      case "max_turns":
        this.line(
          s.yellow(`⊘ stopped after ${result.turns} model calls (worker.maxTurns); send "continue" to go on`),
        );
        break;
      case "paused":
        this.line(s.yellow(`⊘ paused: ${result.reason ?? "by a hook"}`));
        break;
      default:
        break;
    }
    this.line(s.dim(this.usageLine(result)));
  }

  usageLine(result: RunResult): string {
    const total = result.usage;
    const parts = [
      `${result.turns} call${result.turns === 1 ? "" : "s"}`,
      `${formatTokens(total.inputTokens ?? 0)} in`,
      `${formatTokens(total.outputTokens ?? 0)} out`,
    ];
    if ((total.cacheReadTokens ?? 0) > 0) parts.push(`${formatTokens(total.cacheReadTokens ?? 0)} cached`);
    if (this.#lastUsage && this.#o.window > 0) {
      const used = contextTokens(this.#lastUsage);
      const pct = (used / this.#o.window) * 100;
      parts.push(
        `context ${pct < 10 ? pct.toFixed(1) : Math.round(pct)}% of ${formatTokens(this.#o.window)}`,
      );
    }
    if (this.#runStarted > 0) parts.push(formatDuration(Date.now() - this.#runStarted));
    return `─ ${parts.join(" · ")}`;
  }

  #stream(mode: Exclude<Mode, "none">, text: string): void {
    if (text === "") return;
    const s = this.#o.style;
    if (this.#mode !== mode) {
      this.#endBlock();
      if (mode === "thinking") this.#write(s.dim("✻ thinking\n"));
      this.#mode = mode;
    }
    this.#write(mode === "thinking" ? s.dim(text) : text);
  }

  #write(text: string): void {
    this.#live.print(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Ends a streamed block on a line of its own. */
  #endBlock(): void {
    if (!this.#atLineStart) this.#write("\n");
    this.#mode = "none";
  }
}
