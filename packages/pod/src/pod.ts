/**
 * The Pod: one hosted agent session. It owns the filesystem scope, the blob
 * store, the session log, context management, alerts and permissions, and
 * builds the Worker from the manifest config. Input is text with `@path`
 * file refs (docs/design/file-refs.md): refs are resolved before the run, stashed, and
 * handed to the worker by the pod's Interceptor as `continue_with`, so
 * history reads `[user message, [File: a], [File: b], ...]`.
 */

import { homedir } from "node:os";
import * as path from "node:path";
import type { YoiContextPolicy } from "@yoi/compaction";
import {
  errorMessage,
  type Item,
  type LlmClient,
  type RequestSettings,
  type Usage,
  userMessage,
} from "@yoi/llm-client";
import type {
  BlobStore,
  HistoryReplacement,
  Hook,
  Interceptor,
  RunResult,
  Tool,
  WorkerEvent,
} from "@yoi/llm-worker";
import { sumUsage, Worker } from "@yoi/llm-worker";
import { type Config, ConfigSchema, type PermissionMode, sandboxSettings } from "@yoi/manifest";
import {
  type CreateSessionOptions,
  checkSessionId,
  FileSessionStore,
  FsBlobStore,
  type FsyncPolicy,
  type SessionRecordInput,
  type SessionStore,
  type SessionWriter,
  titleFromInput,
  WorkerEventRecords,
} from "@yoi/worker-persistence";
import { v7 as uuidv7 } from "uuid";
import type { AgentDefinition } from "./agents/agent-definition.ts";
import { agentDirs, loadAgents } from "./agents/load-agents.ts";
import { type CheckpointInfo, listCheckpoints } from "./checkpoints/checkpoint-list.ts";
import { CheckpointRecorder } from "./checkpoints/checkpoint-recorder.ts";
import { type RewindOptions, type RewindResult, rewind } from "./checkpoints/rewind.ts";
import type { ScanLimits } from "./checkpoints/scope-scan.ts";
import type { AutoReadOptions } from "./context/auto-read.ts";
import { sessionContextPolicy } from "./context/session-policy.ts";
import { AlertBus } from "./events/alerts.ts";
import type { PodEvent, PodEventListener } from "./events/pod-events.ts";
import { ConfiguredHooks } from "./extensions/configured-hooks.ts";
import { type Extensions, loadExtensions } from "./extensions/load-extensions.ts";
import { createSkillTool, skillsPrompt } from "./extensions/skills.ts";
import { PodFsView } from "./fs/fs-view.ts";
import { ReadTracker } from "./fs/read-tracker.ts";
import { ScopedFs } from "./fs/scoped-fs.ts";
import { abortable } from "./input/abortable.ts";
import { flattenSegments, parseSegments, type Segment } from "./input/segments.ts";
import { SubmitInput } from "./input/submit-input.ts";
import { type InstructionsOptions, ProjectInstructions } from "./instructions/project-instructions.ts";
import { McpManager } from "./mcp/mcp-manager.ts";
import { type ModelTarget, SessionModel } from "./model/session-model.ts";
import { PermissionPolicy, type PermissionPrompt } from "./permissions/policy.ts";
import { type PodSandbox, podSandbox } from "./sandbox/pod-sandbox.ts";
import type { Sandbox } from "./sandbox/sandbox.ts";
import { SessionLog, type SessionStartMeta } from "./session/session-log.ts";
import { configSnapshot, inputRecord } from "./session/session-records.ts";
import { type BashToolOptions, defaultBashEnv } from "./tools/bash.ts";
import { createBuiltinTools } from "./tools/builtin-tools.ts";
import type { GrepToolOptions } from "./tools/grep.ts";
import { type SubagentEventInfo, type SubagentResult, taskTool } from "./tools/task.ts";
import { TodoList } from "./tools/todo-list.ts";
import { todoWriteTool } from "./tools/todo-write.ts";
import { type WebFetchOptions, webFetchTool } from "./tools/web-fetch.ts";

export interface PodOptions {
  /** The effective config (`loadConfig().config`). Default: every default (`ConfigSchema.parse({})`). */
  config?: Config;
  /** Working directory; `scope.root` resolves against it. Default `process.cwd()`. */
  cwd?: string;
  /** Where sessions (`<dataDir>/sessions`) and blobs (`<dataDir>/blobs`) live. Default `session.dir`, else `~/.yoi`. */
  dataDir?: string;
  /** The model client. Default: `createClient` for `config.model` (key from `providers.<p>.apiKeyEnv`). */
  client?: LlmClient;
  /** Environment for API keys. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The UI's permission callback. Without one, every `ask` denies (fail closed). */
  ask?: PermissionPrompt;
  /** System prompt. Default: a short one naming the project root and the tools. */
  system?: string;
  /** More tools, after the built-ins. */
  tools?: readonly Tool[];
  /** Public read-only hooks, run after the permission hook. */
  hooks?: readonly Hook[];
  /** Full-power interceptors, run after the pod's own. */
  interceptors?: readonly Interceptor[];
  /** Session log fsync policy. Default `"turn"`. */
  fsync?: FsyncPolicy;
  /** Files re-attached after a compaction, or `false` for none. */
  autoRead?: AutoReadOptions | false;
  /**
   * Project instructions (AGENTS.md / CLAUDE.md from the scope root down to
   * `cwd`, plus `~/.yoi/AGENTS.md`), appended to the system prompt and
   * re-read before each run; `false` reads none. Default: on.
   */
  instructions?: InstructionsOptions | false;
  /** Context window for compaction instead of the catalog's (models the catalog lacks, tests). */
  contextWindow?: number;
  /** Blob store. Default: an FsBlobStore in `<dataDir>`. */
  blobStore?: BlobStore;
  /**
   * Where the session log lives. Default: the JSONL files in `<dataDir>`
   * (with `fsync`); `yoi serve` passes a PostgreSQL store.
   */
  sessionStore?: SessionStore;
  /** Options of the bash tool, or `false` to leave it out. */
  bash?: false | Omit<BashToolOptions, "fs">;
  /** Options of the grep tool (the regex time limit, default 10 s per file). */
  grep?: GrepToolOptions;
  /** Permission mode to start in. Default `config.permissions.mode`. */
  permissionMode?: PermissionMode;
  /** Source of each `config.permissions.rules` entry (a file, `flag:--deny-tool`), for messages. */
  permissionSources?: readonly (string | undefined)[];
  /** The explicit opt-in that allows bypassPermissions without a sandbox. Default false. */
  allowUnsandboxedBypass?: boolean;
  /**
   * The OS sandbox bash runs in, or `false` for none (an explicit opt-out:
   * bash runs unconfined without asking for every command). Default: the
   * machine's (bubblewrap, sandbox-exec) unless the config says `sandbox: false`.
   */
  sandbox?: Sandbox | false;
  /** Options of `web_fetch`, or `false` to leave it out. */
  webFetch?: false | WebFetchOptions;
  /** Directories of named agents (`*.md`). Default: `~/.yoi/agents`, then `<root>/.yoi/agents`. */
  agentDirs?: readonly string[];
  /**
   * Session id of a new session. Default: a new UUID v7. The log file is
   * created on the first input (`run`), so a pod that is opened and closed
   * without input leaves nothing on disk.
   */
  sessionId?: string;
  /** Checkpoints of what tools change (for rewinds), or `false` for none. Default on, bash scanned. */
  checkpoints?: false | { scanBash?: boolean; scanLimits?: ScanLimits };
  /** More facts for a new session's session_start record, so a resume can use them. */
  sessionStart?: Pick<CreateSessionOptions, "baseURL" | "permissionMode">;
  /**
   * How long the first input waits for MCP servers still starting (they
   * start in parallel when the pod opens; one that takes longer joins the
   * run at its next model request). Default 10000 ms.
   */
  mcpStartWaitMs?: number;
  /**
   * Custom commands (`.yoi/commands/`) and skills (`.yoi/skills/`) of the
   * project root and of `homeDir`. Default: none loaded (an embedding
   * application opts in; the CLI does). Hooks come from `config.hooks`.
   */
  extensions?: { homeDir: string } | false;
}

export interface PodRunOptions {
  signal?: AbortSignal;
  /** Tools (names or globs) approved without asking during this run (a custom command's `allowed-tools`). */
  allowTools?: readonly string[];
}

const SOURCE_FILE_REF = "file_ref";
const SOURCE_INSTRUCTIONS = "instructions";

function defaultSystem(root: string, tools: readonly Tool[]): string {
  return [
    "You are yoi, a coding agent working in a user's project.",
    `Project root: ${root}. Paths are relative to it; nothing outside it can be read or written.`,
    `Tools: ${tools.map((t) => t.name).join(", ")}.`,
    "A system message (or `<system-reminder>` text) starting with `[File: <path>]` holds a file the user attached with @<path> or one re-attached after a compaction; its body may be truncated (read_file reads the rest).",
    "A user message starting with `[Image: <path>]` holds an image the user attached.",
    "Read a file before editing it. Keep changes minimal and explain what you did.",
  ].join("\n");
}

function toolOutputLimits(config: Config) {
  return {
    maxBytes: config.toolOutput.maxBytes,
    inlineThresholdBytes: config.toolOutput.inlineThresholdBytes,
    summaryMaxBytes: config.toolOutput.summaryMaxBytes,
    summaryHeadLines: config.toolOutput.headLines,
    summaryTailLines: config.toolOutput.tailLines,
  };
}

function settingsFrom(config: Config): RequestSettings {
  const w = config.worker;
  const settings: RequestSettings = { maxTokens: w.maxTokens };
  if (w.temperature !== undefined) settings.temperature = w.temperature;
  if (w.topP !== undefined) settings.topP = w.topP;
  const r = w.reasoning;
  if (r !== undefined) {
    const reasoning: NonNullable<RequestSettings["reasoning"]> = {};
    if (r.effort !== undefined && r.effort !== "none") reasoning.effort = r.effort;
    if (r.budgetTokens !== undefined) reasoning.budgetTokens = r.budgetTokens;
    if (Object.keys(reasoning).length > 0) settings.reasoning = reasoning;
  }
  return settings;
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
  /** How bash is confined: `active`, `unavailable` (every bash call asks), `disabled` (the user opted out). */
  readonly sandbox: PodSandbox;
  /** The MCP servers of `config.mcpServers`. */
  readonly mcp: McpManager;
  /** Custom commands, skills and the files that could not be loaded (empty unless `extensions` was given). */
  readonly extensions: Extensions;
  readonly #configuredHooks: ConfiguredHooks;
  /** Context of the SessionStart hooks, for the first input. */
  #sessionStartContext: Promise<Item[]> | undefined;
  /** The session's todo list (`todo_write`); restored from history, re-attached after compaction. */
  readonly todos = new TodoList();
  /** The session's model: its one client, other refs' clients, what the model can take. */
  readonly #model: SessionModel;
  readonly #worker: { current: Worker | undefined } = { current: undefined };
  /** The session log: records queue in order; a new session's is created by its first input. */
  readonly #log: SessionLog;
  readonly #policy: YoiContextPolicy;
  readonly #blobStore: BlobStore;
  readonly #listeners = new Set<PodEventListener>();
  /** The `@` refs of a submit, read before the run and handed over with the prompt (seed 001). */
  readonly #input: SubmitInput;
  readonly #workerRecords = new WorkerEventRecords({
    model: () => this.#model.client.model,
    reason: (event) =>
      event.reason === "interceptor" && this.#input.fromRef(event.item) ? "file_ref" : undefined,
  });
  readonly #instructions: ProjectInstructions | undefined;
  #instructionsLoaded = false;
  #instructionProblems = new Set<string>();
  readonly #sessions: SessionStore;
  /** The user turn in progress (1-based; 0 before the first). */
  #turn: number;
  readonly #baseTools: readonly Tool[];
  readonly #mcpWaitMs: number;
  #controller: AbortController | undefined;
  #lastUsage: Usage | undefined;
  /** Usage of the subagents of the run in progress (added to its result). */
  #childUsage: Usage = {};
  readonly #agentProblems: Error[] = [];
  #closed = false;

  private constructor(init: {
    id: string;
    log?: SessionWriter;
    createLog?: (meta: SessionStartMeta) => Promise<SessionWriter>;
    history: Item[];
    fs: ScopedFs;
    config: Config;
    options: PodOptions;
    blobStore: BlobStore;
    sandbox: PodSandbox;
    sessions: SessionStore;
    turn?: number;
    extensions: Extensions;
    agents: ReadonlyMap<string, AgentDefinition>;
  }) {
    const { config, options } = init;
    this.id = init.id;
    this.#sessions = init.sessions;
    this.#turn = init.turn ?? 0;
    this.#log = new SessionLog({
      ...(init.log ? { writer: init.log } : {}),
      ...(init.createLog ? { create: init.createLog } : {}),
      startMeta: () => ({
        model: this.#model.client.model,
        provider: this.#model.client.provider,
        permissionMode: this.permissions.mode,
      }),
      onFailure: (error) => this.#onLogFailure(error),
    });
    this.fs = init.fs;
    this.view = new PodFsView(init.fs);
    this.alerts = new AlertBus();
    this.reads = new ReadTracker();
    this.#blobStore = init.blobStore;
    this.sandbox = init.sandbox;
    this.#instructions =
      options.instructions === false
        ? undefined
        : new ProjectInstructions(init.fs, init.fs.cwd, path.resolve(options.cwd ?? process.cwd()), {
            ...(options.instructions ?? {}),
          });
    this.#model = new SessionModel({
      config,
      ...(options.client ? { client: options.client } : {}),
      ...(options.env ? { env: options.env } : {}),
      onWarning: (w) => this.#worker.current?.handleClientWarning(w),
    });
    this.#policy = sessionContextPolicy({
      config,
      blobStore: init.blobStore,
      client: this.#model.client,
      catalog: this.#model.catalog,
      ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
      clientFor: (ref) => this.#model.clientFor(ref),
      fs: init.fs,
      reads: this.reads,
      todos: this.todos,
      autoRead: options.autoRead ?? {},
      onAutoRead: (paths) => {
        this.#emit({ type: "auto_read", paths });
        this.alerts.info("auto_read", `re-attached after compaction: ${paths.join(", ")}`);
      },
    });
    this.todos.restore(init.history);
    this.todos.subscribe((todos) => this.#emit({ type: "todos", todos: [...todos] }));
    this.permissions = new PermissionPolicy(config.permissions, {
      fs: init.fs,
      sandbox: init.sandbox.status,
      ...(options.permissionMode ? { mode: options.permissionMode } : {}),
      ...(options.permissionSources ? { sources: options.permissionSources } : {}),
      ...(options.allowUnsandboxedBypass ? { allowUnsandboxedBypass: true } : {}),
      signal: () => this.#controller?.signal,
      onOutcome: (outcome) => {
        this.#emit({ type: "permission_outcome", outcome });
        // Headless sessions: say what was refused for want of someone to ask.
        if (outcome.by === "no_ui") {
          const what = outcome.subject === undefined ? outcome.tool : `${outcome.tool} ${outcome.subject}`;
          this.alerts.warn(
            "permissions",
            `denied ${what}: it needs approval and no one can be asked (add an allow rule to permit it)`,
          );
        }
      },
      ...(options.ask
        ? {
            ask: (request) => {
              const { signal: _signal, ...shown } = request;
              this.#emit({ type: "permission_request", request: shown });
              return options.ask!(request);
            },
          }
        : {}),
    });
    // A resume starts in the mode the session was last in: mode switches are logged.
    this.permissions.onModeChange((mode) => {
      if (this.#log.started) this.#log.append((log) => log.configChange({ permissionMode: mode }));
    });
    const builtins = createBuiltinTools({
      view: this.view,
      reads: this.reads,
      imageRefusal: () => this.#model.toolImageRefusal(),
      ...(options.grep ? { grep: options.grep } : {}),
      bash:
        options.bash === false
          ? false
          : {
              ...(options.bash ?? {}),
              ...(init.sandbox.bash ? { sandbox: init.sandbox.bash } : {}),
              // Commands never see the keys the config names, not only the well-known ones.
              env:
                options.bash?.env ??
                defaultBashEnv(
                  process.env,
                  Object.values(config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])),
                ),
            },
    });
    const hooks = [
      this.permissions.hook(),
      ...(options.checkpoints === false
        ? []
        : [
            new CheckpointRecorder({
              fs: init.fs,
              blobStore: init.blobStore,
              append: (record) => this.#log.append(async (log) => log.append(await record)),
              turn: () => this.#turn,
              onError: (message) => this.alerts.warn("checkpoints", message),
              ...options.checkpoints,
            }).hook(),
          ]),
      ...(options.hooks ?? []),
    ];
    const web = options.webFetch === false ? [] : [webFetchTool(options.webFetch ?? {})];
    const subagentTools = [...builtins, ...web, ...(options.tools ?? [])];
    const tools: Tool[] = [
      ...builtins,
      ...web,
      todoWriteTool(this.todos),
      ...(config.task.maxDepth > 0
        ? [
            taskTool({
              depth: 1,
              maxDepth: config.task.maxDepth,
              timeoutMs: config.task.timeoutMs,
              maxTurns: config.task.maxTurns,
              client: this.#model.client,
              clientFor: (ref) => this.#model.clientFor(ref),
              // Read at each task call: MCP servers that came up since start-up lend their tools too.
              tools: () => [...subagentTools, ...this.mcp.tools()],
              agents: init.agents,
              root: init.fs.cwd,
              instructions: () => this.#instructions?.render(),
              settings: settingsFrom(config),
              hooks,
              blobStore: init.blobStore,
              toolTimeoutMs: config.worker.toolTimeoutMs,
              toolOutput: toolOutputLimits(config),
              onEvent: (info) => this.#onSubagentEvent(info),
              onDone: (result) => this.#onSubagentDone(result),
            }),
          ]
        : []),
      ...this.#policy.tools,
      ...(init.extensions.skills.length > 0 ? [createSkillTool(init.extensions.skills)] : []),
      ...(options.tools ?? []),
    ];
    this.extensions = init.extensions;
    this.#configuredHooks = new ConfiguredHooks({
      hooks: config.hooks,
      cwd: init.fs.cwd,
      // The same environment as bash commands: without the keys the config names.
      env: defaultBashEnv(
        process.env,
        Object.values(config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])),
      ),
      sessionId: () => this.id,
      onAlert: (level, message) => this.alerts.emit(level, "hooks", message),
    });
    // Configured hooks see every call, the subagents' too (they share this array), right after the permission check.
    hooks.splice(1, 0, this.#configuredHooks.hook());
    this.#baseTools = tools;
    this.#mcpWaitMs = options.mcpStartWaitMs ?? 10_000;
    this.mcp = new McpManager({
      servers: config.mcpServers,
      env: options.env ?? process.env,
      cwd: init.fs.cwd,
      blobStore: init.blobStore,
      toolTimeoutMs: config.worker.toolTimeoutMs,
      onAlert: (level, message) => this.alerts.emit(level, "mcp", message),
      onChange: () => this.#refreshTools(),
    });
    this.#input = new SubmitInput({
      view: this.view,
      reads: this.reads,
      mcp: this.mcp,
      maxBytes: config.toolOutput.maxBytes,
      imageRefusal: () => this.#model.imageRefusal(),
      planMode: () => this.permissions.mode === "plan",
      onUnattached: (ref, reason) => this.alerts.warn(SOURCE_FILE_REF, `@${ref} was not attached: ${reason}`),
    });
    const podInterceptor: Interceptor = {
      name: "pod",
      onPromptSubmit: () => this.#input.onPromptSubmit(),
      beforeRequest: ({ request }) => {
        const extra = this.#instructions?.render();
        if (!extra) return undefined;
        return {
          action: "continue",
          request: { ...request, system: request.system ? `${request.system}\n\n${extra}` : extra },
        };
      },
    };
    const worker = new Worker({
      client: this.#model.client,
      tools,
      system: (options.system ?? defaultSystem(init.fs.cwd, tools)) + skillsPrompt(init.extensions.skills),
      settings: settingsFrom(config),
      maxTurns: config.worker.maxTurns,
      blobStore: init.blobStore,
      contextPolicy: this.#policy,
      interceptors: [podInterceptor, this.#configuredHooks.interceptor(), ...(options.interceptors ?? [])],
      hooks,
      toolTimeoutMs: config.worker.toolTimeoutMs,
      toolOutput: toolOutputLimits(config),
      history: init.history,
    });
    this.worker = worker;
    this.#worker.current = worker;
    worker.subscribe((event) => this.#onWorkerEvent(event));
    this.alerts.subscribe((alert) => {
      this.#emit({ type: "alert", alert });
      if (alert.source !== "session_log")
        this.#log.append((log) => log.alert(alert.level, alert.source, alert.message), { opens: false });
    });
    if (init.sandbox.notice !== undefined) this.alerts.warn("sandbox", init.sandbox.notice);
    // In parallel with whatever the UI does next (started after this turn of the event loop, so a
    // caller that subscribes right after create sees every alert); the first input waits (mcpStartWaitMs).
    if (this.mcp.configured) setImmediate(() => this.mcp.start());
    setImmediate(() => {
      for (const problem of init.extensions.problems)
        this.alerts.warn(
          "extensions",
          `${problem.file}: ${problem.message}${problem.kept ? "" : "; it is skipped"}`,
        );
    });
    if (this.#configuredHooks.configured)
      this.#sessionStartContext = new Promise((resolve) => setImmediate(resolve)).then(() =>
        this.#configuredHooks.sessionStart(init.log ? "resume" : "startup"),
      );
  }

  /** The worker's tools: the pod's own, then those of the MCP servers that are up. */
  #refreshTools(): void {
    try {
      this.worker.setTools([...this.#baseTools, ...this.mcp.tools()]);
    } catch (error) {
      this.alerts.error(
        "mcp",
        `MCP tools not updated: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /**
   * Starts a new session. Its log is created on the first input, so a
   * session nobody typed into leaves no file behind.
   */
  static async create(options: PodOptions = {}): Promise<Pod> {
    const parts = await Pod.#parts(options);
    const id = checkSessionId(options.sessionId ?? uuidv7());
    const createLog = (meta: SessionStartMeta) =>
      parts.sessions.create({
        id,
        cwd: parts.fs.cwd,
        ...meta,
        ...options.sessionStart,
        config: configSnapshot(parts.config),
      });
    const pod = new Pod({ ...parts, id, createLog, history: [], options });
    pod.#agentProblems.push(...parts.agentProblems);
    return pod;
  }

  /** Reopens a session from its log: history rebuilt, new records appended to the same log. */
  static async restore(sessionId: string, options: PodOptions = {}): Promise<Pod> {
    const parts = await Pod.#parts(options);
    const opened = await parts.sessions.open(sessionId);
    let pod: Pod;
    try {
      pod = new Pod({
        ...parts,
        id: opened.log.id,
        log: opened.log,
        history: opened.history,
        options,
        turn: opened.meta.userTurns,
      });
    } catch (error) {
      await opened.log.close().catch(() => {});
      throw error;
    }
    for (const warning of opened.warnings)
      pod.alerts.warn("session_log", `line ${warning.line}: ${warning.message}`);
    pod.#agentProblems.push(...parts.agentProblems);
    return pod;
  }

  static async #parts(options: PodOptions) {
    const config = options.config ?? ConfigSchema.parse({});
    const cwd = path.resolve(options.cwd ?? process.cwd());
    const root = path.resolve(cwd, config.scope.root ?? ".");
    const resolveAll = (dirs: readonly string[] | undefined) =>
      (dirs ?? []).map((d) => path.resolve(root, d));
    const fs = await ScopedFs.create({
      writeRoots: config.scope.writeRoots ? resolveAll(config.scope.writeRoots) : [root],
      readRoots: resolveAll(config.scope.readRoots),
      cwd: root,
    });
    const dataDir = path.resolve(cwd, options.dataDir ?? config.session.dir ?? path.join(homedir(), ".yoi"));
    const blobStore = options.blobStore ?? new FsBlobStore({ dir: dataDir });
    const sessions =
      options.sessionStore ??
      new FileSessionStore({
        dir: dataDir,
        ...(options.fsync !== undefined ? { fsync: options.fsync } : {}),
      });
    const sandbox = await podSandbox({
      settings: sandboxSettings(config.sandbox),
      bash: options.bash !== false,
      ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
      writeRoots: fs.writeRoots,
      dataDir,
    });
    const extensions: Extensions = options.extensions
      ? await loadExtensions({ projectDir: root, homeDir: options.extensions.homeDir })
      : { commands: [], skills: [], problems: [] };
    const loaded =
      config.task.maxDepth > 0
        ? await loadAgents(options.agentDirs ?? agentDirs(root, homedir()))
        : { agents: new Map<string, AgentDefinition>(), problems: [] };
    return {
      config,
      fs,
      dataDir,
      blobStore,
      sessions,
      sandbox,
      extensions,
      agents: loaded.agents,
      agentProblems: loaded.problems,
    };
  }

  /** The session log, once the session has one (after the first input, or from the start when restored). */
  get log(): SessionWriter | undefined {
    return this.#log.writer;
  }

  /**
   * The model client. It stays the same object across `setModel`; its
   * `provider` and `model` say where the next call goes.
   */
  get client(): LlmClient {
    return this.#model.client;
  }

  /**
   * Switches the model for the rest of the session: history, tools and the
   * log stay; the switch is logged as `config_change` (so the audit trail
   * and `listSessions` show it). `target` is a model ref resolved through the
   * config (`"anthropic/claude-haiku-4-5"`, key from the provider's
   * `apiKeyEnv`) or a ready client. Throws while a run is in progress, and
   * for a ref the config cannot resolve (nothing changes then).
   */
  setModel(target: ModelTarget): void {
    this.#assertIdle("setModel");
    const { previous, next } = this.#model.switchTo(target);
    if (!this.#log.started) return; // no log yet: session_start will name the model
    const changes: Record<string, unknown> = {
      model: next,
      previous,
      ...(typeof target === "string" ? { ref: target } : {}),
    };
    const model = this.#model.client.model;
    this.#log.append((log) => log.configChange(changes, model));
  }

  /** The worker's history (read-only view). */
  get history(): readonly Item[] {
    return this.worker.history;
  }

  get running(): boolean {
    return this.worker.running;
  }

  /** Subscribes to pod events (worker events, alerts, permission traffic); returns the unsubscribe function. */
  subscribe(listener: PodEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Submits input: a string is parsed for `@path` refs (or pass segments).
   * Refs are read now; each one that cannot be read raises a warn Alert and
   * leaves only its placeholder in the user message. Resolves with the
   * run's result once everything is in the session log.
   */
  async run(input: string | readonly Segment[], options: PodRunOptions = {}): Promise<RunResult> {
    this.#assertIdle("run");
    const segments = typeof input === "string" ? parseSegments(input) : [...input];
    const text = flattenSegments(segments);
    if (text.trim() === "") throw new Error("Pod.run: the input is empty; type a message or an @path");
    // A checkpoint opens each turn: a rewind goes back to just before it.
    const turn = ++this.#turn;
    const label = titleFromInput(text);
    this.#log.append((log) =>
      log.append({ type: "checkpoint", kind: "turn", turn, ...(label !== undefined ? { label } : {}) }),
    );
    // The item record holds the message itself: this record keeps a preview and the refs, so the log stores a prompt once.
    this.#log.append((log) =>
      log.userInput(...inputRecord(typeof input === "string" ? input : text, segments)),
    );
    const controller = this.#start(options.signal);
    const approved = options.allowTools?.length ? this.permissions.preApprove(options.allowTools) : undefined;
    try {
      const started = this.#sessionStartContext;
      this.#sessionStartContext = undefined;
      if (started !== undefined) this.#input.add((await abortable(started, controller.signal)) ?? []);
      if (this.mcp.configured) await abortable(this.mcp.ready(this.#mcpWaitMs), controller.signal);
      await this.#input.resolveRefs(segments, controller.signal);
      await this.#refreshInstructions();
      return this.#withChildUsage(await this.worker.run(userMessage(text), { signal: controller.signal }));
    } finally {
      approved?.();
      this.#input.clear();
      this.#controller = undefined;
      await this.flush();
    }
  }

  /** Continues without new input (pending tool calls, a failed or paused run). */
  async resume(options: PodRunOptions = {}): Promise<RunResult> {
    this.#assertIdle("resume");
    const controller = this.#start(options.signal);
    try {
      await this.#refreshInstructions();
      return this.#withChildUsage(await this.worker.resume({ signal: controller.signal }));
    } finally {
      this.#controller = undefined;
      await this.flush();
    }
  }

  /** Cancels the run in progress (tools are aborted, bash process groups killed). No-op when idle. */
  cancel(reason = "cancelled by the user"): void {
    this.#controller?.abort(new Error(reason));
  }

  /**
   * Compacts now (a user's `/compact`), re-attaching recently read files.
   * Resolves with the replacement, or undefined when there was nothing to fold.
   */
  async compact(options: PodRunOptions = {}): Promise<HistoryReplacement | undefined> {
    this.#assertIdle("compact");
    const replacement = await this.#policy.compactNow({
      history: this.worker.history,
      lastUsage: this.#lastUsage,
      client: this.#model.client,
      blobStore: this.#blobStore,
      signal: options.signal ?? new AbortController().signal,
    });
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
      this.#log.append((log) => log.append(record));
      await this.flush();
    };
    const result = await rewind(
      {
        fs: this.fs,
        blobStore: this.#blobStore,
        records: await this.#records(),
        append,
        replaceHistory: async (history) => {
          this.worker.replaceHistory(history, "external", { cause: "rewind" });
          await this.flush();
        },
      },
      options,
    );
    return result;
  }

  async #records() {
    await this.flush();
    if (this.#log.writer === undefined) return [];
    return (await this.#sessions.load(this.id)).records;
  }

  /** Waits until every record so far is written to the session log. */
  async flush(): Promise<void> {
    await this.#log.flush();
  }

  /** Flushes and closes the session log (releases its lock). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.cancel("the pod was closed");
    await this.flush();
    this.#closed = true;
    await this.#log.close();
    await this.mcp.close();
  }

  #assertIdle(what: string): void {
    if (this.#closed) throw new Error(`Pod.${what}: the pod is closed`);
    if (this.worker.running || this.#controller !== undefined) {
      throw new Error(`Pod.${what}: a run is in progress; await it or cancel() it first`);
    }
  }

  #start(signal: AbortSignal | undefined): AbortController {
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort(signal.reason);
      else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
    }
    this.#controller = controller;
    this.#childUsage = {};
    this.#reportAgentProblems();
    return controller;
  }

  /** A run's result with its subagents' usage rolled in. */
  #withChildUsage(result: RunResult): RunResult {
    return { ...result, usage: sumUsage(result.usage, this.#childUsage) };
  }

  /** Agent files that could not be used, said once, at the first run (when a UI is listening). */
  #reportAgentProblems(): void {
    for (const problem of this.#agentProblems.splice(0))
      this.alerts.warn("agents", `${problem.message} (agent not loaded)`);
  }

  #onSubagentEvent(info: SubagentEventInfo): void {
    if (info.event.type === "usage") {
      const usage = info.event.usage;
      this.#childUsage = sumUsage(this.#childUsage, usage);
      // Logged with the child's model so the session's totals include it.
      this.#log.append((log) => log.usage(usage, { model: info.model.slice(info.model.indexOf("/") + 1) }));
    }
    this.#emit({ type: "subagent", ...info });
  }

  #onSubagentDone(result: SubagentResult): void {
    this.#log.append((log) =>
      log.subagent({
        callId: result.callId,
        description: result.description,
        ...(result.agent !== undefined ? { agent: result.agent } : {}),
        model: result.model,
        status: result.status,
        turns: result.turns,
        usage: result.usage,
        ...(result.blobId !== undefined ? { blobId: result.blobId } : {}),
        items: result.items,
      }),
    );
  }

  /** Re-reads the instruction files before a run; says what was loaded or changed, and what was refused. */
  async #refreshInstructions(): Promise<void> {
    const instructions = this.#instructions;
    if (!instructions) return;
    let changed: boolean;
    try {
      changed = await instructions.refresh();
    } catch (error) {
      this.alerts.warn(SOURCE_INSTRUCTIONS, `instruction files could not be read: ${String(error)}`);
      return;
    }
    const { files, problems } = instructions.current;
    const names = files.map((f) => f.display).join(", ");
    if (changed && files.length > 0)
      this.alerts.info(SOURCE_INSTRUCTIONS, `${this.#instructionsLoaded ? "re-read" : "loaded"}: ${names}`);
    else if (changed) this.alerts.info(SOURCE_INSTRUCTIONS, "no instruction files any more");
    this.#instructionsLoaded = true;
    const seen = new Set<string>();
    for (const problem of problems) {
      const message = `${problem.display} was not loaded: ${problem.reason}`;
      seen.add(message);
      if (!this.#instructionProblems.has(message)) this.alerts.warn(SOURCE_INSTRUCTIONS, message);
    }
    this.#instructionProblems = seen;
  }

  #onWorkerEvent(event: WorkerEvent): void {
    if (event.type === "usage") this.#lastUsage = event.usage;
    // The one recorder of worker events (worker-persistence); the pod only queues its writes.
    const write = this.#workerRecords.record(event);
    if (write) this.#log.append(write);
    this.#emit(event);
  }

  /** The failure path of the session log: said once; the log takes no more records. */
  #onLogFailure(error: unknown): void {
    this.alerts.error(
      "session_log",
      `the session log could not be written; this session will not resume fully: ${errorMessage(error)}`,
    );
  }

  #emit(event: PodEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A broken UI listener must not break the session.
      }
    }
  }
}
