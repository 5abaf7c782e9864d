/**
 * The Pod: one hosted agent session. `Pod.create` and `Pod.restore` open
 * what the session stands on and wire its parts (assembly/); the Pod runs
 * them: run, resume, cancel, compact, rewind, setModel, subscribe, close.
 * Input is text with `@path` refs (docs/design/file-refs.md): refs are read
 * before the run and handed to the worker with the prompt (input/), so
 * history reads `[user message, [File: a], [File: b], ...]`.
 */
import type { Item, LlmClient, Usage } from "@yoi/llm-client";
import { userMessage } from "@yoi/llm-client";
import type { HistoryReplacement, RunResult, Worker } from "@yoi/llm-worker";
import { sumUsage } from "@yoi/llm-worker";
import {
  checkSessionId,
  type SessionRecordInput,
  type SessionWriter,
  titleFromInput,
} from "@yoi/worker-persistence";
import { v7 as uuidv7 } from "uuid";
import { assembleSession, type SessionParts, type SessionSource } from "./assembly/assemble-session.ts";
import { openSessionBase } from "./assembly/session-base.ts";
import { type CheckpointInfo, listCheckpoints } from "./checkpoints/checkpoint-list.ts";
import { type RewindOptions, type RewindResult, rewind } from "./checkpoints/rewind.ts";
import type { EnvironmentSnapshot } from "./environment/session-environment.ts";
import type { AlertBus } from "./events/alerts.ts";
import type { PodEventListener } from "./events/pod-events.ts";
import type { Extensions } from "./extensions/load-extensions.ts";
import type { PodFsView } from "./fs/fs-view.ts";
import type { ReadTracker } from "./fs/read-tracker.ts";
import type { ScopedFs } from "./fs/scoped-fs.ts";
import { ImageError, inspectImage } from "./images/image-file.ts";
import { fitImage, imageLabel } from "./images/load-image.ts";
import { abortable } from "./input/abortable.ts";
import { flattenSegments, parseSegments, type Segment } from "./input/segments.ts";
import type { LspManager } from "./lsp/lsp-manager.ts";
import type { McpManager } from "./mcp/mcp-manager.ts";
import type { ModelTarget } from "./model/session-model.ts";
import type { PermissionPolicy } from "./permissions/policy.ts";
import type { PodOptions } from "./pod-options.ts";
import { type ChangedFile, type GitChanges, gitChanges } from "./review/git-changes.ts";
import { type ReviewResult, runReview } from "./review/review.ts";
import { sessionChanges } from "./review/session-changes.ts";
import type { PodSandbox } from "./sandbox/pod-sandbox.ts";
import { unrecordedResult } from "./session/session-log.ts";
import { configSnapshot, inputRecord } from "./session/session-records.ts";
import type { BackgroundShells } from "./tools/background-shells.ts";
import type { TodoList } from "./tools/todo-list.ts";

export type { PodOptions } from "./pod-options.ts";

export interface PodRunOptions {
  signal?: AbortSignal;
  /** Tools (names or globs) approved without asking during this run (a custom command's `allowed-tools`). */
  allowTools?: readonly string[];
  /** Who sent the input (a user name of the host's), kept in the session log's `user_input` record. */
  author?: string;
  /**
   * Images handed over with the prompt (pasted into an editor: `yoi acp`),
   * each checked like an `@pic.png` (downscaled when too large) and sent as a user message of its
   * own after the prompt, labelled `[Image: <label>]`. Rejects with an
   * `ImageError` before anything is logged when the model cannot take
   * images or an image is corrupt or too large.
   */
  images?: readonly { data: Uint8Array; label: string }[];
}

export class Pod {
  /** The session id (the log's). */
  readonly id: string;
  readonly fs: ScopedFs;
  readonly view: PodFsView;
  readonly alerts: AlertBus;
  readonly worker: Worker;
  readonly permissions: PermissionPolicy;
  readonly reads: ReadTracker;
  /** The MCP servers of `config.mcpServers`. */
  readonly mcp: McpManager;
  /** The language servers whose diagnostics follow write_file and edit_file (config `lsp`). */
  readonly lsp: LspManager;
  /** Custom commands, skills and the files that could not be loaded (empty unless `extensions` was given). */
  readonly extensions: Extensions;
  /** The session's todo list (`todo_write`); restored from history, re-attached after compaction. */
  readonly todos: TodoList;
  /** Background bash commands (`run_in_background`): listed and killed by UIs (`/bashes`), all killed by `close`. */
  readonly background: BackgroundShells;
  readonly #s: SessionParts;
  /** Context of the SessionStart hooks, handed over with the first input. */
  #sessionStart: Promise<Item[]> | undefined;
  #closed = false;
  /** Takes the run's listener off the signal its caller passed (see #start). */
  #unlinkSignal: (() => void) | undefined;

  /**
   * How bash is confined: `active`, `unavailable` (every bash call asks),
   * `disabled` (the user opted out). Where the pod opened on a bwrap found on
   * PATH but not yet probed, this is the expected `active` until the probe
   * ran (`settleSandbox`); nothing runs in the sandbox before that.
   */
  get sandbox(): PodSandbox {
    return this.#s.sandbox.current;
  }

  /**
   * The sandbox as the machine answers, running the probe if it has not run
   * (the pod runs it itself before the first tool call, or once the first
   * answer is arriving). A UI that shows the sandbox at start calls this
   * when it is idle; a `sandbox` alert says when bash turned out to have none.
   */
  settleSandbox(): Promise<PodSandbox> {
    return this.#s.sandbox.settle();
  }

  private constructor(parts: SessionParts) {
    this.#s = parts;
    this.id = parts.id;
    this.fs = parts.fs;
    this.view = parts.view;
    this.alerts = parts.alerts;
    this.worker = parts.worker;
    this.permissions = parts.permissions;
    this.reads = parts.reads;
    this.mcp = parts.mcp;
    this.lsp = parts.lsp;
    this.extensions = parts.extensions;
    this.todos = parts.todos;
    this.background = parts.background;
    this.#sessionStart = parts.sessionStart;
  }

  /**
   * Starts a new session. Its log is created on the first input, so a
   * session nobody typed into leaves no file behind.
   */
  static async create(options: PodOptions = {}): Promise<Pod> {
    const base = await openSessionBase(options);
    const id = checkSessionId(options.sessionId ?? uuidv7());
    const source: SessionSource = {
      id,
      history: [],
      turn: 0,
      create: (meta) =>
        base.sessions.create({
          id,
          cwd: base.fs.cwd,
          ...meta,
          ...options.sessionStart,
          config: configSnapshot(base.config),
        }),
    };
    return new Pod(assembleSession(base, source, options));
  }

  /** Reopens a session from its log: history rebuilt, new records appended to the same log. */
  static async restore(sessionId: string, options: PodOptions = {}): Promise<Pod> {
    const base = await openSessionBase(options);
    const opened = await base.sessions.open(sessionId);
    let pod: Pod;
    try {
      const source: SessionSource = {
        id: opened.log.id,
        history: opened.history,
        turn: opened.meta.userTurns,
        writer: opened.log,
      };
      pod = new Pod(assembleSession(base, source, options));
    } catch (error) {
      await opened.log.close().catch(() => {});
      throw error;
    }
    for (const warning of opened.warnings)
      pod.alerts.warn("session_log", `line ${warning.line}: ${warning.message}`);
    return pod;
  }

  /** The session log, once the session has one (after the first input, or from the start when restored). */
  get log(): SessionWriter | undefined {
    return this.#s.log.writer;
  }

  /**
   * The model client. It stays the same object across `setModel`; its
   * `provider` and `model` say where the next call goes.
   */
  get client(): LlmClient {
    return this.#s.model.client;
  }

  /** The worker's history (read-only view). */
  get history(): readonly Item[] {
    return this.worker.history;
  }

  get running(): boolean {
    return this.worker.running;
  }

  /**
   * The environment the system prompt carries (date, OS, shell, scope root,
   * git branch, status and recent commits): the read in progress, or the
   * last one, or a first read when no run has read it yet (a UI's header).
   * Undefined when `PodOptions.environment` is `false`.
   */
  async environment(): Promise<EnvironmentSnapshot | undefined> {
    return this.#s.environment?.latest();
  }

  /**
   * Switches the model for the rest of the session: history, tools and the
   * log stay; the switch is logged as `config_change` (so the audit trail
   * and `listSessions` show it). `target` is a model ref resolved through the
   * config (`"anthropic/claude-haiku-4-5"`, key from the provider's
   * `apiKeyEnv`) or a ready client. `contextWindow` is the new model's
   * window where the catalog (and the config's `models`) lacks it, as the
   * `contextWindow` option of the pod is for the first model; without it
   * the catalog's window applies, and a model it does not know is refused
   * at the next request. Throws while a run is in progress, and for a ref
   * the config cannot resolve or a window that is not a positive integer
   * (nothing changes then).
   */
  setModel(target: ModelTarget, options: { contextWindow?: number } = {}): void {
    this.#assertIdle("setModel");
    // Each step that can refuse comes before the switch: a bad ref or window changes nothing.
    const client = typeof target === "string" ? this.#s.model.clientFor(target) : target;
    this.#s.policy.setContextWindow(options.contextWindow);
    const { previous, next } = this.#s.model.switchTo(client);
    const { log } = this.#s;
    if (!log.started) return; // no log yet: session_start will name the model
    const changes: Record<string, unknown> = {
      model: next,
      previous,
      ...(typeof target === "string" ? { ref: target } : {}),
    };
    const model = this.#s.model.client.model;
    log.append((w) => w.configChange(changes, model));
  }

  /** Subscribes to pod events (worker events, alerts, permission traffic); returns the unsubscribe function. */
  subscribe(listener: PodEventListener): () => void {
    return this.#s.events.subscribe(listener);
  }

  /**
   * Submits input: a string is parsed for `@path` refs (or pass segments).
   * Refs are read now; each one that cannot be read raises a warn Alert and
   * leaves only its placeholder in the user message. Resolves with the
   * run's result once everything is in the session log.
   */
  async run(input: string | readonly Segment[], options: PodRunOptions = {}): Promise<RunResult> {
    this.#assertIdle("run");
    const failed = this.#s.log.failure;
    if (failed !== undefined) return unrecordedResult(undefined, failed);
    const segments = typeof input === "string" ? parseSegments(input) : [...input];
    const text = flattenSegments(segments);
    if (text.trim() === "") throw new Error("Pod.run: the input is empty; type a message or an @path");
    const images = options.images?.length ? await this.#attachedImages(options.images) : [];
    const { log, runs, input: submit, mcp } = this.#s;
    // A checkpoint opens each turn: a rewind goes back to just before it.
    const turn = ++runs.turn;
    const label = titleFromInput(text);
    log.append((w) =>
      w.append({ type: "checkpoint", kind: "turn", turn, ...(label !== undefined ? { label } : {}) }),
    );
    // The item record holds the message itself: this record keeps a preview and the refs, so the log stores a prompt once.
    log.append((w) =>
      w.userInput(
        ...inputRecord(typeof input === "string" ? input : text, segments),
        undefined,
        options.author,
      ),
    );
    const controller = this.#start(options.signal);
    const approved = options.allowTools?.length ? this.permissions.preApprove(options.allowTools) : undefined;
    // Instruction files and git are read while the refs are: both only need to be ready for the request.
    const prompt = this.#refreshPrompt();
    prompt.catch(() => {}); // awaited below; a failure before then must not be an unhandled rejection
    // The provider's SDK loads while those reads (and git) are waited for, not after them.
    void this.#s.model.client.prepare();
    let result: RunResult;
    try {
      const started = this.#sessionStart;
      this.#sessionStart = undefined;
      if (started !== undefined) submit.add((await abortable(started, controller.signal)) ?? []);
      submit.add(images);
      if (mcp.configured) await abortable(mcp.ready(this.#s.mcpWaitMs), controller.signal);
      await submit.resolveRefs(segments, controller.signal);
      await prompt;
      result = this.#withChildUsage(
        await this.worker.run(userMessage(text), { signal: controller.signal, agent: this.#agent() }),
      );
    } finally {
      approved?.();
      submit.clear();
      this.#stop();
      await this.flush();
    }
    return this.#recorded(result);
  }

  async #attachedImages(images: NonNullable<PodRunOptions["images"]>): Promise<Item[]> {
    const refusal = this.#s.model.imageRefusal();
    if (refusal !== undefined) throw new ImageError("unsupported", refusal);
    const items: Item[] = [];
    for (const { data, label } of images) {
      const bytes = Buffer.from(data);
      const image = await fitImage(bytes, await inspectImage(bytes, label), label);
      items.push({
        type: "message",
        role: "user",
        content: [
          { type: "text", text: imageLabel(label, image) },
          { type: "image", mediaType: image.mediaType, data: image.data },
        ],
      });
    }
    return items;
  }

  /**
   * The working tree's changes under the scope root against HEAD, or, with
   * `base`, since the merge base with it (`base...HEAD` plus what is not
   * committed). Throws GitChangesError outside a repository or for a base
   * git does not know.
   */
  gitChanges(base?: string): Promise<GitChanges> {
    return gitChanges(this.fs.cwd, { ...(base !== undefined ? { base } : {}), env: this.#s.commandEnv });
  }

  /** The files this session's tools changed: as they were before its first change to each, and now. */
  async sessionChanges(): Promise<ChangedFile[]> {
    if (this.#s.log.writer === undefined) return [];
    return sessionChanges(await this.#records(), this.fs, this.#s.blobStore);
  }

  /**
   * Reviews the changes ({@link gitChanges}) with a read-only subagent and
   * returns its findings; undefined when there is nothing to review. Runs
   * like a turn: `cancel()` stops it, and it throws while a run is in progress.
   */
  async review(options: { base?: string; signal?: AbortSignal } = {}): Promise<ReviewResult | undefined> {
    this.#assertIdle("review");
    const changes = await this.gitChanges(options.base);
    if (changes.files.length === 0) return undefined;
    const controller = this.#start(options.signal);
    try {
      const result = await runReview(changes, this.#s.subagents, this.#s.subagentTools(), controller.signal);
      return { ...result, usage: this.#s.runs.childUsage };
    } finally {
      this.#stop();
      await this.flush();
    }
  }

  /** Continues without new input (pending tool calls, a failed or paused run). */
  async resume(options: PodRunOptions = {}): Promise<RunResult> {
    this.#assertIdle("resume");
    const failed = this.#s.log.failure;
    if (failed !== undefined) return unrecordedResult(undefined, failed);
    const controller = this.#start(options.signal);
    let result: RunResult;
    try {
      await this.#refreshPrompt();
      result = this.#withChildUsage(
        await this.worker.resume({ signal: controller.signal, agent: this.#agent() }),
      );
    } finally {
      this.#stop();
      await this.flush();
    }
    return this.#recorded(result);
  }

  /** Who runs, for the run's `invoke_agent` span: yoi's main agent, in this session. */
  #agent(): { name: string; conversationId: string } {
    return { name: "yoi", conversationId: this.id };
  }

  /** Reads the instruction files and the environment again, together, for the run about to start. */
  async #refreshPrompt(): Promise<void> {
    await Promise.all([this.#s.instructions?.refresh(), this.#s.environment?.refresh()]);
  }

  /** A run's result, or a storage failure when the session log could not record it. */
  #recorded(result: RunResult): RunResult {
    const failed = this.#s.log.failure;
    return failed === undefined ? result : unrecordedResult(result, failed);
  }

  /** Cancels the run in progress (tools are aborted, bash process groups killed). No-op when idle. */
  cancel(reason = "cancelled by the user"): void {
    this.#s.runs.controller?.abort(new Error(reason));
  }

  /**
   * Compacts now (a user's `/compact`), re-attaching recently read files;
   * `focus` (`/compact keep the config details`) goes to the summary prompt.
   * Resolves with the replacement, or undefined when there was nothing to fold.
   */
  async compact(options: PodRunOptions & { focus?: string } = {}): Promise<HistoryReplacement | undefined> {
    this.#assertIdle("compact");
    const replacement = await this.#s.policy.compactNow(
      {
        history: this.worker.history,
        lastUsage: this.#s.runs.lastUsage,
        client: this.#s.model.client,
        blobStore: this.#s.blobStore,
        signal: options.signal ?? new AbortController().signal,
      },
      options.focus === undefined ? {} : { focus: options.focus },
    );
    if (replacement !== undefined)
      this.worker.replaceHistory(replacement.history, replacement.reason, replacement.detail);
    await this.flush();
    return replacement;
  }

  /** The session's checkpoints (each turn, each rewind), oldest first; empty before the first input. */
  async checkpoints(): Promise<CheckpointInfo[]> {
    return listCheckpoints(await this.#records());
  }

  /**
   * Puts files and/or the conversation back to a checkpoint (default: before
   * the last turn). The rewind is itself logged and can be undone. Rejects
   * with `RewindError` (`no_checkpoint`, `conflict`).
   */
  async rewind(options: RewindOptions = {}): Promise<RewindResult> {
    this.#assertIdle("rewind");
    const append = async (record: SessionRecordInput) => {
      this.#s.log.append((w) => w.append(record));
      await this.flush();
    };
    return rewind(
      {
        fs: this.fs,
        blobStore: this.#s.blobStore,
        records: await this.#records(),
        append,
        replaceHistory: async (history) => {
          this.worker.replaceHistory(history, "external", { cause: "rewind" });
          await this.flush();
        },
      },
      options,
    );
  }

  /**
   * Every model call's usage the session log holds (this session's own
   * calls and its subagents', across resumes), with the model that served
   * it as the log names it (the model id, without its provider).
   */
  async usage(): Promise<{ model: string | undefined; usage: Usage }[]> {
    const out: { model: string | undefined; usage: Usage }[] = [];
    for (const record of await this.#records())
      if (record.type === "usage") out.push({ model: record.model, usage: record.usage });
    return out;
  }

  /** Waits until every record so far is written to the session log. */
  async flush(): Promise<void> {
    await this.#s.log.flush();
  }

  /** Stops the background commands, flushes and closes the session log (releases its lock), and stops the MCP servers. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.cancel("the pod was closed");
    // Before the log closes: what they changed is recorded as they end.
    await this.#s.background.killAll();
    await this.flush();
    this.#closed = true;
    await this.#s.log.close();
    await Promise.all([this.mcp.close(), this.lsp.close()]);
  }

  async #records() {
    await this.flush();
    if (this.#s.log.writer === undefined) return [];
    return (await this.#s.sessions.load(this.id)).records;
  }

  #assertIdle(what: string): void {
    if (this.#closed) throw new Error(`Pod.${what}: the pod is closed`);
    if (this.worker.running || this.#s.runs.controller !== undefined) {
      throw new Error(`Pod.${what}: a run is in progress; await it or cancel() it first`);
    }
  }

  /** The run in progress has ended: no controller, and the caller's signal no longer reaches it. */
  #stop(): void {
    this.#s.runs.controller = undefined;
    this.#unlinkSignal?.();
    this.#unlinkSignal = undefined;
  }

  #start(signal: AbortSignal | undefined): AbortController {
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort(signal.reason);
      else {
        // Taken off again when the run ends (#stop): a caller's signal may outlive many runs.
        const forward = () => controller.abort(signal.reason);
        signal.addEventListener("abort", forward, { once: true });
        this.#unlinkSignal = () => signal.removeEventListener("abort", forward);
      }
    }
    this.#s.runs.controller = controller;
    this.#s.runs.childUsage = {};
    // Agent files that could not be used, said once, at the first run (when a UI is listening).
    for (const problem of this.#s.agentProblems.splice(0))
      this.alerts.warn("agents", `${problem.message} (agent not loaded)`);
    return controller;
  }

  /** A run's result with its subagents' usage rolled in. */
  #withChildUsage(result: RunResult): RunResult {
    return { ...result, usage: sumUsage(result.usage, this.#s.runs.childUsage) };
  }
}
