/**
 * The interactive session: a prompt on node:readline, the answer streamed
 * above it, tools with spinners, permission questions answered at the
 * prompt, slash commands, Ctrl-C to cancel a turn (twice at an empty prompt
 * to leave). The terminal is restored on every way out.
 */
import * as readline from "node:readline";
import type { PermissionDecision, PermissionPrompt, PermissionRequest } from "@yoi/pod";
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
import { cycleModesOnShiftTab, modeTag } from "../permission-mode-key.ts";
import type { ProjectSettings } from "../project-trust.ts";
import { createModelClient, enforceProjectTrust, type ModelSetup, setupModel } from "../session-setup.ts";
import { chatSessionPlan, resolveResumeTarget } from "../sessions/resume-target.ts";
import { pickSession } from "../sessions/session-picker.ts";
import { type SlashRewindContext, slashRewind, slashUndo } from "../sessions/slash-rewind.ts";
import { transcriptLines } from "../sessions/transcript.ts";
import { colorEnabled, createStyle, type Style } from "../style.ts";
import { complete } from "../ui/completer.ts";
import { MutableOutput } from "../ui/mutable-output.ts";
import { Renderer } from "../ui/renderer.ts";
import { findSlashCommand, parseSlash, type SlashCommand, slashHelp } from "../ui/slash-commands.ts";
import { installTerminalGuard, restoreTerminal } from "../ui/terminal-guard.ts";
import { cliVersion } from "../version.ts";
import { initPrompt } from "./init-prompt.ts";
import { formatSessionTable, projectRoot } from "./sessions.ts";

/** Two Ctrl-C presses at the prompt within this time leave. */
const DOUBLE_INTERRUPT_MS = 2000;

export async function interactiveCommand(command: Extract<Command, { kind: "chat" }>): Promise<number> {
  installTerminalGuard();
  const style = createStyle(colorEnabled(process.stdout));
  const plan = await chatSessionPlan(command, (sessions) => pickSession(sessions, style));
  const setup = await enforceProjectTrust(await setupModel(plan.flags), plan.flags, {
    ask: (settings) => askTrust(settings, style),
    onIgnored: (settings) =>
      process.stdout.write(
        style.yellow(`! not trusted: ${settings.file} settings ignored for this session\n`),
      ),
  });
  const session = new InteractiveSession(setup, command, style, plan.open);
  return session.start();
}

interface PendingAsk {
  request: PermissionRequest;
  resolve: (decision: PermissionDecision) => void;
}

class InteractiveSession {
  #setup: ModelSetup;
  readonly #command: Extract<Command, { kind: "chat" }>;
  readonly #style: Style;
  readonly #output = new MutableOutput(process.stdout);
  readonly #renderer: Renderer;
  #opened!: OpenedPod;
  #unsubscribe: (() => void) | undefined;
  #rl!: readline.Interface;
  #busy = false;
  #controller: AbortController | undefined;
  #pendingAsk: PendingAsk | undefined;
  readonly #queue: string[] = [];
  #lastInterrupt = 0;
  #done!: (code: number) => void;
  #exiting = false;
  #restoreConsole: (() => void) | undefined;
  readonly #open: Pick<OpenPodOptions, "resume" | "fork">;
  /** Set while a slash command waits for an answer typed at the prompt. */
  #pendingLine: ((line: string | undefined) => void) | undefined;

  constructor(
    setup: ModelSetup,
    command: Extract<Command, { kind: "chat" }>,
    style: Style,
    open: Pick<OpenPodOptions, "resume" | "fork"> = {},
  ) {
    this.#open = open;
    this.#setup = setup;
    this.#command = command;
    this.#style = style;
    this.#renderer = new Renderer({
      out: process.stdout,
      style,
      animate: process.stdout.isTTY === true,
      window: setup.window,
      provider: { provider: setup.resolved.providerName },
    });
  }

  get #prompt(): string {
    const mode = this.#opened?.pod.permissions.mode;
    return `${mode === undefined ? "" : modeTag(mode, this.#style)}${this.#style.cyan("› ")}`;
  }

  async start(): Promise<number> {
    const opened = await openPodWith(this.#setup, { ...this.#open, ask: this.#ask });
    this.#attach(opened);
    this.#restoreConsole = captureConsole(
      (line) => this.#renderer.line(this.#style.dim(`· ${line}`)),
      [this.#setup.apiKey],
    );
    this.#banner();
    const exited = new Promise<number>((resolve) => {
      this.#done = resolve;
    });
    this.#rl = readline.createInterface({
      input: process.stdin,
      output: this.#output,
      terminal: true,
      historySize: 1000,
      prompt: this.#prompt,
      completer: (line: string, callback: (error: Error | null, result: [string[], string]) => void) => {
        complete(line, this.#opened.pod.fs, this.#commands).then(
          (result) => callback(null, result),
          () => callback(null, [[], line]),
        );
      },
    });
    this.#rl.on("line", (line) => this.#onLine(line));
    this.#rl.on("SIGINT", () => this.#onInterrupt());
    cycleModesOnShiftTab(
      process.stdin,
      () => this.#opened.pod,
      () => {
        if (this.#pendingAsk !== undefined || this.#busy) return;
        this.#rl.setPrompt(this.#prompt);
        this.#rl.prompt(true);
      },
    );
    this.#rl.on("close", () => void this.#exit(EXIT.ok));
    process.stdout.on("resize", () => this.#renderer.resized());
    if (this.#command.prompt !== undefined) {
      this.#output.write(`${this.#prompt}${this.#command.prompt}\n`);
      void this.#submit(this.#command.prompt);
    } else {
      this.#rl.prompt();
    }
    return exited;
  }

  #attach(opened: OpenedPod): void {
    this.#unsubscribe?.();
    this.#opened = opened;
    this.#renderer.window = opened.setup.window;
    this.#renderer.provider = opened.provider;
    this.#unsubscribe = opened.pod.subscribe((event) => this.#renderer.handle(event));
  }

  #banner(): void {
    const s = this.#style;
    const { pod, setup, restored } = this.#opened;
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    this.#renderer.line(`${s.bold("yoi")} ${s.dim(cliVersion())} · ${s.cyan(model)} · ${pod.fs.cwd}`);
    for (const note of setup.notes) this.#renderer.line(s.dim(`· ${note}`));
    if (pod.sandbox.notice !== undefined) this.#renderer.line(s.yellow(`· ${pod.sandbox.notice}`));
    if (restored) {
      const how = this.#open.fork ? `forked from ${this.#open.fork.parent} as` : "resumed";
      this.#renderer.line(s.dim(`· ${how} session ${pod.id} (${pod.history.length} items in history)`));
      for (const warning of restoreWarnings(pod)) this.#renderer.line(s.yellow(`! ${warning}`));
      for (const line of transcriptLines(pod.history, s)) this.#renderer.line(line);
    }
    this.#renderer.line(
      s.dim("/help for commands · @path + Tab attaches a file · Ctrl-C cancels · Ctrl-C twice exits"),
    );
  }

  #onLine(line: string): void {
    if (this.#pendingLine) {
      const answer = this.#pendingLine;
      this.#pendingLine = undefined;
      answer(line);
      return;
    }
    if (this.#pendingAsk) {
      this.#answer(line);
      return;
    }
    if (this.#busy) {
      if (line.trim() !== "") {
        this.#queue.push(line);
        this.#renderer.line(this.#style.dim(`▸ queued: ${line}`));
      }
      return;
    }
    void this.#submit(line);
  }

  async #submit(line: string): Promise<void> {
    const text = line.trim();
    if (text === "") {
      this.#rl.prompt();
      return;
    }
    if (text.startsWith("/")) {
      await this.#slash(text);
      if (!this.#exiting) this.#next();
      return;
    }
    const problems = await checkFileRefs(this.#setup, line);
    if (problems.length > 0) {
      for (const p of problems) this.#renderer.line(this.#style.red(`✗ ${p}`));
      this.#renderer.line(this.#style.dim("nothing was sent; edit the line and press Enter"));
      this.#rl.prompt();
      this.#rl.write(line);
      return;
    }
    this.#beginBusy();
    try {
      const result = await this.#opened.pod.run(line, { signal: this.#controller?.signal });
      this.#renderer.finish(result);
    } catch (error) {
      this.#renderer.line(this.#style.red(`✗ ${describeError(error, this.#opened.provider).message}`));
    } finally {
      this.#endBusy();
    }
    this.#next();
  }

  #next(): void {
    if (this.#exiting) return;
    const queued = this.#queue.shift();
    if (queued !== undefined) {
      this.#output.write(`${this.#prompt}${queued}\n`);
      void this.#submit(queued);
      return;
    }
    this.#rl.setPrompt(this.#prompt);
    this.#rl.prompt(true);
  }

  #beginBusy(): void {
    this.#busy = true;
    this.#controller = new AbortController();
    this.#output.muted = true;
  }

  #endBusy(): void {
    this.#busy = false;
    this.#controller = undefined;
    this.#output.muted = false;
  }

  readonly #ask: PermissionPrompt = (request) =>
    new Promise<PermissionDecision>((resolve) => {
      if (request.signal.aborted) {
        resolve("deny");
        return;
      }
      this.#pendingAsk = { request, resolve };
      request.signal.addEventListener("abort", () => this.#finishAsk("deny", false), { once: true });
      const s = this.#style;
      this.#renderer.suspend();
      this.#renderer.line(`${s.yellow("?")} ${s.bold("allow")} ${request.summary}`);
      const detail = describeArgs(request);
      if (detail) this.#renderer.line(s.dim(detail));
      if (request.reason) this.#renderer.line(s.dim(`  asking because ${request.reason}`));
      this.#output.muted = false;
      clearLine(this.#rl);
      // Say what "always" grants: bash, this exact command; other tools, the tool (seen in permissions/policy.ts).
      const always = request.tool === "bash" ? "this command" : request.tool;
      this.#rl.setPrompt(`  ${s.yellow(`[y]es / [n]o / [a]lways ${always} this session`)} › `);
      this.#rl.prompt();
    });

  #answer(line: string): void {
    const answer = line.trim().toLowerCase();
    const decision: PermissionDecision | undefined =
      answer === "y" || answer === "yes"
        ? "allow"
        : answer === "n" || answer === "no"
          ? "deny"
          : answer === "a" || answer === "always"
            ? "allow_always"
            : undefined;
    if (decision === undefined) {
      this.#rl.prompt();
      return;
    }
    this.#finishAsk(decision, true);
  }

  #finishAsk(decision: PermissionDecision, shown: boolean): void {
    const pending = this.#pendingAsk;
    if (!pending) return;
    this.#pendingAsk = undefined;
    if (!shown) this.#output.write("\n");
    this.#rl.setPrompt(this.#prompt);
    this.#output.muted = this.#busy;
    const { tool } = pending.request;
    const label =
      decision === "allow"
        ? "allowed"
        : decision === "allow_always"
          ? tool === "bash"
            ? "allowed: this command, for the rest of this session"
            : `allowed: every ${tool} call, for the rest of this session`
          : "denied";
    this.#renderer.line(this.#style.dim(`  → ${label}`));
    this.#renderer.resume();
    pending.resolve(decision);
  }

  #onInterrupt(): void {
    const s = this.#style;
    if (this.#pendingLine) {
      this.#output.write("^C\n");
      this.#onLine("");
      return;
    }
    if (this.#pendingAsk) {
      this.#finishAsk("deny", false);
      this.#cancel();
      return;
    }
    if (this.#busy) {
      if (this.#controller?.signal.aborted) {
        // A second Ctrl-C while the cancel is still unwinding: leave now.
        void this.#exit(EXIT.cancelled);
        return;
      }
      this.#cancel();
      this.#renderer.line(s.dim("^C cancelling…"));
      return;
    }
    if (this.#rl.line !== "") {
      this.#output.write("^C\n");
      clearLine(this.#rl);
      this.#lastInterrupt = 0;
      this.#rl.prompt();
      return;
    }
    const now = Date.now();
    if (now - this.#lastInterrupt < DOUBLE_INTERRUPT_MS) {
      this.#output.write("\n");
      void this.#exit(EXIT.ok);
      return;
    }
    this.#lastInterrupt = now;
    this.#output.write("\n");
    this.#renderer.line(s.dim("(press Ctrl-C again to exit, or type /exit)"));
    this.#rl.prompt();
  }

  #cancel(): void {
    this.#queue.length = 0;
    this.#controller?.abort(new Error("cancelled by the user (Ctrl-C)"));
    this.#opened.pod.cancel("cancelled by the user (Ctrl-C)");
  }

  /**
   * The slash commands. To add one, add a line here; keep its logic in a
   * file of its own (or a method below) so this table stays a table.
   */
  readonly #commands: readonly SlashCommand[] = [
    { name: "/help", summary: "this list", run: () => this.#help() },
    {
      name: "/compact",
      summary: "summarize the conversation so far to free context",
      run: () => this.#compact(),
    },
    {
      name: "/init",
      args: "[focus]",
      summary: "ask the model to write AGENTS.md (project instructions read by every session)",
      run: (arg) => this.#init(arg),
    },
    { name: "/sessions", summary: "sessions of this directory", run: () => this.#listSessions() },
    { name: "/resume", args: "<id>", summary: "switch to another session", run: (arg) => this.#resume(arg) },
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
      name: "/fork",
      args: "[N]",
      summary: "continue in a new session copying this one (before turn N)",
      run: (arg) => this.#fork(arg),
    },
    {
      name: "/exit",
      aliases: ["/quit"],
      summary: "leave (also Ctrl-D, or Ctrl-C twice)",
      run: () => this.#exit(EXIT.ok),
    },
  ];

  async #slash(text: string): Promise<void> {
    const { name, arg } = parseSlash(text);
    const command = findSlashCommand(this.#commands, name);
    if (command === undefined) {
      this.#renderer.line(this.#style.yellow(`unknown command ${name} (try /help)`));
      return;
    }
    await command.run(arg);
  }

  #help(): void {
    for (const line of slashHelp(this.#commands)) this.#renderer.line(line);
    this.#renderer.line("@path + Tab        attach a file; Ctrl-C cancels the running turn");
  }

  async #compact(): Promise<void> {
    const s = this.#style;
    this.#beginBusy();
    this.#renderer.line(s.dim("compacting…"));
    try {
      // The renderer shows the replacement (history_replaced); only "nothing to do" needs saying.
      const replaced = await this.#opened.pod.compact({ signal: this.#controller?.signal });
      if (!replaced) this.#renderer.line(s.dim("nothing to compact yet"));
    } catch (error) {
      this.#renderer.line(
        s.red(`✗ compaction failed: ${describeError(error, this.#opened.provider).message}`),
      );
    } finally {
      this.#endBusy();
    }
  }

  /** Asks the model to write AGENTS.md; the pod reads it again before the next turn. */
  async #init(focus: string): Promise<void> {
    const s = this.#style;
    this.#renderer.line(s.dim("asking the model to write AGENTS.md for this project…"));
    this.#beginBusy();
    try {
      const result = await this.#opened.pod.run(initPrompt(focus), { signal: this.#controller?.signal });
      this.#renderer.finish(result);
    } catch (error) {
      this.#renderer.line(s.red(`✗ ${describeError(error, this.#opened.provider).message}`));
    } finally {
      this.#endBusy();
    }
  }

  async #listSessions(): Promise<void> {
    const s = this.#style;
    const here = await projectRoot(this.#setup.cwd, this.#setup.config.scope.root);
    const rows = (await listSessions({ dir: this.#setup.dataDir }))
      .filter((r) => r.cwd === here && !r.failedBeforeOutput)
      .slice(0, 20);
    this.#renderer.line(
      rows.length > 0 ? formatSessionTable(rows, { style: s }) : s.dim("no sessions here yet"),
    );
  }

  async #resume(arg: string): Promise<void> {
    if (arg === "") {
      this.#renderer.line(this.#style.dim("usage: /resume <session id> (see /sessions)"));
      return;
    }
    // The session goes on with its own model and server, as with yoi --resume.
    let setup = this.#setup;
    let target: Awaited<ReturnType<typeof resolveResumeTarget>>;
    try {
      const { model: _model, baseURL: _baseURL, ...flags } = this.#command.flags;
      target = await resolveResumeTarget({ flags, resume: arg });
    } catch (error) {
      this.#renderer.line(
        this.#style.red(`✗ ${describeError(error).message.replace("yoi sessions", "/sessions")}`),
      );
      return;
    }
    const id = target?.id ?? arg;
    try {
      if (target?.flags.model !== undefined) setup = await setupModel(target.flags);
    } catch (error) {
      const message = describeError(error).message;
      this.#renderer.line(
        this.#style.yellow(`! the session's model cannot be used here (${message}); going on with this one`),
      );
    }
    await this.#reopen(setup, id);
  }

  async #model(arg: string): Promise<void> {
    const s = this.#style;
    if (arg === "") {
      const r = this.#setup.resolved;
      this.#renderer.line(
        `model: ${s.cyan(`${r.providerName}/${r.model}`)} ${s.dim("(/model <provider>/<model> switches, keeping the conversation)")}`,
      );
      return;
    }
    await this.#switchModel(arg);
  }

  /**
   * `/model <ref>`: the same session goes on with another model. The pod
   * logs the switch (config_change), so the session list and the audit
   * trail show it; history stays as it is.
   */
  async #switchModel(ref: string): Promise<void> {
    const s = this.#style;
    let next: ModelSetup;
    try {
      next = await setupModel({ ...this.#command.flags, model: ref });
    } catch (error) {
      this.#renderer.line(s.red(`✗ ${describeError(error).message}`));
      return;
    }
    const { pod } = this.#opened;
    const client = createModelClient(next, (warning) => pod.worker.handleClientWarning(warning));
    try {
      pod.setModel(client);
    } catch (error) {
      this.#renderer.line(s.red(`✗ ${describeError(error).message}`));
      return;
    }
    this.#setup = next;
    this.#opened = { ...this.#opened, setup: next, client, provider: providerContext(next) };
    this.#renderer.window = next.window;
    this.#renderer.provider = this.#opened.provider;
    const model = `${next.resolved.providerName}/${next.resolved.model}`;
    this.#renderer.line(s.dim(`· now on ${model} (${pod.history.length} items in history kept)`));
    for (const note of next.notes) this.#renderer.line(s.dim(`· ${note}`));
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
      this.#renderer.line(s.dim(`· already in session ${id}`));
      return;
    }
    let opened: OpenedPod;
    try {
      opened = await openPodWith(setup, { resume: id, ask: this.#ask });
    } catch (error) {
      this.#renderer.line(s.red(`✗ ${describeError(error).message.replace("yoi sessions", "/sessions")}`));
      return;
    }
    await previous.pod.close().catch(() => {});
    this.#setup = setup;
    this.#attach(opened);
    const model = `${setup.resolved.providerName}/${setup.resolved.model}`;
    this.#renderer.line(
      s.dim(`· session ${opened.pod.id} on ${model} (${opened.pod.history.length} items in history)`),
    );
    for (const warning of restoreWarnings(opened.pod)) this.#renderer.line(s.yellow(`! ${warning}`));
    for (const line of transcriptLines(opened.pod.history, s)) this.#renderer.line(line);
  }

  #rewindContext(): SlashRewindContext {
    return {
      pod: this.#opened.pod,
      style: this.#style,
      line: (text) => this.#renderer.line(text),
      question: (prompt) =>
        new Promise<string | undefined>((resolve) => {
          this.#pendingLine = resolve;
          this.#rl.setPrompt(prompt);
          this.#rl.prompt();
        }).finally(() => this.#rl.setPrompt(this.#prompt)),
    };
  }

  /** `/fork [N]`: continue in a new session copying this one (before turn N); this one stays as it is. */
  async #fork(arg: string): Promise<void> {
    const s = this.#style;
    const turn = arg === "" ? undefined : Number(arg);
    if (turn !== undefined && (!/^\d+$/.test(arg) || turn < 1)) {
      this.#renderer.line(
        s.yellow("usage: /fork [turn] (copies the conversation before that turn; default all of it)"),
      );
      return;
    }
    const previous = this.#opened;
    await previous.pod.flush();
    if (previous.pod.history.length === 0) {
      this.#renderer.line(s.dim("nothing to fork yet: say something first"));
      return;
    }
    let opened: OpenedPod;
    try {
      opened = await openPodWith(this.#setup, {
        fork: { parent: previous.pod.id, ...(turn !== undefined ? { beforeTurn: turn } : {}) },
        ask: this.#ask,
      });
    } catch (error) {
      this.#renderer.line(s.red(`✗ ${describeError(error).message}`));
      return;
    }
    await previous.pod.close().catch(() => {});
    this.#attach(opened);
    this.#renderer.line(
      s.dim(
        `· forked ${previous.pod.id} into ${opened.pod.id} (${opened.pod.history.length} items); /resume ${previous.pod.id.slice(0, 13)} goes back`,
      ),
    );
  }

  async #exit(code: number): Promise<void> {
    if (this.#exiting) return;
    this.#exiting = true;
    this.#cancel();
    this.#renderer.dispose();
    try {
      await this.#opened.pod.close();
    } catch {
      // Closing is best effort on the way out.
    }
    this.#restoreConsole?.();
    this.#rl.close();
    restoreTerminal();
    this.#done(code);
  }
}

function clearLine(rl: readline.Interface): void {
  rl.write(null, { ctrl: true, name: "e" });
  rl.write(null, { ctrl: true, name: "u" });
}

/** A few lines of what a call will do (the command, the edit), for the question. */
function describeArgs(request: PermissionRequest): string | undefined {
  const args = request.args as Record<string, unknown> | undefined;
  if (!args || typeof args !== "object") return undefined;
  if (request.tool === "bash" && typeof args.command === "string" && args.command.includes("\n")) {
    return args.command
      .split("\n")
      .slice(0, 6)
      .map((l) => `    ${l}`)
      .join("\n");
  }
  if (
    request.tool === "edit_file" &&
    typeof args.old_string === "string" &&
    typeof args.new_string === "string"
  ) {
    const cut = (t: string) => (t.length > 200 ? `${t.slice(0, 197)}...` : t);
    return `    - ${cut(args.old_string).split("\n").join("\n    - ")}\n    + ${cut(args.new_string).split("\n").join("\n    + ")}`;
  }
  if (request.tool === "write_file" && typeof args.content === "string") {
    const lines = args.content === "" ? 0 : args.content.replace(/\n$/, "").split("\n").length;
    return `    ${lines} ${lines === 1 ? "line" : "lines"}, ${Buffer.byteLength(args.content)} bytes`;
  }
  return undefined;
}

/** Asks once whether the project's own settings that widen access may apply. */
async function askTrust(settings: ProjectSettings, style: Style): Promise<boolean> {
  const out = process.stdout;
  out.write(`${style.yellow("?")} ${style.bold(settings.file)} asks for more than the defaults:\n`);
  for (const line of settings.lines) out.write(`    ${line}\n`);
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
