/**
 * The interactive session: a prompt on our own line editor (multi-line,
 * bracketed paste, history in ~/.yoi/history, Ctrl-R), the answer streamed
 * above it, tools with spinners, permission questions answered with one key,
 * slash commands, `!cmd` shell escapes, Esc or Ctrl-C to cancel a turn
 * (Ctrl-C twice at an empty prompt to leave). The terminal is restored on
 * every way out.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import * as readline from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import {
  DEFAULT_SOURCE,
  displaySource,
  type PermissionRule,
  type ProjectSettings,
  parseModelRef,
  promptHistoryFile,
  qualifyModelRef,
  resolveUserPath,
  saveUserSetting,
  withModel,
} from "@yoi/manifest";
import { closest, errorMessage } from "@yoi/manifest/errors";
import type {
  ChangedFile,
  PermissionDecision,
  PermissionPrompt,
  PermissionRequest,
  RefCheck,
} from "@yoi/pod";
import {
  backgroundStatus,
  bashPrefixRules,
  branchLabel,
  contextTokens,
  createStreamTextRedaction,
  defaultBashEnv,
  EXIT_PLAN_MODE_TOOL_NAME,
  formatRuleSpec,
  parseSegments,
  UsageLedger,
} from "@yoi/pod";
import { listSessions } from "@yoi/worker-persistence";
import type { Command } from "../args.ts";
import { captureConsole } from "../console-capture.ts";
import { describeError } from "../describe-error.ts";
import { EXIT } from "../exit-codes.ts";
import {
  checkFileRefs,
  type OpenedPod,
  type OpenPodOptions,
  openPodWith,
  providerContext,
  restoreWarnings,
} from "../open-session.ts";
import { sandboxNotice } from "../permission-flags.ts";
import { formatEntries, removeEntry, sessionEntries } from "../permission-list.ts";
import { modeTag } from "../permission-mode-key.ts";
import { approveForProject, projectRulesFor, quoteRules } from "../project-approvals.ts";
import { projectRoot } from "../project-root.ts";
import { formatCountdown, formatReset } from "../rate-limit-reset.ts";
import { broadScopeWarning } from "../scope-warning.ts";
import {
  applySessionFlags,
  type CliConfig,
  loadCredentials,
  loadProjectConfig,
  type ModelSetup,
  missingKey,
  modelSetup,
  type SetupOptions,
} from "../session-setup.ts";
import { conversationMarkdown } from "../sessions/export.ts";
import { chatSessionPlan, resolveResumeTarget } from "../sessions/resume-target.ts";
import { pickFrom, pickSession } from "../sessions/session-picker.ts";
import { type SlashRewindContext, slashRewind, slashUndo } from "../sessions/slash-rewind.ts";
import { markStartup } from "../startup/trace.ts";
import { colorEnabled, createStyle, resolveTheme, type Style } from "../style.ts";
import { sanitize, sanitizeLine } from "../terminal-text.ts";
import { fitLines, truncate } from "../text-width.ts";
import { bashesLines } from "../ui/bashes-view.ts";
import { changesLines, reviewLines } from "../ui/changes-view.ts";
import { complete } from "../ui/completer.ts";
import {
  callsExtensionCommand,
  type ExpandedCommand,
  expandSlash,
  extensionHelpRows,
  extensionMenuCommands,
} from "../ui/extension-commands.ts";
import { FileFinder } from "../ui/file-finder.ts";
import { headerLine } from "../ui/header.ts";
import type { Key } from "../ui/keys.ts";
import { LineEditor } from "../ui/line-editor.ts";
import { modelChoices } from "../ui/model-choices.ts";
import { Notifier } from "../ui/notify.ts";
import { permissionChoices, permissionQuestion } from "../ui/permission-question.ts";
import { planChoices, planQuestion } from "../ui/plan-question.ts";
import { PromptHistory } from "../ui/prompt-history.ts";
import { Renderer } from "../ui/renderer.ts";
import { costRows, statusRows } from "../ui/session-report.ts";
import { runShellEscape, shellContext } from "../ui/shell-escape.ts";
import {
  findSlashCommand,
  HELP_COLUMN,
  type MenuCommand,
  parseSlash,
  type SlashCommand,
  slashHelp,
  slashMenu,
} from "../ui/slash-commands.ts";
import { StatusLine, type StatusState } from "../ui/status-line.ts";
import { type Background, backgroundFromEnv, queryBackground } from "../ui/terminal-background.ts";
import { installTerminalGuard, restoreTerminal } from "../ui/terminal-guard.ts";
import { themeCommand } from "../ui/theme-command.ts";
import { formatBytes } from "../ui/tool-summary.ts";
import { pricingHint } from "../usage-ledger.ts";
import { cliVersion } from "../version.ts";
import { initPrompt } from "./init-prompt.ts";
import { formatLspStatus } from "./lsp.ts";
import { formatMcpStatus } from "./mcp.ts";
import { formatSessionTable } from "./sessions.ts";

/** Colours the terminal shows (bits: 4 is 16 colours, 8 is 256, 24 true colour), as Node reads TERM and the like. */
function colorDepth(): number {
  return process.stdout.getColorDepth?.() ?? 8;
}

/** Two Ctrl-C presses at the prompt within this time leave. */
const DOUBLE_INTERRUPT_MS = 2000;

/** What other agents' commands are called here, for people who bring their habits (see args.ts for flags). */
const OTHER_AGENTS_COMMANDS: Record<string, string> = {
  "/config":
    "/status shows the model, mode and sandbox; yoi config (in a shell) shows every setting and its source",
  "/login": "run yoi setup in a shell to save a key",
  "/logout": "run yoi logout in a shell to remove saved keys",
  "/doctor": "/status shows the model, mode, sandbox, MCP servers and versions",
  "/memory": "project instructions live in AGENTS.md (/init writes one)",
};
/** Lines of a `/diff` printed before the rest is left to ctrl+o. */
const DIFF_PAGE_LINES = 80;

export async function interactiveCommand(command: Extract<Command, { kind: "chat" }>): Promise<number> {
  markStartup("interactive: modules loaded");
  installTerminalGuard();
  const style = createStyle(colorEnabled(process.stdout));
  const trust: SetupOptions = {
    trust: {
      ask: (settings) => askTrust(settings, style),
      onIgnored: (settings) =>
        process.stdout.write(
          style.yellow(
            `! not trusted: ${sanitizeLine(settings.files.join(" and "))} settings ignored for this session\n`,
          ),
        ),
    },
  };
  let base = await loadProjectConfig(command.flags, trust);
  let plan = await chatSessionPlan(command, base, (sessions) => pickSession(sessions, style));
  if (plan.cwd !== undefined) {
    // The session ran in a worktree: it goes on there, with that checkout's config.
    command = { ...command, flags: { ...command.flags, cwd: plan.cwd } };
    base = await loadProjectConfig(command.flags, trust);
    plan = await chatSessionPlan(command, base, (sessions) => pickSession(sessions, style));
  }
  const flagged = await offerSetup(await applySessionFlags(base, plan.flags), style);
  // The terminal's background, for the `auto` theme: asked now (the answer comes in on stdin, which
  // nothing else reads until the prompt starts) and awaited only before the header is painted.
  const stopQuery = new AbortController();
  const background =
    base.config.theme === "auto" && style.enabled
      ? queryBackground({ input: process.stdin, output: process.stdout }, 250, stopQuery.signal).then(
          (answer) => answer ?? backgroundFromEnv(process.env),
        )
      : Promise.resolve(undefined);
  const setup = await modelSetup(flagged);
  markStartup("interactive: config and model set up");
  const project = await projectRoot(setup.cwd, setup.config.scope.root);
  const history = await PromptHistory.load(promptHistoryFile(setup.homeDir), project);
  const session = new InteractiveSession(base, setup, command, style, history, plan.open, background, () =>
    stopQuery.abort(),
  );
  return session.start();
}

interface PendingAsk {
  request: PermissionRequest;
  resolve: (decision: PermissionDecision) => void;
  /** For bash: the prefix rules "always" grants (`git log *`, `head *`), when the line has safe ones. */
  prefixes: string[] | undefined;
  /** The rules "always for this project" stores, when there are any to offer. */
  project: PermissionRule[] | undefined;
  /** The question's lines, and the call whole (Ctrl-O), made visible. */
  question: { lines: string[]; whole: string[] };
}

class InteractiveSession {
  /** The config as loaded, before any model was chosen or flag applied: `/resume` sets a session's model up on it. */
  readonly #base: CliConfig;
  #setup: ModelSetup;
  readonly #command: Extract<Command, { kind: "chat" }>;
  readonly #style: Style;
  readonly #history: PromptHistory;
  readonly #editor: LineEditor;
  readonly #renderer: Renderer;
  #opened!: OpenedPod;
  #unsubscribe: (() => void) | undefined;
  #busy = false;
  #controller: AbortController | undefined;
  #pendingAsk: PendingAsk | undefined;
  readonly #queue: string[] = [];
  /** Output of `!cmd` runs, sent as context with the next prompt. */
  readonly #shellContext: string[] = [];
  #lastInterrupt = 0;
  #done!: (code: number) => void;
  #exiting = false;
  #restoreConsole: (() => void) | undefined;
  /** Markdown, highlighting and diffs: loaded in the background from the start, awaited before the first run. */
  readonly #richReady: Promise<void>;
  readonly #loadRich: () => void;
  /** Tokens in the context after the session's last model call (`/status`). */
  #contextTokens: number | undefined;
  /** Notes already shown (each once a session). */
  readonly #notes = new Set<string>();
  /** The provider a `--base-url` flag was given for. */
  readonly #baseURLProvider: string;
  /** The terminal's background as it answered (OSC 11), for the `auto` theme and `/theme`. */
  readonly #background: Promise<Background | undefined>;
  /** Ends the background query at once (its answer is then what came so far, or the fallback). */
  readonly #stopBackgroundQuery: () => void;
  /** Which session to open: a chosen one (`-c`, `-r`, `--resume`) or a fork. */
  readonly #open: Pick<OpenPodOptions, "resume" | "fork">;
  /** The `@` file finder over the session's scope. */
  #files: FileFinder | undefined;
  readonly #notifier: Notifier;
  /** The project's root (the git top level, else the scope root), for the status line. */
  #projectDir: string | undefined;
  /** The status line command, when the config has one. */
  #statusLine: StatusLine | undefined;
  /** What the status line is told: this session's time and the git branch. */
  readonly #tally = {
    started: Date.now(),
    apiMs: 0,
    branch: undefined as string | undefined,
  };
  /** Every model call of this process's runs, subagents' included, priced per model (the status line's tokens and dollars). */
  readonly #ledger = new UsageLedger(() => this.#setup.config);

  constructor(
    base: CliConfig,
    setup: ModelSetup,
    command: Extract<Command, { kind: "chat" }>,
    style: Style,
    history: PromptHistory,
    open: Pick<OpenPodOptions, "resume" | "fork"> = {},
    background: Promise<Background | undefined> = Promise.resolve(undefined),
    stopBackgroundQuery: () => void = () => {},
  ) {
    this.#open = open;
    this.#background = background;
    this.#stopBackgroundQuery = stopBackgroundQuery;
    this.#base = base;
    this.#setup = setup;
    this.#command = command;
    this.#style = style;
    this.#history = history;
    this.#baseURLProvider = setup.resolved.providerName;
    this.#editor = new LineEditor({
      input: process.stdin,
      output: process.stdout,
      style,
      history,
      complete: (line) => complete(line, this.#opened.pod.fs, this.#allCommands()),
      suggest: async (text, cursor) =>
        slashMenu(text, cursor, this.#allCommands()) ?? this.#files?.menu(text, cursor),
      onHiddenEdit: (text) => this.#renderer.typeahead(text),
      pasteCollapseLines: setup.config.paste.collapseLines,
      vim: setup.config.editorMode === "vim",
      onVimMode: () => this.#statusChanged(),
    });
    this.#notifier = new Notifier(setup.config.notifications, {
      env: process.env,
      isTTY: process.stdout.isTTY === true,
      write: (text) => process.stdout.write(text),
    });
    this.#editor.prompt = this.#prompt;
    this.#editor.bind("ctrl+o", () => this.#renderer.expandLast());
    // Shift+Tab cycles the permission mode; the prompt names it.
    this.#editor.bind("shift+tab", () => {
      const permissions = this.#opened?.pod.permissions;
      if (permissions === undefined || this.#pendingAsk !== undefined) return;
      const next = permissions.nextMode();
      if (next === permissions.mode) return;
      permissions.setMode(next);
      this.#editor.prompt = this.#prompt;
      this.#statusChanged();
    });
    const editor = this.#editor;
    this.#renderer = new Renderer({
      // Everything the renderer prints goes above the input when the input is on screen.
      out: {
        write: (text: string) => editor.print(text),
        get columns() {
          return process.stdout.columns;
        },
        get rows() {
          return process.stdout.rows;
        },
        isTTY: process.stdout.isTTY === true,
      },
      style,
      animate: process.stdout.isTTY === true,
      window: setup.window,
      provider: { provider: setup.resolved.providerName },
    });
    let loaded!: () => void;
    this.#richReady = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    let loading = false;
    this.#loadRich = () => {
      if (loading) return;
      loading = true;
      import("../ui/rich-output.ts").then(
        (rich) => {
          this.#renderer.rich = rich;
          loaded();
        },
        // Without them the answer is shown as plain text.
        () => loaded(),
      );
    };
  }

  /** Columns a listing is fitted to: one short of the terminal's (undefined: not a terminal). */
  #columns(): number | undefined {
    return process.stdout.columns === undefined ? undefined : process.stdout.columns - 1;
  }

  get #prompt(): string {
    const mode = this.#opened?.pod.permissions.mode;
    return `${mode === undefined ? "" : modeTag(mode, this.#style)}${this.#style.cyan("› ")}`;
  }

  async start(): Promise<number> {
    const opened = await openPodWith(this.#setup, { ...this.#open, ask: this.#ask });
    markStartup("interactive: pod opened");
    this.#attach(opened);
    this.#restoreConsole = captureConsole(
      (line) => this.#renderer.message("·", line, this.#style.dim),
      [this.#setup.apiKey],
    );
    // The branch for the header: read when the pod opened, bounded by the environment's git time limit.
    const environment = await opened.pod.environment();
    // A terminal that answers the background query has answered by now; one that does not (a bare
    // pty, a slow link) must not hold the prompt: the query is ended and the fallback used.
    const answered = await Promise.race([
      this.#background,
      new Promise<"late">((r) => setTimeout(r, 20, "late")),
    ]);
    if (answered === "late") this.#stopBackgroundQuery();
    this.#style.theme = resolveTheme(
      this.#base.config.theme,
      answered === "late" ? await this.#background : answered,
      colorDepth(),
    );
    this.#editor.prompt = this.#prompt;
    const branch = environment && branchLabel(environment);
    this.#tally.branch = branch;
    // A resumed conversation is shown as it was: its answers rendered, so the renderer is loaded first.
    if (opened.restored) {
      this.#loadRich();
      await this.#richReady;
    }
    this.#banner(branch);
    this.#startStatusLine();
    const exited = new Promise<number>((resolve) => {
      this.#done = resolve;
    });
    this.#editor.start({
      submit: (text) => this.#onLine(text),
      interrupt: () => this.#onInterrupt(),
      escape: () => this.#onEscape(),
      eof: () => void this.#exit(EXIT.ok),
    });
    process.stdout.on("resize", () => {
      this.#renderer.resized();
      this.#editor.resized();
    });
    // After the prompt is drawn: parsing these modules must not delay it. The sandbox probe too (a
    // process start, when no earlier run remembered its answer): /status then shows what it found,
    // and a `sandbox` alert says so where it found none.
    setImmediate(this.#loadRich);
    setImmediate(() => void opened.pod.settleSandbox());
    if (this.#command.prompt !== undefined) {
      this.#renderer.line(`${this.#prompt}${this.#command.prompt}`);
      this.#history.add(this.#command.prompt);
      void this.#submit(this.#command.prompt);
    } else {
      this.#editor.show();
    }
    markStartup("interactive: prompt ready");
    return exited;
  }

  #attach(opened: OpenedPod): void {
    this.#unsubscribe?.();
    this.#opened = opened;
    this.#files = new FileFinder(opened.pod.fs);
    this.#renderer.window = opened.setup.window;
    this.#renderer.provider = opened.provider;
    this.#renderer.root = opened.pod.fs.cwd;
    this.#renderer.pricing = opened.setup.resolved.info?.pricing;
    // Streamed text is masked (a key split over deltas too) by the renderer, once a frame.
    this.#renderer.redact = createStreamTextRedaction();
    this.#contextTokens = undefined;
    const model = () => `${opened.setup.resolved.providerName}/${opened.setup.resolved.model}`;
    this.#unsubscribe = opened.pod.subscribe((event) => {
      this.#ledger.record(event, model);
      if (event.type === "usage") this.#contextTokens = contextTokens(event.usage);
      this.#renderer.handle(event);
    });
    this.#statusChanged();
  }

  #banner(branch: string | undefined): void {
    const s = this.#style;
    const { pod, setup, restored } = this.#opened;
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    this.#renderer.line(
      headerLine({ version: cliVersion(), model, dir: pod.fs.cwd, branch }, s, process.stdout.columns),
    );
    for (const note of setup.notes) this.#note(note);
    this.#pricingNote(setup);
    const sandboxWarning = sandboxNotice(pod.sandbox);
    if (sandboxWarning !== undefined) this.#renderer.message("·", sanitize(sandboxWarning), s.yellow);
    const scopeWarning = broadScopeWarning(pod.fs.writeRoots, setup.homeDir, pod.fs.cwd);
    if (scopeWarning !== undefined) this.#renderer.message("!", sanitize(scopeWarning), s.yellow);
    if (restored) {
      const how = this.#open.fork ? `forked from ${this.#open.fork.parent} as` : "resumed";
      this.#renderer.message("·", `${how} session ${pod.id} (${pod.history.length} items in history)`, s.dim);
      for (const warning of restoreWarnings(pod)) this.#renderer.message("!", sanitize(warning), s.yellow);
      this.#renderer.transcript(pod.history);
    }
    this.#renderer.hanging(
      "",
      s.dim("/help · @path attaches a file · !cmd runs a command · Esc cancels · Ctrl-C twice exits"),
      0,
    );
  }

  /** Enter on the input: run it now, or queue it behind the turn in progress. */
  #onLine(line: string): void {
    if (this.#busy) {
      if (line.trim() !== "") {
        this.#queue.push(line);
        const first = line.split("\n")[0] ?? "";
        const more = line.includes("\n") ? ` (+${line.split("\n").length - 1} lines)` : "";
        this.#renderer.message("▸", `queued: ${first}${more}`, this.#style.dim);
      }
      return;
    }
    void this.#submit(line);
  }

  async #submit(line: string): Promise<void> {
    const text = line.trim();
    if (text === "") {
      this.#next();
      return;
    }
    // Busy before the first await: a line that arrives meanwhile (a paste, typing ahead) is queued, never a second run.
    this.#beginBusy();
    try {
      let allowTools: readonly string[] | undefined;
      if (text.startsWith("/")) {
        // A custom command or an MCP prompt expands to the input it sends; built-ins return nothing.
        const expanded = await this.#slash(text);
        if (expanded === undefined) return;
        line = expanded.text;
        allowTools = expanded.allowTools;
      }
      if (text.startsWith("!")) {
        await this.#shell(text.slice(1).trim());
        return;
      }
      const { refs, tooLarge } = await checkFileRefs(this.#setup, line);
      if (tooLarge !== undefined) {
        this.#renderer.message("✗", sanitize(tooLarge), this.#style.red);
        this.#renderer.message("", "edit the line and press Enter", this.#style.dim);
        // The line comes back for editing, with whatever was queued behind it.
        this.#editor.text = [line, ...this.#queue.splice(0)].join("\n");
        return;
      }
      // What goes with the message; a ref that is not attached is the pod's warn alert, shown as it is raised.
      for (const ref of refs) if (ref.ok) this.#renderer.message("+", attachedRef(ref), this.#style.dim);
      await this.#richReady;
      const context = this.#shellContext.splice(0);
      const input =
        context.length === 0
          ? line
          : [{ type: "text" as const, text: `${context.join("\n\n")}\n\n` }, ...parseSegments(line)];
      const started = Date.now();
      let result = await this.#opened.pod.run(input, {
        signal: this.#controller?.signal,
        ...(allowTools ? { allowTools } : {}),
      });
      this.#renderer.finish(result);
      // A rate limit that resets later than the client waits: offer to wait and go on by itself.
      for (;;) {
        const resetAt = result.status === "failed" ? result.error?.resetAt : undefined;
        if (resetAt === undefined || !(await this.#waitForReset(resetAt))) break;
        result = await this.#opened.pod.resume({ signal: this.#controller?.signal });
        this.#renderer.finish(result);
      }
      // A turn you cancelled needs no telling.
      if (result.status !== "cancelled")
        this.#notifier.turnEnded(Date.now() - started, turnOutcome(result.status));
      this.#count(Date.now() - started);
    } catch (error) {
      this.#renderer.message("✗", describeError(error, this.#opened.provider).message, this.#style.red);
    } finally {
      this.#endBusy();
      this.#next();
    }
  }

  /**
   * Asks whether to wait until the rate limit resets; on a yes counts down
   * to it (Esc or Ctrl-C cancel). Resolves true when the wait ran out and
   * the turn should go on, false when the user declined or cancelled.
   */
  async #waitForReset(resetAt: number): Promise<boolean> {
    const s = this.#style;
    const signal = this.#controller?.signal;
    if (signal === undefined || signal.aborted) return false;
    const yes = await new Promise<boolean>((resolve) => {
      this.#editor.choose(
        `  ${s.yellow(`wait until the limit resets at ${formatReset(resetAt)} and go on by itself? [y]es · [n]o`)} › `,
        (key) => {
          const letter = key.name === "text" ? key.text.toLowerCase() : "";
          if (letter === "y") resolve(true);
          else if (letter === "n" || key.name === "escape" || (key.ctrl && key.name === "c")) resolve(false);
          else return false;
          return true;
        },
      );
    });
    if (!yes) {
      this.#renderer.message("  →", "not waiting; send a message to go on when the limit has reset", s.dim);
      return false;
    }
    this.#renderer.message("  →", `waiting until ${formatReset(resetAt)}; Esc cancels`, s.dim);
    this.#renderer.status(
      "rate-limit",
      () =>
        `waiting for the rate limit to reset: ${formatCountdown(resetAt - Date.now())} left ${s.dim("(esc cancels)")}`,
    );
    try {
      // A second more than asked: a server's clock and ours differ, and a request a moment early fails again.
      const waited = await delay(Math.max(0, resetAt - Date.now()) + 1000, undefined, { signal }).then(
        () => true,
        () => false,
      );
      if (!waited) {
        this.#renderer.message("⊘", "stopped waiting for the rate limit", s.dim);
        return false;
      }
    } finally {
      this.#renderer.status("rate-limit", undefined);
    }
    this.#renderer.message("·", "the rate limit has reset; going on", s.dim);
    return true;
  }

  /** `!cmd`: the user's own command, through the bash tool and its permissions; the output becomes context. */
  async #shell(command: string): Promise<void> {
    const s = this.#style;
    if (command === "") {
      this.#renderer.message(
        "",
        "usage: !<command> (runs it in the project; the output goes to the model with your next message)",
        s.dim,
      );
      return;
    }
    const signal = this.#controller?.signal ?? new AbortController().signal;
    let result: Awaited<ReturnType<typeof runShellEscape>>;
    try {
      result = await runShellEscape(this.#opened.pod, command, signal, () =>
        this.#renderer.status("shell", `${s.bold("$")} ${command.split("\n")[0]}`),
      );
    } finally {
      this.#renderer.status("shell", undefined);
    }
    if (!result.ran) {
      this.#renderer.message("⊘", `${sanitize(command)}: ${sanitize(result.output)}`, s.yellow);
      return;
    }
    this.#renderer.toolOutput(result.output, result.isError);
    this.#shellContext.push(shellContext(command, result.output));
    this.#renderer.message("·", "the output goes to the model with your next message", s.dim);
  }

  #next(): void {
    if (this.#exiting || this.#busy) return;
    const queued = this.#queue.shift();
    if (queued !== undefined) {
      this.#renderer.line(`${this.#prompt}${queued}`);
      void this.#submit(queued);
      return;
    }
    this.#renderer.typeahead("");
    this.#editor.prompt = this.#prompt;
    this.#editor.show();
  }

  /** Runs the status line command (debounced) when the config has one. */
  #startStatusLine(): void {
    const config = this.#setup.config.statusLine;
    if (config === undefined) return;
    void projectRoot(this.#setup.cwd, this.#setup.config.scope.root).then((root) => {
      this.#projectDir = root;
      this.#statusChanged();
    });
    this.#statusLine = new StatusLine({
      config,
      cwd: this.#opened.pod.fs.cwd,
      shell: process.env.SHELL || "/bin/sh",
      // The user's environment without provider keys and credentials, as bash gets it.
      env: defaultBashEnv(
        process.env,
        Object.values(this.#setup.config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])),
      ),
      show: (line) => {
        this.#editor.status = line;
      },
      problem: (message) => this.#note(message),
    });
    this.#statusChanged();
  }

  /** A run's time, for the status line (its tokens and dollars are in the ledger). */
  #count(ms: number): void {
    const t = this.#tally;
    t.apiMs += ms;
    this.#statusChanged();
    // The branch as the run's own read of the environment saw it (a checkout during the session shows).
    if (this.#statusLine !== undefined)
      void this.#opened.pod.environment().then((environment) => {
        t.branch = environment && branchLabel(environment);
        this.#statusChanged();
      });
  }

  /** Tells the status line the session's state (it runs only when that changed). */
  #statusChanged(): void {
    if (this.#statusLine === undefined || this.#opened === undefined) return;
    const { pod, setup } = this.#opened;
    const t = this.#tally;
    const tokens = { input: 0, output: 0 };
    for (const row of this.#ledger.rows()) {
      tokens.input += row.usage.inputTokens ?? 0;
      tokens.output += row.usage.outputTokens ?? 0;
    }
    const window = setup.window;
    const used =
      this.#contextTokens === undefined || window <= 0 ? null : (this.#contextTokens / window) * 100;
    const state: StatusState = {
      session_id: pod.id,
      cwd: pod.fs.cwd,
      model: {
        id: `${setup.resolved.providerName}/${setup.resolved.model}`,
        display_name: setup.resolved.model,
      },
      workspace: { current_dir: pod.fs.cwd, project_dir: this.#projectDir ?? pod.fs.cwd },
      version: cliVersion(),
      cost: {
        total_cost_usd: this.#ledger.totalUsd() ?? null,
        total_duration_ms: Date.now() - t.started,
        total_api_duration_ms: t.apiMs,
        total_lines_added: 0,
        total_lines_removed: 0,
      },
      context_window: {
        total_input_tokens: tokens.input,
        total_output_tokens: tokens.output,
        context_window_size: window,
        used_percentage: used === null ? null : Math.round(used * 1000) / 1000,
      },
      git: { branch: t.branch ?? null },
      permission_mode: pod.permissions.mode,
      ...(this.#editor.vimMode
        ? { vim: { mode: this.#editor.vimMode === "normal" ? "NORMAL" : "INSERT" } }
        : {}),
    };
    this.#statusLine.update(state);
  }

  #beginBusy(): void {
    this.#busy = true;
    this.#controller = new AbortController();
    this.#editor.hide();
  }

  #endBusy(): void {
    this.#busy = false;
    this.#controller = undefined;
    this.#renderer.status("cancel", undefined);
  }

  readonly #ask: PermissionPrompt = async (request) => {
    const prefixes =
      request.tool === "bash" && request.subject !== undefined
        ? await bashPrefixRules(request.subject).catch(() => undefined)
        : undefined;
    return new Promise<PermissionDecision>((resolve) => {
      if (request.signal.aborted) {
        resolve("deny");
        return;
      }
      const s = this.#style;
      const screen = { columns: process.stdout.columns ?? 80, rows: process.stdout.rows ?? 24 };
      const plan = request.tool === EXIT_PLAN_MODE_TOOL_NAME;
      const question = plan
        ? planQuestion(request, s, this.#renderer.richOutput, screen)
        : permissionQuestion(request, s, this.#renderer.richOutput, this.#opened.pod.fs.cwd, screen);
      const project = plan ? undefined : projectRulesFor(request, prefixes);
      this.#pendingAsk = { request, resolve, prefixes, project, question };
      this.#renderer.suspend();
      for (const line of question.lines) this.#renderer.line(line);
      this.#notifier.waiting(
        `${request.tool}${request.subject ? ` ${truncate(sanitizeLine(request.subject), 80)}` : ""}`,
      );
      request.signal.addEventListener(
        "abort",
        () => {
          this.#editor.dismiss();
          this.#finishAsk("deny", "denied (the turn was cancelled)");
        },
        { once: true },
      );
      if (plan) {
        this.#editor.choose(`  ${planChoices(s)} › `, (key) => this.#answerPlan(key));
        return;
      }
      // Say what "always" grants: bash, its prefix rule (or this exact command); other tools, the tool.
      const always =
        request.tool === "bash"
          ? prefixes !== undefined
            ? truncate(sanitizeLine(quoteRules(prefixes)), 60)
            : "this command"
          : sanitizeLine(request.tool);
      const { keys: choices, note } = permissionChoices(
        always,
        project !== undefined,
        process.stdout.columns ?? 80,
      );
      for (const line of note === "" ? [] : note.split("\n")) this.#renderer.hanging(" ", s.dim(line), 2);
      this.#editor.choose(`  ${s.yellow(choices)} › `, (key) => this.#answer(key));
    });
  };

  /** One key answers the question; returns whether it did. */
  #answer(key: Key): boolean {
    const pending = this.#pendingAsk;
    if (!pending) return true;
    const { tool } = pending.request;
    const letter = key.name === "text" ? key.text.toLowerCase() : "";
    if (key.ctrl && key.name === "o") {
      // The call whole, then the question again below it: still unanswered.
      this.#renderer.line(pending.question.whole.join("\n"));
      for (const line of pending.question.lines) this.#renderer.line(line);
      return false;
    }
    if (letter === "y") {
      this.#finishAsk("allow", "allowed");
      return true;
    }
    if (letter === "a") {
      const prefixes = pending.prefixes;
      if (tool === "bash" && prefixes !== undefined) {
        this.#finishAsk(
          { action: "allow_always", rule: prefixes },
          `allowed: ${sanitizeLine(quoteRules(prefixes))}, for the rest of this session`,
        );
      } else {
        this.#finishAsk(
          "allow_always",
          tool === "bash"
            ? "allowed: this command, for the rest of this session"
            : `allowed: every ${tool} call, for the rest of this session`,
        );
      }
      return true;
    }
    if (letter === "p" && pending.project !== undefined) {
      void this.#approveForProject(pending.project);
      return true;
    }
    if (letter === "n" || key.name === "escape") {
      this.#finishAsk("deny", "denied");
      return true;
    }
    if (key.ctrl && key.name === "c") {
      this.#finishAsk("deny", "denied");
      this.#cancel();
      return true;
    }
    if (letter === "t") {
      // After this key is done with (the editor clears the question first), ask for the reason.
      setImmediate(() => {
        void this.#editor.ask(`  ${this.#style.yellow("tell the model why")} › `).then((why) => {
          const reason = why?.trim() ?? "";
          if (reason === "") this.#finishAsk("deny", "denied");
          else this.#finishAsk({ action: "deny", reason }, `denied: ${reason}`);
        });
      });
      return true;
    }
    return false;
  }

  /** One key answers the plan (exit_plan_mode); returns whether it did. */
  #answerPlan(key: Key): boolean {
    const pending = this.#pendingAsk;
    if (!pending) return true;
    const letter = key.name === "text" ? key.text.toLowerCase() : "";
    if (key.ctrl && key.name === "o") {
      this.#renderer.line(pending.question.whole.join("\n"));
      for (const line of pending.question.lines) this.#renderer.line(line);
      return false;
    }
    if (letter === "a") {
      this.#finishAsk({ action: "approve_plan", mode: "acceptEdits" }, "plan approved: accept edits");
      return true;
    }
    if (letter === "y") {
      this.#finishAsk({ action: "approve_plan", mode: "default" }, "plan approved: edits ask first");
      return true;
    }
    if (letter === "n" || key.name === "escape") {
      this.#finishAsk("deny", "plan rejected: still planning");
      return true;
    }
    if (key.ctrl && key.name === "c") {
      this.#finishAsk("deny", "plan rejected");
      this.#cancel();
      return true;
    }
    if (letter === "t") {
      setImmediate(() => {
        void this.#editor.ask(`  ${this.#style.yellow("what should change")} › `).then((why) => {
          const feedback = why?.trim() ?? "";
          if (feedback === "") this.#finishAsk("deny", "plan rejected: still planning");
          else this.#finishAsk({ action: "deny", reason: feedback }, `plan rejected: ${feedback}`);
        });
      });
      return true;
    }
    return false;
  }

  /**
   * "Always for this project": the rule goes to ~/.yoi/approvals.json for
   * every later session here and into this session's policy now. When it
   * cannot be saved this call is still allowed, and the screen says why
   * the approval will not last.
   */
  async #approveForProject(rules: readonly PermissionRule[]): Promise<void> {
    const shown = rules.map((rule) => formatRuleSpec(rule)).join(", ");
    try {
      const root = await projectRoot(this.#setup.cwd, this.#setup.config.scope.root);
      await approveForProject(this.#setup.homeDir, root, this.#opened.pod.permissions, rules);
      this.#finishAsk(
        "allow",
        `allowed: ${sanitizeLine(shown)}, always in this project (/permissions lists it)`,
      );
    } catch (error) {
      this.#finishAsk(
        "allow",
        `allowed this once; the approval was not saved: ${sanitizeLine(describeError(error).message)}`,
      );
    }
  }

  #finishAsk(decision: PermissionDecision, label: string): void {
    const pending = this.#pendingAsk;
    if (!pending) return;
    this.#pendingAsk = undefined;
    this.#renderer.message("  →", label, this.#style.dim);
    this.#renderer.resume();
    pending.resolve(decision);
  }

  #onInterrupt(): void {
    const s = this.#style;
    if (this.#busy) {
      if (this.#controller?.signal.aborted) {
        // A second Ctrl-C while the cancel is still unwinding: leave now.
        void this.#exit(EXIT.cancelled);
        return;
      }
      this.#cancel();
      this.#cancelling("^C");
      return;
    }
    if (this.#editor.text !== "") {
      this.#editor.text = "";
      this.#lastInterrupt = 0;
      return;
    }
    const now = Date.now();
    if (now - this.#lastInterrupt < DOUBLE_INTERRUPT_MS) {
      void this.#exit(EXIT.ok);
      return;
    }
    this.#lastInterrupt = now;
    this.#renderer.message("", "(press Ctrl-C again to exit, or type /exit)", s.dim);
  }

  /** Esc: cancels the turn in progress (at the idle prompt it does nothing). */
  #onEscape(): void {
    if (!this.#busy || this.#controller?.signal.aborted) return;
    this.#cancel();
    this.#cancelling("esc");
  }

  /**
   * Says that the turn is being cancelled: on a live line while it unwinds,
   * so the answer's open paragraph is not cut in two around a note (what
   * still arrives joins it), or as a note where nothing is drawn live.
   */
  #cancelling(key: string): void {
    if (this.#renderer.animated) this.#renderer.status("cancel", `${key} cancelling…`);
    else this.#renderer.message("", `${key} cancelling…`, this.#style.dim);
  }

  /** Cancels the turn; lines queued behind it come back into the input for editing, not lost. */
  #cancel(): void {
    if (this.#queue.length > 0) {
      const back = [...this.#queue.splice(0), this.#editor.text].filter((l) => l !== "");
      this.#editor.text = back.join("\n");
      this.#renderer.message("▸", `${back.length} queued line(s) put back in the input`, this.#style.dim);
    }
    this.#controller?.abort(new Error("cancelled by the user"));
    this.#opened.pod.cancel("cancelled by the user");
  }

  /**
   * The slash commands. To add one, add a line here; keep its logic in a
   * file of its own (or a method below) so this table stays a table.
   */
  readonly #commands: readonly SlashCommand[] = [
    { name: "/help", summary: "this list", run: () => this.#help() },
    {
      name: "/compact",
      args: "[focus]",
      summary: "summarize the conversation so far to free context (focus: what the summary must keep)",
      run: (arg) => this.#compact(arg),
    },
    {
      name: "/clear",
      summary: "a fresh conversation in a new session (this one is kept: /resume goes back)",
      run: () => this.#clear(),
    },
    { name: "/cost", summary: "this session's tokens and dollars by model", run: () => this.#cost() },
    {
      name: "/status",
      summary: "model, mode, sandbox, MCP servers, context use, versions",
      run: () => this.#status(),
    },
    {
      name: "/init",
      args: "[focus]",
      summary: "ask the model to write AGENTS.md (project instructions read by every session)",
      run: (arg) => this.#init(arg),
    },
    { name: "/sessions", summary: "sessions of this directory", run: () => this.#listSessions() },
    {
      name: "/resume",
      args: "[id]",
      summary: "switch to another session (without an id: pick from a searchable list)",
      run: (arg) => this.#resume(arg),
    },
    {
      name: "/model",
      args: "[ref]",
      summary: "show or switch the model (e.g. /model anthropic/claude-haiku-4-5)",
      run: (arg) => this.#model(arg),
    },
    {
      name: "/rewind",
      args: "[N]",
      summary: "put files and conversation back to before a turn (lists turns; undoes rewinds)",
      run: (arg) => slashRewind(this.#rewindContext(), arg),
    },
    {
      name: "/undo",
      summary: "rewind the last turn (files and conversation)",
      run: () => slashUndo(this.#rewindContext()),
    },
    {
      name: "/export",
      args: "[file]",
      summary: "write this conversation to a Markdown file (default yoi-<session id>.md here)",
      run: (arg) => this.#export(arg),
    },
    {
      name: "/fork",
      args: "[N]",
      summary: "continue in a new session copying this one (before turn N)",
      run: (arg) => this.#fork(arg),
    },
    {
      name: "/mcp",
      summary: "MCP servers, their state and tools",
      run: () => {
        for (const line of fitLines(
          formatMcpStatus(this.#opened.pod.mcp.status(), this.#style, { stderr: true }),
          this.#columns(),
        ))
          this.#renderer.line(line);
      },
    },
    {
      name: "/diff",
      summary:
        "the working tree's changes against HEAD (ctrl+o shows all); /diff session: what this session changed",
      run: (arg) => this.#diff(arg),
    },
    {
      name: "/review",
      args: "[base]",
      summary:
        "a read-only subagent reviews the changes (against HEAD, or base...HEAD plus the working tree)",
      run: (arg) => this.#review(arg),
    },
    {
      name: "/bashes",
      summary: "background commands of this session (/bashes kill <id> stops one)",
      run: (arg) => this.#bashes(arg),
    },
    {
      name: "/permissions",
      summary: "rules and approvals in force and where each comes from (/permissions remove <n>)",
      run: (arg) => this.#permissions(arg),
    },
    {
      name: "/theme",
      args: "[name]",
      summary: "show the colour themes with a preview, or switch to one",
      run: async (arg) => {
        const home = this.#setup.homeDir;
        const from = this.#base.sources.theme;
        const userFile = from !== undefined && path.dirname(from) === path.join(home, ".yoi");
        await themeCommand(arg, {
          style: this.#style,
          background: await this.#background,
          colorDepth: colorDepth(),
          print: (head, body, indent) => this.#renderer.hanging(head, body, indent),
          save: async (name) => displaySource(await saveUserSetting(home, ["theme"], name), home),
          overriddenBy:
            from === undefined || from === DEFAULT_SOURCE || userFile ? undefined : displaySource(from, home),
        });
        // The prompt is painted once, when it is set: paint it anew in the theme.
        this.#editor.prompt = this.#prompt;
      },
    },
    {
      name: "/vim",
      summary: "vim keys at the prompt on or off (editorMode in the config sets the default)",
      run: () => {
        this.#editor.vim = !this.#editor.vim;
        this.#renderer.message(
          "·",
          this.#editor.vim ? "vim keys on (Esc: normal mode, i: insert)" : "vim keys off (emacs keys)",
          this.#style.dim,
        );
      },
    },
    {
      name: "/lsp",
      summary: "language servers whose diagnostics follow each edit, and their state",
      run: () => {
        for (const line of fitLines(
          formatLspStatus(this.#opened.pod.lsp.status(), this.#style),
          this.#columns(),
        ))
          this.#renderer.line(line);
      },
    },
    {
      name: "/exit",
      aliases: ["/quit"],
      summary: "leave (also Ctrl-D, or Ctrl-C twice)",
      run: () => this.#exit(EXIT.ok),
    },
  ];

  /** Every command the `/` menu and Tab offer: the built-in ones, then the session's own. */
  #allCommands(): MenuCommand[] {
    return [...this.#commands, ...extensionMenuCommands(this.#opened.pod)];
  }

  /**
   * A command yoi does not have: the nearest one's name for a typo (`/sesions`), and where
   * another agent's command is found here (`/login`); other errors are left as they are.
   */
  #unknownHint(name: string, message: string): string {
    if (!message.startsWith("unknown command ")) return message;
    const elsewhere = Object.hasOwn(OTHER_AGENTS_COMMANDS, name) ? OTHER_AGENTS_COMMANDS[name] : undefined;
    if (elsewhere !== undefined) return `unknown command ${name}; ${elsewhere}`;
    const names = this.#allCommands().map((c) => c.name);
    for (const c of this.#commands) names.push(...(c.aliases ?? []));
    const near = closest(name, names);
    return near === undefined ? message : `unknown command ${name}; did you mean ${near}? (try /help)`;
  }

  /** Runs a built-in command, or returns what a custom command or an MCP prompt submits. */
  async #slash(text: string): Promise<ExpandedCommand | undefined> {
    const { name, arg } = parseSlash(text);
    const builtin = findSlashCommand(this.#commands, name);
    // A project's or user's own /review (a common custom command) replaces the built-in one.
    const command =
      builtin?.name === "/review" && callsExtensionCommand(this.#opened.pod, text) ? undefined : builtin;
    if (command === undefined) {
      const expanded = await expandSlash(this.#opened.pod, text);
      if (expanded.kind === "submit") return expanded;
      this.#renderer.message("", sanitize(this.#unknownHint(name, expanded.message)), this.#style.yellow);
      return undefined;
    }
    await command.run(arg);
    return undefined;
  }

  async #bashes(arg: string): Promise<void> {
    const s = this.#style;
    const background = this.#opened.pod.background;
    const [verb, id] = arg.split(/\s+/);
    if (arg === "") {
      // One write, so the list and its hint reach the terminal together.
      this.#renderer.line(bashesLines(background.list(), s, process.stdout.columns ?? 80).join("\n"));
      return;
    }
    if (verb !== "kill" || id === undefined) {
      this.#renderer.message("", "usage: /bashes (list them) or /bashes kill <id>", s.yellow);
      return;
    }
    const known = background.get(id);
    if (known === undefined) {
      const ids = background.list().map((b) => b.id);
      this.#renderer.message(
        "",
        `no background command has the id ${sanitizeLine(id)}${ids.length > 0 ? ` (this session's: ${ids.join(", ")})` : ""}`,
        s.yellow,
      );
      return;
    }
    if (known.state !== "running") {
      this.#renderer.message("", `${id} has already ${backgroundStatus(known)}`, s.dim);
      return;
    }
    const info = await background.kill(id, "killed by the user (/bashes)");
    this.#renderer.message("", `${id} stopped · ${backgroundStatus(info)}`, s.dim);
  }

  #help(): void {
    for (const row of [...slashHelp(this.#commands), ...extensionHelpRows(this.#opened.pod, this.#style)])
      this.#renderer.hanging(row.head, row.body, row.indent);
    this.#renderer.hanging(
      "@path + Tab",
      "attach a file (@<server>:<uri>: an MCP resource); Ctrl-C cancels the running turn",
      HELP_COLUMN,
    );
  }

  async #diff(arg: string): Promise<void> {
    const s = this.#style;
    const which = arg.trim();
    if (which !== "" && which !== "session") {
      this.#renderer.message(
        "",
        "usage: /diff (working tree against HEAD) or /diff session (what this session changed)",
        s.yellow,
      );
      return;
    }
    const pod = this.#opened.pod;
    let files: ChangedFile[];
    let title: string;
    try {
      if (which === "session") {
        files = await pod.sessionChanges();
        title = "changes since this session started";
      } else {
        const changes = await pod.gitChanges();
        files = changes.files;
        title = `changes against ${changes.against}`;
        if (changes.moreFiles > 0) title += ` (${changes.moreFiles} more files not shown)`;
      }
    } catch (error) {
      this.#renderer.message(
        "",
        `${sanitize(errorMessage(error))}; /diff session shows what this session changed`,
        s.yellow,
      );
      return;
    }
    if (files.length === 0) {
      this.#renderer.message("", `no ${title}`, s.dim);
      return;
    }
    const rich = await import("../ui/rich-output.ts");
    const lines = changesLines(files, rich, s);
    this.#renderer.message("", `${title}: ${files.length} file${files.length === 1 ? "" : "s"}`, s.dim);
    for (const line of lines.slice(0, DIFF_PAGE_LINES)) this.#renderer.line(line);
    const hidden = lines.length - DIFF_PAGE_LINES;
    if (hidden > 0) this.#renderer.message("", `… ${hidden} more lines (ctrl+o shows them all)`, s.dim);
    this.#renderer.keepForExpand(`/diff ${which}`.trim(), lines.join("\n"));
  }

  async #review(arg: string): Promise<void> {
    const s = this.#style;
    const base = arg.trim() || undefined;
    this.#renderer.message(
      "",
      `reviewing the changes against ${base ? `${base}...HEAD` : "HEAD"}… (Esc cancels)`,
      s.dim,
    );
    try {
      const result = await this.#opened.pod.review({
        ...(base !== undefined ? { base } : {}),
        ...(this.#controller ? { signal: this.#controller.signal } : {}),
      });
      if (result === undefined) {
        this.#renderer.message("", "nothing to review: no changes", s.dim);
        return;
      }
      for (const line of reviewLines(result, s)) this.#renderer.line(line);
    } catch (error) {
      this.#renderer.message("✗", `review: ${describeError(error, this.#opened.provider).message}`, s.red);
    }
  }

  async #compact(focus: string): Promise<void> {
    const s = this.#style;
    this.#renderer.message(
      "",
      focus === "" ? "compacting…" : `compacting, focused on: ${sanitizeLine(focus)}…`,
      s.dim,
    );
    try {
      // The renderer shows the replacement (history_replaced); only "nothing to do" needs saying.
      const replaced = await this.#opened.pod.compact({
        ...(this.#controller ? { signal: this.#controller.signal } : {}),
        ...(focus !== "" ? { focus } : {}),
      });
      if (!replaced) this.#renderer.message("", "nothing to compact yet", s.dim);
    } catch (error) {
      this.#renderer.message(
        "✗",
        `compaction failed: ${describeError(error, this.#opened.provider).message}`,
        s.red,
      );
    } finally {
      this.#endBusy();
    }
  }

  /**
   * `/clear`: a fresh conversation in a new session, on the same model and
   * in the same permission mode. The old session is closed as it is, so it
   * stays in `/sessions` and `/resume` goes back to it.
   */
  async #clear(): Promise<void> {
    const s = this.#style;
    const previous = this.#opened;
    await previous.pod.flush();
    const kept = previous.pod.log !== undefined;
    let opened: OpenedPod;
    try {
      opened = await openPodWith(this.#setup, { ask: this.#ask });
      if (opened.pod.permissions.modeAllowed(previous.pod.permissions.mode))
        opened.pod.permissions.setMode(previous.pod.permissions.mode);
    } catch (error) {
      this.#renderer.message("✗", sanitize(describeError(error).message), s.red);
      return;
    }
    await previous.pod.close().catch(() => {});
    // Output of !cmd runs waiting for the next message belonged to the old conversation.
    this.#shellContext.splice(0);
    this.#attach(opened);
    this.#renderer.newSession();
    this.#renderer.message(
      "·",
      kept
        ? `fresh conversation in a new session (${opened.pod.id.slice(0, 13)}); /resume ${previous.pod.id.slice(0, 13)} goes back to the last one`
        : `fresh conversation in a new session (${opened.pod.id.slice(0, 13)}); the last one had nothing to keep`,
      s.dim,
    );
  }

  /** `/cost`: the session's calls, tokens and dollars by model, from its log (earlier runs and subagents included). */
  async #cost(): Promise<void> {
    const { pod, setup } = this.#opened;
    const ledger = new UsageLedger(() => this.#setup.config);
    try {
      for (const { model, usage } of await pod.usage()) {
        const id = model ?? setup.resolved.model;
        ledger.add(qualifyModelRef(this.#setup.config, id) ?? `${setup.resolved.providerName}/${id}`, usage);
      }
    } catch (error) {
      this.#renderer.message("✗", sanitize(describeError(error).message), this.#style.red);
      return;
    }
    for (const row of costRows(ledger.rows(), ledger.totalUsd(), this.#style))
      this.#renderer.hanging(row.head, row.body, row.indent);
  }

  /** `/status`: where the session stands. */
  #status(): void {
    const { pod, setup } = this.#opened;
    const facts = {
      session:
        pod.history.length === 0 && pod.log === undefined
          ? `${pod.id} (not saved until the first message)`
          : pod.id,
      model: `${setup.resolved.providerName}/${setup.resolved.model}`,
      baseURL: setup.baseURL,
      cwd: pod.fs.cwd,
      mode: pod.permissions.mode,
      sandbox: pod.sandbox,
      mcp: pod.mcp.status(),
      contextTokens: this.#contextTokens,
      window: setup.window,
      versions: { yoi: cliVersion(), node: process.versions.node },
    };
    for (const { name, value } of statusRows(facts)) this.#renderer.hanging(this.#style.dim(name), value, 10);
  }

  /** Asks the model to write AGENTS.md; the pod reads it again before the next turn. */
  async #init(focus: string): Promise<void> {
    const s = this.#style;
    this.#renderer.message("", "asking the model to write AGENTS.md for this project…", s.dim);
    // Slash commands run as the busy turn (see #submit): Esc / Ctrl-C cancel this run too.
    try {
      const result = await this.#opened.pod.run(initPrompt(focus), { signal: this.#controller?.signal });
      this.#renderer.finish(result);
    } catch (error) {
      this.#renderer.message("✗", describeError(error, this.#opened.provider).message, s.red);
    }
  }

  /** `/permissions [remove <n>]`: the list with sources, or one approval or session grant removed. */
  async #permissions(arg: string): Promise<void> {
    const s = this.#style;
    const policy = this.#opened.pod.permissions;
    try {
      const root = await projectRoot(this.#setup.cwd, this.#setup.config.scope.root);
      const entries = await sessionEntries(policy, this.#setup.homeDir, root);
      if (arg !== "") {
        const remove = /^remove\s+(.+)$/.exec(arg);
        if (remove === null) {
          this.#renderer.message(
            "",
            "usage: /permissions lists them; /permissions remove <n> removes one",
            s.yellow,
          );
          return;
        }
        const removed = await removeEntry(entries, remove[1]!.trim(), {
          homeDir: this.#setup.homeDir,
          root,
          policy,
          list: "/permissions",
        });
        this.#renderer.message("·", removed, s.dim);
        return;
      }
      this.#renderer.line(
        `${s.bold("permissions")} ${s.dim(`mode ${policy.mode}, sandbox ${policy.sandbox}`)}`,
      );
      for (const line of formatEntries(entries, s)) this.#renderer.line(line);
      if (entries.some((e) => e.kind !== "rule"))
        this.#renderer.message("", "/permissions remove <n> removes an approval", s.dim);
    } catch (error) {
      this.#renderer.message("✗", sanitize(describeError(error).message), s.red);
    }
  }

  async #listSessions(): Promise<void> {
    const s = this.#style;
    const here = await projectRoot(this.#setup.cwd, this.#setup.config.scope.root);
    const rows = (await listSessions({ dir: this.#setup.dataDir }))
      .filter((r) => r.cwd === here && !r.failedBeforeOutput)
      .slice(0, 20);
    this.#renderer.line(
      rows.length > 0
        ? formatSessionTable(rows, { style: s, width: process.stdout.columns })
        : s.dim("no sessions here yet"),
    );
  }

  async #resume(arg: string): Promise<void> {
    if (arg === "") {
      const chosen = await this.#pickSession();
      if (chosen === undefined) return;
      arg = chosen;
    }
    // The session goes on with its own model and server, as with yoi --resume.
    let setup = this.#setup;
    let target: Awaited<ReturnType<typeof resolveResumeTarget>>;
    try {
      const { model: _model, baseURL: _baseURL, ...flags } = this.#command.flags;
      target = await resolveResumeTarget({ flags, resume: arg }, this.#base);
    } catch (error) {
      this.#renderer.message(
        "✗",
        describeError(error).message.replace("yoi sessions", "/sessions"),
        this.#style.red,
      );
      return;
    }
    const id = target?.id ?? arg;
    try {
      if (target?.flags.model !== undefined)
        setup = await modelSetup(await applySessionFlags(this.#base, target.flags));
    } catch (error) {
      const message = describeError(error).message;
      this.#renderer.message(
        "!",
        `the session's model cannot be used here (${message}); going on with this one`,
        this.#style.yellow,
      );
    }
    await this.#reopen(setup, id);
  }

  /** `/resume` without an id: this directory's other sessions in the picker; the id chosen. */
  async #pickSession(): Promise<string | undefined> {
    const here = await projectRoot(this.#setup.cwd, this.#setup.config.scope.root);
    const sessions = (await listSessions({ dir: this.#setup.dataDir })).filter(
      (s) => s.cwd === here && !s.failedBeforeOutput && s.id !== this.#opened.pod.id,
    );
    if (sessions.length === 0) {
      this.#renderer.message("", "no other sessions here to resume", this.#style.dim);
      return undefined;
    }
    const index = await pickFrom(this.#editor, sessions, this.#style);
    return index === undefined ? undefined : sessions[index]?.id;
  }

  async #model(arg: string): Promise<void> {
    if (arg !== "") {
      await this.#switchModel(arg);
      return;
    }
    const r = this.#setup.resolved;
    const current = `${r.providerName}/${r.model}`;
    const choices = modelChoices(this.#setup.config, current);
    const picked = await this.#editor.pick(
      this.#style.bold("model"),
      choices.map((c) => c.label),
      0,
    );
    const choice = picked === undefined ? undefined : choices[picked];
    if (choice === undefined || choice.ref === current) {
      this.#renderer.message("", `model: ${current} (unchanged)`, this.#style.dim);
      return;
    }
    await this.#switchModel(choice.ref);
  }

  /**
   * `/model <ref>`: the same session goes on with another model. The pod
   * logs the switch (config_change), so the session list and the audit
   * trail show it; history stays as it is. A `--base-url` belongs to the
   * provider it was given for: a switch to another provider leaves it behind.
   */
  async #switchModel(ref: string): Promise<void> {
    const s = this.#style;
    let next: ModelSetup;
    const { baseURL } = this.#command.flags;
    const target = parseModelRef(qualifyModelRef(this.#setup.config, ref) ?? ref)?.provider;
    const keepBaseURL = baseURL !== undefined && target === this.#baseURLProvider;
    const { pod } = this.#opened;
    try {
      // On the config in use: the --base-url stays on the provider it was given for.
      next = await modelSetup(withModel(this.#setup, { ref, source: "/model" }));
      // A model the catalog lacks on a custom server has the window modelSetup assumed (and said so).
      pod.setModel(
        `${next.resolved.providerName}/${next.resolved.model}`,
        next.contextWindow !== undefined ? { contextWindow: next.contextWindow } : {},
      );
    } catch (error) {
      this.#renderer.message("✗", describeError(error).message, s.red);
      return;
    }
    this.#setup = next;
    this.#opened = { ...this.#opened, setup: next, provider: providerContext(next) };
    this.#renderer.window = next.window;
    this.#renderer.provider = this.#opened.provider;
    this.#renderer.pricing = next.resolved.info?.pricing;
    const model = `${next.resolved.providerName}/${next.resolved.model}`;
    this.#renderer.message("·", `now on ${model} (${pod.history.length} items in history kept)`, s.dim);
    if (baseURL !== undefined && !keepBaseURL) {
      this.#note(
        `--base-url ${baseURL} belongs to ${this.#baseURLProvider}; ${next.resolved.providerName} uses its own`,
      );
    }
    for (const note of next.notes) this.#note(note);
    this.#pricingNote(next);
  }

  /** Costs of a model without known prices show as `$?`: say once where its prices are set. */
  #pricingNote(setup: ModelSetup): void {
    if (setup.resolved.info?.pricing === undefined)
      this.#note(
        `cost shows as $?: ${pricingHint(`${setup.resolved.providerName}/${setup.resolved.model}`)}`,
      );
  }

  /** A note shown at most once a session. */
  #note(text: string): void {
    if (this.#notes.has(text)) return;
    this.#notes.add(text);
    this.#renderer.hanging(this.#style.dim("·"), this.#style.dim(sanitize(text)), 2);
  }

  /**
   * `/resume <id>`: opens the other session first and only then closes this
   * one, so a wrong id leaves the session in use as it was (a new session
   * that has no log yet could not be reopened).
   */
  async #reopen(setup: ModelSetup, id: string): Promise<void> {
    const s = this.#style;
    const previous = this.#opened;
    if (id === previous.pod.id) {
      this.#renderer.message("·", `already in session ${id}`, s.dim);
      return;
    }
    let opened: OpenedPod;
    try {
      opened = await openPodWith(setup, { resume: id, ask: this.#ask });
    } catch (error) {
      this.#renderer.message("✗", describeError(error).message.replace("yoi sessions", "/sessions"), s.red);
      return;
    }
    await previous.pod.close().catch(() => {});
    this.#setup = setup;
    this.#attach(opened);
    await this.#richReady;
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    this.#renderer.message(
      "·",
      `session ${opened.pod.id} on ${model} (${opened.pod.history.length} items in history)`,
      s.dim,
    );
    for (const warning of restoreWarnings(opened.pod))
      this.#renderer.message("!", sanitize(warning), s.yellow);
    this.#renderer.transcript(opened.pod.history);
  }

  /** `/export [file]`: the conversation as Markdown, in a new file (an existing one is never replaced). */
  async #export(arg: string): Promise<void> {
    const s = this.#style;
    const { pod, setup } = this.#opened;
    const file = resolveUserPath(arg === "" ? `yoi-${pod.id}.md` : arg, pod.fs.cwd, setup.homeDir);
    const { markdown, turns } = conversationMarkdown(pod.history, {
      sessionId: pod.id,
      model: `${setup.resolved.providerName}/${setup.resolved.model}`,
      cwd: pod.fs.cwd,
      at: new Date(),
    });
    if (turns === 0) {
      this.#renderer.message("", "nothing to export yet: the conversation is empty", s.dim);
      return;
    }
    const shown = path.relative(pod.fs.cwd, file) || file;
    try {
      await writeFile(file, markdown, { flag: "wx" });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === "EEXIST"
          ? `${shown} exists; give /export another name, or remove it first`
          : code === "ENOENT"
            ? `${path.dirname(file)} does not exist`
            : code === "EISDIR"
              ? `${shown} is a directory; give /export a file name`
              : errorMessage(error);
      this.#renderer.message("✗", sanitize(`/export: ${why}`), s.red);
      return;
    }
    this.#renderer.message(
      "",
      sanitize(
        `exported ${turns === 1 ? "1 prompt and its answer" : `${turns} prompts and their answers`} to ${shown}`,
      ),
      s.dim,
    );
  }

  /** `/fork [N]`: continue in a new session copying this one (before turn N); this one stays as it is. */
  async #fork(arg: string): Promise<void> {
    const s = this.#style;
    const turn = arg === "" ? undefined : Number(arg);
    if (turn !== undefined && (!/^\d+$/.test(arg) || turn < 1)) {
      this.#renderer.message(
        "",
        "usage: /fork [turn] (copies the conversation before that turn; default all of it)",
        s.yellow,
      );
      return;
    }
    const previous = this.#opened;
    await previous.pod.flush();
    if (previous.pod.history.length === 0) {
      this.#renderer.message("", "nothing to fork yet: say something first", s.dim);
      return;
    }
    let opened: OpenedPod;
    try {
      opened = await openPodWith(this.#setup, {
        fork: { parent: previous.pod.id, ...(turn !== undefined ? { beforeTurn: turn } : {}) },
        ask: this.#ask,
      });
    } catch (error) {
      this.#renderer.message("✗", describeError(error).message, s.red);
      return;
    }
    await previous.pod.close().catch(() => {});
    this.#attach(opened);
    this.#renderer.message(
      "·",
      `forked ${previous.pod.id} into ${opened.pod.id} (${opened.pod.history.length} items); /resume ${previous.pod.id.slice(0, 13)} goes back`,
      s.dim,
    );
  }

  #rewindContext(): SlashRewindContext {
    return {
      pod: this.#opened.pod,
      style: this.#style,
      line: (text) => this.#renderer.line(text),
      message: (mark, text, paint) => this.#renderer.message(mark, text, paint),
      hanging: (head, body, indent) => this.#renderer.hanging(head, body, indent),
      transcript: (history, turns) => this.#renderer.transcript(history, turns),
      // Asked at the editor, like a permission's reason: Esc or Ctrl-C is no answer.
      question: (prompt) => this.#editor.ask(prompt),
    };
  }

  async #exit(code: number): Promise<void> {
    if (this.#exiting) return;
    this.#exiting = true;
    this.#cancel();
    this.#statusLine?.dispose();
    this.#renderer.dispose();
    try {
      await this.#opened.pod.close();
    } catch {
      // Closing is best effort on the way out.
    }
    this.#restoreConsole?.();
    this.#editor.stop();
    await this.#history.flush();
    restoreTerminal();
    this.#done(code);
  }
}

/**
 * A first run without a key: offers `yoi setup` before anything else, and
 * goes on with the key it saved. Declined or failed, the config is returned
 * as it was and the usual message says what to set.
 */
async function offerSetup(cli: CliConfig, style: Style): Promise<CliConfig> {
  const missing = missingKey(cli);
  if (missing === undefined) return cli;
  const what =
    missing.provider === undefined
      ? "no API key is set up"
      : `no API key for ${missing.provider.name} is set up`;
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  const answer = await new Promise<string>((resolve) => {
    rl.question(
      `${style.yellow("?")} ${what}. Set one up now? ${style.dim("(yoi setup)")} [Y/n] › `,
      resolve,
    );
    rl.once("SIGINT", () => resolve("n"));
    rl.once("close", () => resolve("n"));
  });
  rl.close();
  if (!/^(y(es)?)?$/i.test(answer.trim())) return cli;
  const { runSetup } = await import("./setup.ts");
  if (!(await runSetup(cli, style, missing.provider))) return cli;
  return { ...cli, credentials: await loadCredentials(cli.homeDir) };
}

/** Asks once whether the project's own settings that widen access may apply. */
async function askTrust(settings: ProjectSettings, style: Style): Promise<boolean> {
  const out = process.stdout;
  // The settings are the project's own text: shown, never acted on by the terminal.
  out.write(
    `${style.yellow("?")} ${style.bold(sanitizeLine(settings.files.join(" and ")))} ${settings.files.length > 1 ? "ask" : "asks"} for more than the defaults:\n`,
  );
  for (const line of settings.lines) out.write(`    ${sanitizeLine(line)}\n`);
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(
        `  trust this project's settings? ${style.dim("(remembered until they change)")} [y/N] › `,
        resolve,
      );
      rl.once("SIGINT", () => resolve("n"));
      rl.once("close", () => resolve("n"));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** How a notification names the end of a turn. */
function turnOutcome(status: string): string {
  if (status === "failed") return "turn failed";
  if (status === "completed") return "turn finished";
  return "turn stopped";
}

/** One line naming an attached ref and what it adds: `@src/a.ts (1.2 KB)`. */
function attachedRef(ref: Extract<RefCheck, { ok: true }>): string {
  const name = `@${sanitize(ref.ref)}`;
  if (ref.kind !== "file") return `${name} (${ref.kind === "image" ? "image" : "MCP resource"})`;
  const size = ref.truncated ? `first part of ${formatBytes(ref.size)}` : formatBytes(ref.size);
  return `${name} (${size})`;
}
