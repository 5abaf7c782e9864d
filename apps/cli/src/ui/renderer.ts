/**
 * Renders pod events for a person: streamed text, thinking dimmed, a
 * spinner line per running tool that becomes a summary line (arguments in
 * short, duration, size) when it ends, alerts, retries, compactions, and a
 * usage line with the context fill after each turn.
 */
import type { Item, Usage } from "@yoi/llm-client";
import type { RunResult } from "@yoi/llm-worker";
import type { ModelPricing } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { answerSources, contextTokens, type PodEvent } from "@yoi/pod";
import { describeAlert, describeFailure, type ProviderContext } from "../describe-error.ts";
import { transcriptLines } from "../sessions/transcript.ts";
import type { Style } from "../style.ts";
import { sanitize, sanitizeDeep } from "../terminal-text.ts";
import { visibleWidth, wrapWords } from "../text-width.ts";
import { costOf, formatCost } from "./cost.ts";
import { type LiveOutput, LiveRegion } from "./live-region.ts";
import { MarkdownStream } from "./markdown/markdown-stream.ts";
import type { RichOutput } from "./rich-output.ts";
import { SubagentView } from "./subagent-view.ts";
import { PlainStream } from "./text-stream.ts";
import { TodoView } from "./todo-view.ts";
import { formatDuration, formatTokens, shortArgs, toolSize } from "./tool-summary.ts";
import { serverToolLine, sourcesText } from "./web-sources.ts";

export interface RendererOptions {
  out: LiveOutput;
  style: Style;
  /** Spinners and in-place updates (a terminal). */
  animate: boolean;
  /** Context window of the model, for the fill shown after each turn (0: unknown). */
  window: number;
  provider: ProviderContext;
  /** Project root, for the file snapshots an edit's diff is made from. */
  root?: string;
  /** Prices of the model in use (undefined: unknown, cost shown as `$?`). */
  pricing?: ModelPricing | undefined;
  /**
   * What every event passes through before it is shown (the session's
   * streamed-secret filter, createStreamTextRedaction); none: shown as it is.
   */
  redact?: ((event: PodEvent) => PodEvent[]) | undefined;
}

/** A streamed block held until it can be laid out. */
type StreamBlock = Pick<MarkdownStream, "pending" | "preview" | "push" | "end">;

/** Diff lines shown after an edit before the rest is collapsed. */
const DIFF_MAX_LINES = 24;

type Mode = "none" | "text" | "thinking";

/** Lines of a command's output shown from its start and its end. */
const HEAD_LINES = 4;
const TAIL_LINES = 4;

/** Lines of a running command's output shown under its spinner, and the characters kept to find them. */
const LIVE_LINES = 5;
const LIVE_KEEP_CHARS = 4096;

/** The last complete-or-not lines of live output, without blank ones at the end; a carriage return starts a line over. */
function liveTail(text: string): string[] {
  const trimmed = text.replace(/\s+$/, "");
  if (trimmed === "") return [];
  return trimmed
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .slice(-LIVE_LINES);
}

/** The first and last lines of a text, with a count of what is left out between them. */
export function headTail(text: string, head: number, tail: number): string[] {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length <= head + tail + 1) return lines;
  return [...lines.slice(0, head), `… ${lines.length - head - tail} more lines`, ...lines.slice(-tail)];
}

export class Renderer {
  readonly #o: RendererOptions;
  readonly #live: LiveRegion;
  readonly #todos: TodoView;
  readonly #subagents: SubagentView;
  #mode: Mode = "none";
  /** The cursor is at the start of a line. */
  #atLineStart = true;
  #lastUsage: Usage | undefined;
  #runStarted = 0;
  readonly #tools = new Map<
    string,
    {
      name: string;
      args: string;
      rawArgs: unknown;
      startedAt: number;
      before?: string | undefined;
      status?: string;
      /** The end of what it printed so far (live output), for the lines under its spinner. */
      output?: string;
    }
  >();
  #rich: RichOutput | undefined;
  /** Dollars spent in this session so far; undefined once a run's cost was unknown. */
  #sessionCost: number | undefined = 0;
  /** Calls the user approved at a question (which showed their diff). */
  readonly #approved = new Set<string>();
  /** Why a block of the streamed answer could not be rendered as Markdown (said once the block ends). */
  #renderFailure: string | undefined;
  /** Warning codes already shown: each is said once a session. */
  readonly #warned = new Set<string>();
  /** The streamed block being held until it can be laid out (Markdown or plain lines). */
  #block: StreamBlock | undefined;
  /** The live line previewing a block still being written is on screen. */
  #pendingShown = false;
  /** The full output of the last tool (what the model saw), for the expand key. */
  #lastOutput: { title: string; text: string } | undefined;
  /**
   * Streamed text that came since the last frame of the live region, not
   * shown yet: taken in at the next frame (or before anything else is shown),
   * so it is filtered and laid out once a frame, not once a delta (an
   * answer is thousands of deltas, a frame shows what came in 80 ms anyway).
   */
  #held: { type: "text_delta" | "thinking_delta"; turnIndex: number; text: string } | undefined;

  constructor(options: RendererOptions) {
    this.#o = options;
    this.#live = new LiveRegion(options.out, options.animate, () => this.#release());
    this.#todos = new TodoView({
      live: this.#live,
      animate: options.animate,
      style: options.style,
      print: (text) => this.line(text),
      width: () => (options.out.columns === undefined ? undefined : this.#width()),
    });
    this.#subagents = new SubagentView({
      live: this.#live,
      animate: options.animate,
      style: options.style,
      print: (text) => this.line(text),
    });
  }

  set window(value: number) {
    this.#o.window = value;
  }

  set provider(value: ProviderContext) {
    this.#o.provider = value;
  }

  set pricing(value: ModelPricing | undefined) {
    this.#o.pricing = value;
  }

  /** The filter events pass before they are shown (a new one with each session). */
  set redact(value: ((event: PodEvent) => PodEvent[]) | undefined) {
    this.#release();
    this.#o.redact = value;
  }

  set root(value: string) {
    this.#o.root = value;
  }

  /** The heavy renderers, once loaded: from then on Markdown is rendered and edits show diffs. */
  set rich(value: RichOutput | undefined) {
    this.#rich = value;
  }

  get richOutput(): RichOutput | undefined {
    return this.#rich;
  }

  /** A new session (`/clear`): the session's running cost starts again at $0. */
  newSession(): void {
    this.#sessionCost = 0;
  }

  /** Whether live lines are drawn (a terminal): otherwise {@link status} shows nothing. */
  get animated(): boolean {
    return this.#o.animate;
  }

  /**
   * A spinner line of the session's own (a `!cmd` running) with its elapsed
   * time; a function label is drawn anew each frame, without the elapsed
   * time (a countdown); `undefined` removes it.
   */
  status(key: string, label: string | (() => string) | undefined): void {
    if (!this.#o.animate) return;
    if (label === undefined) {
      this.#live.delete(`status:${key}`);
      return;
    }
    const s = this.#o.style;
    const started = Date.now();
    this.#live.set(`status:${key}`, (frame) =>
      typeof label === "function"
        ? `${s.cyan(frame)} ${label()}`
        : `${s.cyan(frame)} ${label} ${s.dim(formatDuration(Date.now() - started))}`,
    );
  }

  /** What is typed ahead while a turn runs, on a live line of its own (empty: none). */
  typeahead(text: string): void {
    if (!this.#o.animate) return;
    if (text === "") {
      this.#live.delete("typeahead");
      return;
    }
    const s = this.#o.style;
    const lines = text.split("\n");
    const more = lines.length > 1 ? s.dim(` (+${lines.length - 1} lines)`) : "";
    this.#live.set(
      "typeahead",
      () => `${s.dim("›")} ${lines.at(-1) ?? ""}▏${more} ${s.dim("(Enter queues it)")}`,
    );
  }

  /** Makes `text` what the expand key shows (a `/diff` too long to print whole). */
  keepForExpand(title: string, text: string): void {
    this.#lastOutput = { title, text };
  }

  /** Prints the full output of the last tool call (the expand key). */
  expandLast(): void {
    const last = this.#lastOutput;
    if (last === undefined) {
      this.line(this.#o.style.dim("no tool output yet"));
      return;
    }
    this.line(this.#o.style.dim(`── ${last.title} ──`));
    this.line(last.text.replace(/\n+$/, "") || this.#o.style.dim("(empty)"));
    this.line(this.#o.style.dim("──"));
  }

  /** Permanent output on its own line(s). */
  line(text: string): void {
    this.#release();
    this.#endBlock();
    this.#live.print(`${text}\n`);
    this.#atLineStart = true;
  }

  /**
   * One of yoi's own messages (a note `·`, a warning `!`, an error `✗`):
   * the mark, then the text word-wrapped at the width with its further rows
   * under the text, all painted with `paint` (no mark: the text alone). At
   * 40 columns a message breaks between words, not in one.
   */
  message(mark: string, text: string, paint: (text: string) => string): void {
    if (mark === "") this.hanging("", paint(text), 0);
    else this.hanging(paint(mark), paint(text), visibleWidth(mark) + 1);
  }

  /**
   * The last `turns` turns of `history` (a resumed session, a rewind), laid
   * out as the live session laid them out: the answers as Markdown once the
   * renderer is loaded (else their words wrapped), the prompts wrapped
   * under their `›`, a line per tool call fitted to the width.
   */
  transcript(history: readonly Item[], turns?: number): void {
    const width = this.#o.out.columns === undefined ? undefined : this.#width();
    const style = this.#o.style;
    const rich = this.#rich;
    const answer =
      width === undefined
        ? undefined
        : (text: string) =>
            rich
              ? rich.markdownLines(text, { width, style, highlight: rich.highlightCode })
              : wrapWords(text, width);
    for (const line of transcriptLines(history, style, { turns, width, answer })) this.line(line);
  }

  /**
   * Permanent output in two columns: `head` padded to `indent` columns, then
   * `body` word-wrapped to the terminal's width, its further lines indented
   * by `indent` (help lists, notes), so no word is cut at the edge. A word
   * wider than a line is left whole for the terminal to wrap. A head that
   * leaves fewer than 20 columns beside it has the body on the rows below,
   * two columns in.
   */
  hanging(head: string, body: string, indent: number): void {
    // A head as wide as its column or wider is followed by two spaces.
    const gap = indent - visibleWidth(head);
    const first = `${head}${" ".repeat(gap > 0 ? gap : 2)}`;
    const lead = head === "" && indent === 0 ? "" : first;
    const columns = this.#o.out.columns;
    if (columns === undefined || visibleWidth(lead) + visibleWidth(body) < columns) {
      this.line(`${lead}${body}`);
      return;
    }
    const room = columns - 1 - visibleWidth(lead);
    if (room < 20 && head !== "") {
      // Too little room beside a wide head (a long model name at 40 columns): the body goes below it.
      const below = wrapWords(body, Math.max(1, columns - 3), { cut: false });
      this.line([head, ...below.map((l) => `  ${l}`)].join("\n"));
      return;
    }
    const [line0 = "", ...rest] = wrapWords(body, Math.max(1, room), { cut: false });
    const pad = " ".repeat(visibleWidth(lead));
    this.line([`${lead}${line0}`, ...rest.map((l) => `${pad}${l}`)].join("\n"));
  }

  /**
   * Our own status text (a call's summary line, an alert, a denial) as
   * permanent lines, word-wrapped at the width: a line's further rows
   * `indent` columns in, so no word is split at the terminal's edge.
   */
  #say(text: string, indent = 2): void {
    if (this.#o.out.columns === undefined) {
      this.line(text);
      return;
    }
    const room = this.#width() - indent;
    const pad = " ".repeat(indent);
    const rows = text.split("\n").flatMap((l) => wrapWords(l, room).map((w, i) => (i === 0 ? w : pad + w)));
    this.line(rows.join("\n"));
  }

  /** Clears the spinners before a question; `resume()` brings them back. */
  suspend(): void {
    this.#release();
    this.#stopWaiting();
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
    this.#release();
    this.#live.dispose();
  }

  /**
   * Shows an event, after the filter. Streamed text that comes while the
   * live region draws frames waits for the next one (see `#held`); any
   * other event shows it first.
   */
  handle(event: PodEvent): void {
    if ((event.type === "text_delta" || event.type === "thinking_delta") && this.#live.framing) {
      const held = this.#held;
      if (held?.type === event.type && held.turnIndex === event.turnIndex) held.text += event.text;
      else {
        this.#release();
        this.#held = { type: event.type, turnIndex: event.turnIndex, text: event.text };
      }
      return;
    }
    this.#release();
    this.#filtered(event);
  }

  /** Shows the streamed text held for the frame. */
  #release(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    this.#filtered(held);
  }

  #filtered(event: PodEvent): void {
    const redact = this.#o.redact;
    if (redact === undefined) this.#show(event);
    else for (const shown of redact(event)) this.#show(shown);
  }

  #show(raw: PodEvent): void {
    // Everything in an event came from outside (the model, tools, servers): made visible before any styling.
    // A delta (thousands an answer) has one string: it alone is made visible, without a walk.
    const event =
      raw.type === "text_delta" || raw.type === "thinking_delta"
        ? { ...raw, text: sanitize(raw.text) }
        : sanitizeDeep(raw);
    const s = this.#o.style;
    switch (event.type) {
      case "run_start":
        this.#runStarted = Date.now();
        this.#lastUsage = undefined;
        break;
      case "request_start":
        this.#waiting(Date.now());
        break;
      case "text_delta":
        this.#stopWaiting();
        this.#stream("text", event.text);
        break;
      case "thinking_delta":
        this.#stopWaiting();
        this.#stream("thinking", event.text);
        break;
      case "tool_call_start": {
        this.#stopWaiting();
        this.#endBlock();
        const args = shortArgs(event.name, event.args);
        // What the file held before the tool changes it (read now: the tool has not started yet).
        const before =
          (event.name === "edit_file" || event.name === "write_file") && this.#rich && this.#o.root
            ? this.#rich.snapshotFile(this.#o.root, pathArg(event.args) ?? "")
            : undefined;
        this.#tools.set(event.callId, {
          name: event.name,
          args,
          rawArgs: event.args,
          startedAt: event.startedAt,
          before,
        });
        if (this.#o.animate) {
          this.#live.set(event.callId, (frame) => {
            const elapsed = formatDuration(Date.now() - event.startedAt);
            const line = `${s.cyan(frame)} ${s.bold(event.name)} ${args} ${s.dim(elapsed)}`;
            // A running command's last lines of output, under its line.
            const tail = this.#tools.get(event.callId)?.output;
            return tail === undefined
              ? line
              : [line, ...liveTail(tail).map((l) => s.dim(`  │ ${l}`))].join("\n");
          });
        } else {
          this.line(`${s.dim("•")} ${s.bold(event.name)} ${args}`);
        }
        break;
      }
      case "tool_output_delta": {
        const tool = this.#tools.get(event.callId);
        if (tool === undefined || !this.#o.animate) break;
        // Enough for the last lines; the whole output comes with the result.
        const joined = (tool.output ?? "") + event.text;
        tool.output = joined.length > LIVE_KEEP_CHARS ? joined.slice(-LIVE_KEEP_CHARS) : joined;
        break;
      }
      case "tool_call_end": {
        const tool = this.#tools.get(event.callId);
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
        // Printed with its output once the result is committed (item_committed), in call order.
        if (tool) tool.status = text;
        else this.#say(text);
        break;
      }
      case "server_tool": {
        this.#stopWaiting();
        const id = `server:${event.item.callId}`;
        if (event.item.status === "running") {
          if (this.#o.animate) {
            const line = serverToolLine(event.item);
            this.#endBlock();
            this.#live.set(id, (frame) => `${s.cyan(frame)} ${line}`);
          }
          break;
        }
        this.#live.delete(id);
        const mark = event.item.status === "failed" ? s.red("✗") : s.green("✓");
        this.line(`${mark} ${serverToolLine(event.item)}`);
        break;
      }
      case "item_committed": {
        this.#stopWaiting();
        const item = event.item;
        if (item.type === "message" && item.role === "assistant") {
          // The sources an answer cites, under it (a web search's).
          const sources = answerSources([item]);
          if (sources.length > 0) this.line(s.dim(sourcesText(sources)));
          break;
        }
        if (item.type !== "tool_result") break;
        const tool = this.#tools.get(item.callId);
        if (tool?.status === undefined) break;
        this.#tools.delete(item.callId);
        this.#say(tool.status);
        // A subagent's group collapses under its task line.
        if (tool.name === "task") this.#subagents.end(item.callId);
        this.#lastOutput = { title: `${tool.name} ${tool.args}`.trim(), text: item.output };
        if (!item.isError) this.#preview(tool, item.output, this.#approved.delete(item.callId));
        break;
      }
      case "subagent":
        this.#subagents.handle(event);
        break;
      case "permission_outcome":
        // The user approved this call after seeing its diff in the question: no need to show it twice.
        if (event.outcome.action === "allow" && event.outcome.by === "user")
          this.#approved.add(event.outcome.callId);
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
            protected: "a protected path",
            tool: "the tool",
          }[event.outcome.by];
          this.#say(s.yellow(`⊘ denied ${event.outcome.tool}${subject} (by ${by})`));
        }
        break;
      case "alert": {
        const { level, source } = event.alert;
        const paint = level === "error" ? s.red : level === "warn" ? s.yellow : s.dim;
        this.#say(
          paint(`${level === "info" ? "·" : "!"} ${source}: ${describeAlert(event.alert, "screen")}`),
        );
        break;
      }
      case "retry": {
        const of = event.maxAttempts !== undefined ? ` of ${event.maxAttempts}` : "";
        const reason = event.reason.split("; retrying")[0] ?? "";
        this.#say(
          s.dim(
            `↻ retrying in ${formatDuration(event.delayMs)} (attempt ${event.attempt}${of}): ${reason}` +
              (event.discarded ? " — the partial answer above is discarded" : ""),
          ),
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
        this.#stopWaiting();
        this.#lastUsage = event.usage;
        break;
      case "warning": {
        // Each kind of note once a session (a dropped reasoning item is not news on every turn).
        // Counts aside, the same note is the same note: "1 reasoning item(s)" and "2 reasoning item(s)" are one.
        const key = `${event.warning.code}:${event.warning.message.replace(/\d+/g, "#")}`;
        if (!this.#warned.has(key)) {
          this.#warned.add(key);
          this.#say(s.dim(`· ${event.warning.message}`));
        }
        break;
      }
      case "todos":
        this.#endBlock();
        this.#todos.update(event.todos);
        break;
      case "run_end":
        this.#stopWaiting();
        this.#endBlock();
        // Calls whose result never got committed (a cancelled batch) still get their line.
        for (const [id, tool] of this.#tools) {
          if (tool.status !== undefined) this.#say(tool.status);
          if (tool.name === "task") this.#subagents.end(id);
          this.#tools.delete(id);
        }
        this.#todos.settle();
        break;
      default:
        break;
    }
  }

  /** Output of a command, its first and last lines (a `!cmd`, a bash call). */
  toolOutput(output: string, isError: boolean): void {
    const s = this.#o.style;
    const lines = headTail(sanitize(output), HEAD_LINES, TAIL_LINES);
    const paint = isError ? s.red : s.dim;
    for (const line of lines) this.line(paint(`  ${line}`));
  }

  /** The closing lines of a run: status, usage, context fill. */
  finish(run: RunResult): void {
    this.#release();
    const result = sanitizeDeep(run);
    const s = this.#o.style;
    this.#endBlock();
    this.#live.dispose();
    switch (result.status) {
      case "cancelled":
        this.line(s.yellow("⊘ cancelled"));
        break;
      case "failed":
        this.#say(
          s.red(
            `✗ ${result.error ? describeFailure(result.error, this.#o.provider) : (result.reason ?? "the run failed")}`,
          ),
        );
        break;
      case "max_turns":
        this.line(
          s.yellow(
            `⊘ stopped after ${result.turns} model calls (the most one prompt may take: --max-turns, or worker.maxTurns in the config); send "continue" to go on`,
          ),
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

  /**
   * Fits a line made of ` · `-separated facts to the terminal: each fact
   * whole, further lines indented under the first fact (a fact wider than
   * the line is wrapped at its spaces).
   */
  #fitFacts(text: string, indent: number): string {
    const columns = this.#o.out.columns;
    if (columns === undefined || visibleWidth(text) < columns) return text;
    const width = this.#width();
    const pad = " ".repeat(indent);
    const lines: string[] = [];
    let current = "";
    for (const fact of text.split(" · ")) {
      const candidate = current === "" ? fact : `${current} · ${fact}`;
      if (visibleWidth(candidate) <= width - (lines.length > 0 ? indent : 0)) {
        current = candidate;
        continue;
      }
      if (current !== "") lines.push(current);
      current = fact;
    }
    lines.push(current);
    return lines
      .flatMap((l, i) => wrapWords(l, width - (i > 0 ? indent : 0)).map((w) => (i > 0 ? pad + w : w)))
      .join("\n");
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
    const cost = costOf(total, this.#o.pricing);
    this.#sessionCost =
      cost === undefined || this.#sessionCost === undefined ? undefined : this.#sessionCost + cost;
    parts.push(`${formatCost(cost)} (session ${formatCost(this.#sessionCost)})`);
    if (this.#runStarted > 0) parts.push(formatDuration(Date.now() - this.#runStarted));
    return this.#fitFacts(`─ ${parts.join(" · ")}`, 2);
  }

  /** Under a finished call: a diff for edits and writes, first and last lines for bash, one line otherwise. */
  #preview(
    tool: { name: string; rawArgs: unknown; before?: string | undefined },
    output: string,
    seenInQuestion: boolean,
  ): void {
    const s = this.#o.style;
    if ((tool.name === "edit_file" || tool.name === "write_file") && this.#rich && this.#o.root) {
      const after = this.#rich.snapshotFile(this.#o.root, pathArg(tool.rawArgs) ?? "");
      if (after !== undefined) {
        const view = this.#rich.renderDiff(tool.before ?? "", after, s, Number.POSITIVE_INFINITY);
        const counts = `  ${tool.before === undefined ? "new file, " : ""}+${view.added} -${view.removed}`;
        // The expand key shows the whole diff, not the tool's one-line answer.
        if (this.#lastOutput) this.#lastOutput.text = view.lines.join("\n");
        if (seenInQuestion) {
          this.message(" ", `${counts.trimStart()} (as shown in the question; ctrl+o shows it again)`, s.dim);
          return;
        }
        this.line(s.dim(counts));
        for (const l of view.lines.slice(0, DIFF_MAX_LINES)) this.line(`  ${l}`);
        const hidden = view.lines.length - DIFF_MAX_LINES;
        if (hidden > 0) this.line(s.dim(`  … ${hidden} more diff lines (ctrl+o shows them all)`));
        return;
      }
    }
    if (tool.name === "bash") {
      for (const l of headTail(output, 3, 3)) this.line(s.dim(`  ${l}`));
      return;
    }
    if (tool.name === "edit_file" || tool.name === "write_file") return;
    const first = output.split("\n").find((l) => l.trim() !== "");
    if (first !== undefined) {
      const lines = output.replace(/\n+$/, "").split("\n").length;
      const more = lines > 1 ? ` (+${lines - 1} lines, ctrl+o expands)` : "";
      const flat = first.replace(/\s+/g, " ").trim();
      const cut = flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
      this.#say(s.dim(`  ⎿ ${cut}${more}`), 4);
    }
  }

  /** A spinner with the time since the request went out, until the first token. */
  #waiting(since: number): void {
    if (!this.#o.animate) return;
    const s = this.#o.style;
    this.#live.set(
      "waiting",
      (frame) => `${s.cyan(frame)} ${s.dim(`waiting for the model · ${formatDuration(Date.now() - since)}`)}`,
    );
  }

  #stopWaiting(): void {
    if (this.#o.animate) this.#live.delete("waiting");
  }

  #stream(mode: Exclude<Mode, "none">, text: string): void {
    if (text === "") return;
    const s = this.#o.style;
    if (this.#mode !== mode) {
      this.#endBlock();
      if (mode === "thinking") this.#write(s.dim("✻ thinking\n"));
      this.#mode = mode;
      this.#block = this.#openBlock(mode);
    }
    if (this.#block) {
      this.#block.push(text);
      this.#previewPending();
    } else this.#write(mode === "thinking" ? s.dim(text) : text);
  }

  /** Columns the text is laid out in: one short of the terminal's, so no line ends on the last column. */
  #width(): number {
    return Math.max(20, (this.#o.out.columns ?? 80) - 1);
  }

  /**
   * How a streamed block is held until it can be laid out: Markdown once
   * the renderer is loaded, otherwise lines, word-wrapped. Not a terminal
   * (no width): nothing is held, the text goes out as it comes.
   */
  #openBlock(mode: Exclude<Mode, "none">): StreamBlock | undefined {
    if (this.#o.out.columns === undefined) return undefined;
    const s = this.#o.style;
    const write = (rendered: string) => this.#write(rendered);
    const rich = this.#rich;
    if (mode === "text" && rich) {
      return new MarkdownStream(
        rich,
        () => ({ width: this.#width(), style: s, highlight: rich.highlightCode }),
        write,
        // Said once the block has ended: a line now would end the block in the middle of the stream.
        (error) => {
          // Its first line: a module that cannot be found goes on with the whole require stack.
          this.#renderFailure ??= errorMessage(error).split("\n", 1)[0];
        },
      );
    }
    const paint = mode === "thinking" ? s.dim : (t: string) => t;
    return new PlainStream((t) => wrapWords(paint(t), this.#width()).join("\n"), write);
  }

  /**
   * The block still being written, laid out on live lines (anew at each
   * draw: a resize re-flows it) until it is complete. The entry stays while
   * the block streams; with nothing pending it draws no line.
   */
  #previewPending(): void {
    if (!this.#o.animate || this.#pendingShown) return;
    if ((this.#block?.pending ?? "").trim() === "") return;
    this.#pendingShown = true;
    this.#live.set("pending", () => this.#block?.preview() ?? "");
  }

  #write(text: string): void {
    if (text === "") return;
    this.#live.print(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Ends a streamed block on a line of its own. */
  #endBlock(): void {
    if (this.#block) {
      const block = this.#block;
      this.#block = undefined;
      if (this.#pendingShown) this.#live.delete("pending");
      this.#pendingShown = false;
      block.end();
    }
    if (!this.#atLineStart) this.#write("\n");
    this.#mode = "none";
    const failure = this.#renderFailure;
    this.#renderFailure = undefined;
    if (failure !== undefined && !this.#warned.has("markdown")) {
      this.#warned.add("markdown");
      this.#say(this.#o.style.dim(`· Markdown could not be rendered (${sanitize(failure)}); shown as text`));
    }
  }
}

/** The `path` argument of a file tool's call. */
function pathArg(args: unknown): string | undefined {
  const value = (args as { path?: unknown } | undefined)?.path;
  return typeof value === "string" ? value : undefined;
}
