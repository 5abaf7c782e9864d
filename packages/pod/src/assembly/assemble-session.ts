/**
 * Wiring a session: the parts a Pod is made of, built from the config and
 * the options and connected to each other (the worker with its tools,
 * hooks, interceptors and context policy; permissions; MCP; the session log
 * and the events the UI hears). The Pod then only runs what this returns.
 */
import * as path from "node:path";
import type { YoiContextPolicy } from "@yoi/compaction";
import type { Item, LlmClient } from "@yoi/llm-client";
import { type Hook, type Interceptor, sumUsage, type Tool, Worker } from "@yoi/llm-worker";
import type { Config } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { type SessionStore, type SessionWriter, WorkerEventRecords } from "@yoi/worker-persistence";
import type { AgentDefinitionError } from "../agents/agent-definition.ts";
import { CheckpointRecorder } from "../checkpoints/checkpoint-recorder.ts";
import { sessionContextPolicy } from "../context/session-policy.ts";
import { branchLabel, SessionEnvironment } from "../environment/session-environment.ts";
import { AlertBus } from "../events/alerts.ts";
import { PodEventHub } from "../events/event-hub.ts";
import { ConfiguredHooks } from "../extensions/configured-hooks.ts";
import type { Extensions } from "../extensions/load-extensions.ts";
import { createSkillTool, skillsPrompt } from "../extensions/skills.ts";
import { PodFsView } from "../fs/fs-view.ts";
import { ReadTracker } from "../fs/read-tracker.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { unattachedMessage } from "../input/file-ref.ts";
import { SubmitInput } from "../input/submit-input.ts";
import { InstructionAlerts } from "../instructions/instruction-alerts.ts";
import { ProjectInstructions } from "../instructions/project-instructions.ts";
import { LspManager } from "../lsp/lsp-manager.ts";
import { McpManager } from "../mcp/mcp-manager.ts";
import { SessionModel } from "../model/session-model.ts";
import { PermissionPolicy } from "../permissions/policy.ts";
import type { PodOptions } from "../pod-options.ts";
import type { SessionSandbox } from "../sandbox/pod-sandbox.ts";
import { RunState } from "../session/run-state.ts";
import { SessionLog, type SessionStartMeta } from "../session/session-log.ts";
import { recordCost } from "../telemetry/cost-metric.ts";
import { BackgroundShells } from "../tools/background-shells.ts";
import { DEFAULT_SHELL, defaultBashEnv } from "../tools/bash.ts";
import { createBuiltinTools } from "../tools/builtin-tools.ts";
import { EXIT_PLAN_MODE_TOOL_NAME, exitPlanModeTool } from "../tools/exit-plan-mode.ts";
import { type SubagentResult, type TaskToolOptions, taskTool } from "../tools/task.ts";
import { TodoList } from "../tools/todo-list.ts";
import { todoWriteTool } from "../tools/todo-write.ts";
import { webFetchTool } from "../tools/web-fetch.ts";
import { webSearchOffer } from "../tools/web-search.ts";
import type { SessionBase } from "./session-base.ts";
import { defaultSystem, settingsFrom, toolOutputLimits, workerBounds } from "./worker-settings.ts";

/** Worker events that come only once a model call has been answered (or has failed). */
const ANSWER_EVENTS: ReadonlySet<string> = new Set([
  "text_delta",
  "thinking_delta",
  "server_tool",
  "tool_call_start",
  "usage",
  "retry",
  "turn_end",
  "run_end",
  "error",
]);

/** Which session the parts are for: a new one (its log created at the first input) or a restored one. */
export interface SessionSource {
  id: string;
  history: Item[];
  /** User turns so far. */
  turn: number;
  /** A restored session's open log. */
  writer?: SessionWriter;
  /** Creates a new session's log. */
  create?: (meta: SessionStartMeta) => Promise<SessionWriter>;
}

/** The parts of a session, wired. */
export interface SessionParts {
  id: string;
  config: Config;
  fs: ScopedFs;
  view: PodFsView;
  reads: ReadTracker;
  alerts: AlertBus;
  events: PodEventHub;
  log: SessionLog;
  sessions: SessionStore;
  blobStore: SessionBase["blobStore"];
  /** Settling it (the probe, when it has not run) applies what it found to the parts below. */
  sandbox: SessionSandbox;
  extensions: Extensions;
  model: SessionModel;
  policy: YoiContextPolicy;
  permissions: PermissionPolicy;
  /** The pod's own tools (MCP servers' tools join them as the servers come up). */
  tools: readonly Tool[];
  /** Hooks of every tool call, the subagents' too: permissions, configured hooks, checkpoints, the caller's. */
  hooks: readonly Hook[];
  mcp: McpManager;
  /** The language servers whose diagnostics follow each edit. */
  lsp: LspManager;
  /** How subagents run (the task tool's options), for the session's own subagents (/review). */
  subagents: TaskToolOptions;
  /** The tools a subagent may be given. */
  subagentTools: () => readonly Tool[];
  /** The environment of the commands the session runs (bash, hooks, git): no API keys. */
  commandEnv: NodeJS.ProcessEnv;
  worker: Worker;
  input: SubmitInput;
  instructions: InstructionAlerts | undefined;
  /** The environment section of the system prompt (undefined when turned off). */
  environment: SessionEnvironment | undefined;
  todos: TodoList;
  /** Background bash commands (killed when the session closes). */
  background: BackgroundShells;
  runs: RunState;
  /** Context of the SessionStart hooks, for the first input (undefined without hooks). */
  sessionStart: Promise<Item[]> | undefined;
  agentProblems: AgentDefinitionError[];
  /** How long the first input waits for MCP servers still starting. */
  mcpWaitMs: number;
}

export function assembleSession(base: SessionBase, source: SessionSource, options: PodOptions): SessionParts {
  const { config, fs, blobStore, sandbox, extensions } = base;
  // Commands are confined by the session's sandbox where it is active or not settled yet.
  const confined = !sandbox.settled || sandbox.current.bash !== undefined;
  const alerts = new AlertBus();
  const events = new PodEventHub();
  const runs = new RunState(source.turn);
  const view = new PodFsView(fs, options.fileAccess);
  const reads = new ReadTracker();
  const todos = new TodoList();
  // Set once the worker exists: MCP servers that come up later lend it their tools.
  let worker: Worker | undefined;
  // The worker hears its clients' warnings per call: nothing is wired here.
  const model = new SessionModel({
    config,
    ...(options.client ? { client: options.client } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  // Bash commands and configured hooks run without the keys the config names, not only the well-known ones.
  const commandEnv = defaultBashEnv(
    process.env,
    Object.values(config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])),
  );

  const permissions = new PermissionPolicy(config.permissions, {
    fs,
    sandbox: sandbox.current.status,
    ...(options.permissionMode ? { mode: options.permissionMode } : {}),
    ...(options.permissionSources ? { sources: options.permissionSources } : {}),
    ...(options.allowUnsandboxedBypass ? { allowUnsandboxedBypass: true } : {}),
    signal: () => runs.controller?.signal,
    onOutcome: (outcome) => {
      events.emit({ type: "permission_outcome", outcome });
      // Headless sessions: say what was refused for want of someone to ask.
      if (outcome.by === "no_ui" && outcome.tool === EXIT_PLAN_MODE_TOOL_NAME) {
        alerts.warn(
          "permissions",
          "plan mode: the plan cannot be approved here (no one can be asked), so nothing was changed and the plan is the answer; to carry it out, run yoi interactively or with --permission-mode acceptEdits",
        );
      } else if (outcome.by === "no_ui") {
        const what = outcome.subject === undefined ? outcome.tool : `${outcome.tool} ${outcome.subject}`;
        alerts.warn(
          "permissions",
          `denied ${what}: it needs approval and no one can be asked (add an allow rule to permit it)`,
          "denied_no_ui",
        );
      }
    },
    ...(options.ask
      ? {
          ask: (request) => {
            const { signal: _signal, ...shown } = request;
            events.emit({ type: "permission_request", request: shown });
            return options.ask!(request);
          },
        }
      : {}),
  });

  // Where the sandbox is expected rather than known (a bwrap on PATH not yet probed), the probe runs
  // before the first tool call or once the first answer is arriving, whoever starts it (the bash tool
  // settles it too); where it finds none, the permissions, the tools and the user follow the answer
  // before anything waiting for it goes on, and the model is told with the next request.
  const expected = sandbox.current.status;
  sandbox.onSettled((settled) => {
    if (settled.status === expected) return;
    const modeDropped = permissions.settleSandbox(settled.status);
    worker?.setTools(offeredTools());
    if (settled.notice !== undefined) alerts.warn("sandbox", settled.notice, "sandbox_unavailable");
    if (modeDropped)
      alerts.warn(
        "permissions",
        "bypassPermissions needs the bash sandbox, which is not active here: the mode is default now",
        "bypass_without_sandbox",
      );
  });

  const log = new SessionLog({
    ...(source.writer ? { writer: source.writer } : {}),
    ...(source.create ? { create: source.create } : {}),
    startMeta: () => {
      // The branch as the environment last read it, for session lists. The log is created at once
      // (its lock is taken before anything is acknowledged), so a read still running is not waited for.
      const snapshot = environment?.current;
      const branch = snapshot && branchLabel(snapshot);
      return {
        model: model.client.model,
        provider: model.client.provider,
        permissionMode: permissions.mode,
        ...(branch !== undefined ? { gitBranch: branch } : {}),
      };
    },
    // The failure path of the session log: said once; the log takes no more records.
    onFailure: (error) => {
      const message = errorMessage(error);
      alerts.error(
        "session_log",
        `the session log could not be written; this session will not resume fully: ${message}`,
      );
      // Nothing may go on as done that is not recorded: the run in progress stops (Pod.run reports it failed).
      runs.controller?.abort(new Error(`the session log could not be written: ${message}`));
    },
  });
  // A resume starts in the mode the session was last in: mode switches are logged.
  permissions.onModeChange((mode) => {
    if (log.started) log.append((w) => w.configChange({ permissionMode: mode }));
  });
  alerts.subscribe((alert) => {
    events.emit({ type: "alert", alert });
    if (alert.source !== "session_log")
      log.append((w) => w.alert(alert.level, alert.source, alert.message), { opens: false });
  });

  const policy = sessionContextPolicy({
    config,
    blobStore,
    client: model.client,
    catalog: model.catalog,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    clientFor: (ref) => model.clientFor(ref),
    fs,
    reads,
    todos,
    autoRead: options.autoRead ?? {},
    onAutoRead: (paths) => {
      events.emit({ type: "auto_read", paths });
      alerts.info("auto_read", `re-attached after compaction: ${paths.join(", ")}`);
    },
  });
  todos.restore(source.history);
  todos.subscribe((list) => events.emit({ type: "todos", todos: [...list] }));

  const instructions =
    options.instructions === false
      ? undefined
      : new InstructionAlerts(
          new ProjectInstructions(fs, fs.cwd, path.resolve(options.cwd ?? process.cwd()), {
            ...(options.instructions ?? {}),
          }),
          alerts,
        );
  const environment =
    options.environment === false
      ? undefined
      : new SessionEnvironment(
          fs.cwd,
          options.bash === false ? undefined : (options.bash?.shell ?? DEFAULT_SHELL),
          options.environment ?? {},
          commandEnv,
        );
  // The system prompt's additions: instructions first, then the environment, which changes more often.
  const promptAdditions = () =>
    [instructions?.render(), environment?.render()]
      .filter((part) => part !== undefined && part !== "")
      .join("\n\n");
  const configuredHooks = new ConfiguredHooks({
    hooks: config.hooks,
    cwd: fs.cwd,
    env: commandEnv,
    sessionId: () => source.id,
    onAlert: (level, message) => alerts.emit(level, "hooks", message),
  });
  const background = new BackgroundShells();
  const checkpoints =
    options.checkpoints === false
      ? undefined
      : new CheckpointRecorder({
          fs,
          blobStore,
          append: (record) => log.append(async (w) => w.append(await record)),
          turn: () => runs.turn,
          onError: (message) => alerts.warn("checkpoints", message),
          backgroundRunning: () =>
            background
              .list()
              .filter((info) => info.state === "running" || info.leftRunning === true)
              .map((info) => info.callId),
          ...options.checkpoints,
        });
  // What a background command changed is recorded when it ends, under the bash call that started it.
  if (checkpoints !== undefined) background.onEnd((info) => checkpoints.backgroundEnded(info.callId));
  const hooks: Hook[] = [
    // First, when the sandbox is not settled yet: no tool runs (nor is a permission decided) before the probe's answer.
    ...(sandbox.settled
      ? []
      : [{ name: "sandbox", beforeToolCall: async () => void (await sandbox.settle()) } satisfies Hook]),
    permissions.hook(),
    // Configured hooks see every call, the subagents' too (they share this array), right after the permission check.
    configuredHooks.hook(),
    ...(checkpoints === undefined ? [] : [checkpoints.hook()]),
    ...(options.hooks ?? []),
    // Last before a tool runs: a host that lost the session (stopped past its lease, another host
    // took over) must not act for it; the log fences its appends, this fences the tools.
    {
      name: "session-held",
      beforeToolCall: async () => {
        try {
          await log.writer?.ensureHeld();
          return undefined;
        } catch (error) {
          return { action: "abort", reason: `this host no longer holds the session: ${errorMessage(error)}` };
        }
      },
    },
  ];

  const mcp = new McpManager({
    servers: config.mcpServers,
    inProcess: options.mcpServers,
    env: options.env ?? process.env,
    cwd: fs.cwd,
    blobStore,
    toolTimeoutMs: config.worker.toolTimeoutMs,
    maxResultBytes: config.worker.maxMcpResultBytes,
    onAlert: (level, message) => alerts.emit(level, "mcp", message),
    onChange: () => {
      try {
        worker?.setTools(offeredTools());
      } catch (error) {
        alerts.error("mcp", `MCP tools not updated: ${errorMessage(error)}`);
      }
    },
  });

  const lsp = new LspManager({
    config: options.lsp === false ? { ...config.lsp, enabled: false } : config.lsp,
    root: fs.cwd,
    env: commandEnv,
    display: (real) => fs.display(real),
    onAlert: (level, message) => alerts.emit(level, "lsp", message),
    ...(confined ? { sandbox } : {}),
  });
  const builtins = createBuiltinTools({
    view,
    reads,
    diagnostics: (real, text, signal) => lsp.diagnose(real, text, signal),
    imageRefusal: () => model.toolImageRefusal(),
    ...(options.grep ? { grep: options.grep } : {}),
    bash:
      options.bash === false
        ? false
        : {
            ...(options.bash ?? {}),
            ...(confined ? { sandbox } : {}),
            env: options.bash?.env ?? commandEnv,
            background,
          },
  });
  const web = options.webFetch === false ? [] : [webFetchTool(options.webFetch ?? {})];
  const subagentTools = [...builtins, ...web, ...(options.tools ?? [])];
  const onSubagentDone = (result: SubagentResult) =>
    log.append((w) =>
      w.subagent({
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
  // Web search where the client's model has it and the permissions allow it (read per request).
  const searchOffer = (client: LlmClient): Interceptor[] =>
    options.webSearch === false
      ? []
      : [webSearchOffer({ serverTool: () => model.webSearchTool(client), permissions })];
  // The task tool's options; /review runs its read-only reviewer with them too.
  const subagents: TaskToolOptions = {
    depth: 1,
    maxDepth: config.task.maxDepth,
    timeoutMs: config.task.timeoutMs,
    maxTurns: config.task.maxTurns,
    client: model.client,
    clientFor: (ref) => model.clientFor(ref),
    // Read at each task call: MCP servers that came up since start-up lend their tools too.
    tools: () => [...subagentTools, ...mcp.tools()],
    agents: base.agents,
    root: fs.cwd,
    instructions: promptAdditions,
    settings: settingsFrom(config),
    hooks,
    interceptors: searchOffer,
    blobStore,
    toolTimeoutMs: config.worker.toolTimeoutMs,
    toolOutput: toolOutputLimits(config),
    bounds: workerBounds(config),
    onEvent: (info) => {
      if (info.event.type === "usage") {
        const usage = info.event.usage;
        runs.childUsage = sumUsage(runs.childUsage, usage);
        // Logged with the child's model so the session's totals include it.
        const slash = info.model.indexOf("/");
        const childModel = info.model.slice(slash + 1);
        log.append((w) => w.usage(usage, { model: childModel }));
        recordCost(usage, info.model.slice(0, slash), childModel, model.catalog, "subagent");
      }
      events.emit({ type: "subagent", ...info });
    },
    onDone: onSubagentDone,
  };
  const tools: Tool[] = [
    ...builtins,
    ...web,
    todoWriteTool(todos),
    ...(config.task.maxDepth > 0 ? [taskTool(subagents)] : []),
    ...policy.tools,
    ...(extensions.skills.length > 0 ? [createSkillTool(extensions.skills)] : []),
    ...(options.tools ?? []),
  ];

  // exit_plan_mode is offered only in plan mode: the worker's tools follow the mode.
  const planTool = exitPlanModeTool(permissions);
  // The worker's tools: the pod's own (with exit_plan_mode in plan mode), then those of the MCP servers that are up.
  const offeredTools = () => [...tools, ...(permissions.mode === "plan" ? [planTool] : []), ...mcp.tools()];
  permissions.onModeChange(() => worker?.setTools(offeredTools()));

  const input = new SubmitInput({
    view,
    reads,
    mcp,
    maxBytes: config.toolOutput.maxBytes,
    imageRefusal: () => model.imageRefusal(),
    planMode: () => permissions.mode === "plan",
    onUnattached: (ref, reason, code) => alerts.warn("file_ref", unattachedMessage(ref, reason, code), code),
  });
  const podInterceptor: Interceptor = {
    name: "pod",
    onPromptSubmit: () => input.onPromptSubmit(),
    beforeRequest: ({ request }) => {
      const extra = promptAdditions();
      if (!extra) return undefined;
      return {
        action: "continue",
        request: { ...request, system: request.system ? `${request.system}\n\n${extra}` : extra },
      };
    },
  };
  worker = new Worker({
    client: model.client,
    tools: offeredTools(),
    system:
      (options.system ?? defaultSystem(fs.cwd, tools, { write: fs.writeRoots, read: fs.readRoots })) +
      (options.appendSystem?.trim() ? `\n\n${options.appendSystem.trim()}` : "") +
      skillsPrompt(extensions.skills),
    settings: settingsFrom(config),
    maxTurns: config.worker.maxTurns,
    blobStore,
    contextPolicy: policy,
    interceptors: [
      podInterceptor,
      ...searchOffer(model.client),
      configuredHooks.interceptor(),
      ...(options.interceptors ?? []),
    ],
    hooks,
    toolTimeoutMs: config.worker.toolTimeoutMs,
    toolOutput: toolOutputLimits(config),
    bounds: workerBounds(config),
    history: source.history,
  });
  // The one recorder of worker events (worker-persistence); the pod only queues its writes.
  const records = new WorkerEventRecords({
    model: () => model.client.model,
    reason: (event) => (event.reason === "interceptor" && input.fromRef(event.item) ? "file_ref" : undefined),
  });
  worker.subscribe((event) => {
    // The first answer is arriving: the request is out, and the probe's process start no longer delays it.
    if (!sandbox.settled && ANSWER_EVENTS.has(event.type)) void sandbox.settle();
    if (event.type === "usage") {
      runs.lastUsage = event.usage;
      recordCost(event.usage, model.client.provider, model.client.model, model.catalog, "main");
    }
    const write = records.record(event);
    if (write) log.append(write);
    events.emit(event);
  });

  if (sandbox.current.notice !== undefined)
    alerts.warn("sandbox", sandbox.current.notice, "sandbox_unavailable");
  // In parallel with whatever the UI does next (started after this turn of the event loop, so a
  // caller that subscribes right after create sees every alert); the first input waits (mcpStartWaitMs).
  if (mcp.configured) setImmediate(() => mcp.start());
  setImmediate(() => {
    for (const problem of extensions.problems)
      alerts.warn(
        "extensions",
        `${problem.file}: ${problem.message}${problem.kept ? "" : "; it is skipped"}`,
      );
  });
  const sessionStart = configuredHooks.configured
    ? new Promise((resolve) => setImmediate(resolve)).then(() =>
        configuredHooks.sessionStart(source.writer ? "resume" : "startup"),
      )
    : undefined;

  return {
    id: source.id,
    config,
    fs,
    view,
    reads,
    alerts,
    events,
    log,
    sessions: base.sessions,
    blobStore,
    sandbox,
    extensions,
    model,
    policy,
    permissions,
    tools,
    hooks,
    mcp,
    lsp,
    subagents,
    subagentTools: () => [...subagentTools, ...mcp.tools()],
    commandEnv,
    worker,
    input,
    instructions,
    environment,
    todos,
    background,
    runs,
    sessionStart,
    agentProblems: [...base.agentProblems],
    mcpWaitMs: options.mcpStartWaitMs ?? 10_000,
  };
}
