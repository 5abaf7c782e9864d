/**
 * `query()`: one call to run the agent. It loads the config (`loadConfig`),
 * opens a Pod (`Pod.create`, or `Pod.restore` to resume, after
 * `forkSession` to fork), runs each user message and yields what the pod
 * tells its subscribers as stream-json events (the shapes `yoi -p --output
 * stream-json` prints), a `result` event after each message. Nothing here
 * opens a session another way than the CLI does.
 */
import { type Item, redactDeep } from "@yoi/llm-client";
import type { Hook, Interceptor, RunResult, Tool } from "@yoi/llm-worker";
import {
  type Config,
  type LoadedConfig,
  loadConfig,
  type PermissionMode,
  resolveModel,
  withModel,
} from "@yoi/manifest";
import { YoiError } from "@yoi/manifest/errors";
import { findSessionId } from "@yoi/worker-persistence";
import { sessionDataDir } from "../assembly/session-base.ts";
import { forkSession } from "../checkpoints/fork.ts";
import type { PodEvent } from "../events/pod-events.ts";
import {
  answerSources,
  type JsonSource,
  jsonUsage,
  lastText,
  type StreamJsonEvent,
  toStreamJson,
} from "../events/stream-json.ts";
import { createStreamTextRedaction } from "../events/stream-text-redaction.ts";
import type { Segment } from "../input/segments.ts";
import type { InProcessMcpServer } from "../mcp/mcp-connection.ts";
import { UsageLedger } from "../model/usage-ledger.ts";
import type { PermissionDecision, PermissionRequest } from "../permissions/policy.ts";
import { Pod } from "../pod.ts";
import type { PodOptions } from "../pod-options.ts";

/** One user message: text with `@path` refs, or segments. */
export type QueryMessage = string | readonly Segment[];

/** What `canUseTool` is told besides the tool and its input. */
export interface CanUseToolContext {
  /** The tool call's id. */
  callId: string;
  /** One line saying what the call does, e.g. `bash: npm test`. */
  summary: string;
  /** Why this call asks when that is not the plain default (no sandbox, a line the parser cannot read). */
  reason?: string;
  /** Aborted when the run is cancelled while the question is open. */
  signal: AbortSignal;
}

/** `canUseTool`'s answer: allow (optionally with changed input) or deny with a message for the model. */
export type ToolPermission =
  | { behavior: "allow"; updatedInput?: unknown }
  | { behavior: "deny"; message: string };

/**
 * Asked about each tool call the permission rules and mode leave open (in
 * the default mode: writes, bash, web fetches and MCP tools; reads are
 * allowed without asking). A thrown error or a rejected promise denies.
 */
export type CanUseTool = (
  tool: string,
  input: unknown,
  context: CanUseToolContext,
) => ToolPermission | Promise<ToolPermission>;

export interface QueryOptions {
  /** The user's message, or an async iterable of messages run one after another in the same session. */
  prompt: QueryMessage | AsyncIterable<QueryMessage>;
  /** The project directory (config, scope root, `@path` refs). Default `process.cwd()`. */
  cwd?: string;
  /** `"<provider>/<model>"` or a bare model name the catalog knows. Default: the config's `model`. */
  model?: string;
  /** Permission mode to start in. Default: the config's `permissions.mode`. */
  permissionMode?: PermissionMode;
  /** Decides the calls that would ask a user. Without it they are denied (no one can approve them). */
  canUseTool?: CanUseTool;
  /** More tools (`defineTool` from `@yoi/llm-worker`, input schemas in zod), after the built-ins. */
  tools?: readonly Tool[];
  /** MCP servers in this process (an `McpServer` of `@modelcontextprotocol/sdk`), by name. */
  mcpServers?: Readonly<Record<string, InProcessMcpServer>>;
  /** Read-only hooks: observe prompts and tool calls, deny or abort them. */
  hooks?: readonly Hook[];
  /** Full-power interceptors (see `@yoi/llm-worker`), run before the hooks. */
  interceptors?: readonly Interceptor[];
  /** Continue this session (an id or a unique prefix of one). */
  resume?: string;
  /** With `resume`: continue in a new session that starts as a copy of it (the original stays as it was). */
  forkSession?: boolean;
  /** Cancels the run in progress (its result is `cancelled`) and reads no more messages. */
  signal?: AbortSignal;
  /** The config to use instead of loading `.yoi/config.jsonc` files from `cwd` and home. */
  config?: Config;
  /**
   * Whether the project's `.yoi/config.jsonc` may set what widens yoi's
   * reach (providers, scope, session, MCP servers, hooks, permissive
   * rules). Default false: an embedding application opts in.
   */
  trustProject?: boolean;
  /** Environment for API keys, base URLs and config variables. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where sessions and blobs live. Default: the config's `session.dir`, else `~/.yoi`. */
  dataDir?: string;
  /** Any other option of `Pod.create` (sandbox, bash, system prompt, ...). */
  pod?: Omit<PodOptions, QueryOwned>;
}

/** The Pod options `query()` sets from its own. */
type QueryOwned =
  | "config"
  | "cwd"
  | "env"
  | "dataDir"
  | "ask"
  | "tools"
  | "hooks"
  | "interceptors"
  | "mcpServers"
  | "permissionMode"
  | "sessionId";

export type QueryErrorCode = "invalid_options";

/** Options `query()` cannot run with; the message says which and what to pass. */
export class QueryError extends YoiError<QueryErrorCode> {
  override readonly name = "QueryError";
  static override readonly marker: symbol = Symbol.for("yoi.error.QueryError");
}

/**
 * Runs the agent: yields a `session` event, then the events of each
 * message's run, each run ending with a `result` event (status, text,
 * usage, `cost_usd`, session id). Options that cannot work throw
 * `QueryError` before anything starts; a config, model or session that
 * cannot be opened throws its own error (`ConfigError`, `SessionLogError`).
 * Breaking out of the loop cancels the run and closes the session.
 */
export async function* query(options: QueryOptions): AsyncGenerator<StreamJsonEvent, void, undefined> {
  checkOptions(options);
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  let loaded: Pick<LoadedConfig, "config" | "sources"> =
    options.config !== undefined
      ? { config: options.config, sources: {} }
      : await loadConfig({ cwd, env, trust: options.trustProject ?? false });
  if (options.model !== undefined)
    loaded = withModel(loaded, { ref: options.model, env, source: "query:model" });
  const { config } = loaded;
  const resolved = resolveModel(config);
  const podOptions: PodOptions = {
    ...options.pod,
    config,
    cwd,
    env,
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.canUseTool !== undefined ? { ask: askWith(options.canUseTool) } : {}),
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
    ...(options.hooks !== undefined ? { hooks: options.hooks } : {}),
    ...(options.interceptors !== undefined ? { interceptors: options.interceptors } : {}),
    ...(options.mcpServers !== undefined ? { mcpServers: options.mcpServers } : {}),
    ...(options.permissionMode !== undefined ? { permissionMode: options.permissionMode } : {}),
  };
  const pod = await openPod(options, podOptions);
  const window =
    options.pod?.contextWindow ?? resolved.info?.maxInputTokens ?? resolved.info?.contextWindow ?? 0;
  const model = `${resolved.providerName}/${resolved.model}`;
  // Each run's tokens and dollars by the model that served them (a subagent's by its own).
  let ledger = new UsageLedger(() => config);
  const queue = new EventQueue();
  let assistant: Item[] = [];
  // A key split over several deltas is masked too, as in the CLI's stream-json.
  const redactStreamed = createStreamTextRedaction();
  const unsubscribe = pod.subscribe((event: PodEvent) => {
    if (event.type === "item_committed" && event.reason === "assistant") assistant.push(event.item);
    ledger.record(event, () => model);
    for (const shown of redactStreamed(event)) {
      const line = toStreamJson(shown, window);
      if (line !== undefined) queue.push(line);
    }
  });
  try {
    yield redactDeep({
      type: "session",
      session_id: pod.id,
      model: resolved.model,
      provider: resolved.providerName,
      cwd: pod.fs.cwd,
      resumed: options.resume !== undefined,
    } satisfies StreamJsonEvent);
    // What reading a resumed session's log found (damaged records skipped), said before its runs.
    for (const alert of pod.alerts.recentAlerts())
      if (alert.source === "session_log")
        yield { type: "alert", level: alert.level, source: alert.source, message: alert.message };
    for await (const message of messages(options.prompt)) {
      if (options.signal?.aborted) break;
      assistant = [];
      ledger = new UsageLedger(() => config);
      const started = Date.now();
      const run = pod.run(message, options.signal ? { signal: options.signal } : {});
      run.then(
        () => queue.close(),
        () => queue.close(),
      );
      for (;;) {
        const next = await queue.next();
        if (next === undefined) break;
        yield redactDeep(next);
      }
      queue.reopen();
      const result = await run;
      yield redactDeep(
        resultEvent(
          pod.id,
          result,
          lastText(assistant),
          answerSources(assistant),
          ledger,
          Date.now() - started,
        ),
      );
      if (result.status === "failed" && result.error?.code === "storage") break;
    }
  } finally {
    unsubscribe();
    await pod.close();
  }
}

function checkOptions(options: QueryOptions): void {
  const bad = (message: string) => {
    throw new QueryError("invalid_options", message);
  };
  if (typeof options !== "object" || options === null) bad("query(options): pass an object with a prompt");
  const { prompt } = options;
  const iterable = typeof prompt === "object" && prompt !== null && Symbol.asyncIterator in prompt;
  if (typeof prompt === "string" ? prompt.trim() === "" : !iterable && !Array.isArray(prompt))
    bad("query: prompt must be a non-empty string, segments, or an async iterable of messages");
  if (options.canUseTool !== undefined && typeof options.canUseTool !== "function")
    bad("query: canUseTool must be a function (tool, input, context) => { behavior: 'allow' | 'deny', ... }");
  if (options.forkSession && options.resume === undefined)
    bad("query: forkSession needs resume (the id of the session to fork)");
  if (options.resume !== undefined && (typeof options.resume !== "string" || options.resume.trim() === ""))
    bad("query: resume must be a session id (or a unique prefix of one)");
  for (const [name, server] of Object.entries(options.mcpServers ?? {}))
    if (typeof (server as { connect?: unknown } | null)?.connect !== "function")
      bad(`query: mcpServers.${name} must be an McpServer of @modelcontextprotocol/sdk`);
}

/** A new pod, or the resumed (or forked) session. */
async function openPod(options: QueryOptions, podOptions: PodOptions): Promise<Pod> {
  if (options.resume === undefined) return Pod.create(podOptions);
  const dir = sessionDataDir(podOptions);
  let id = await findSessionId({ dir, prefix: options.resume });
  if (options.forkSession) id = (await forkSession({ dataDir: dir, parent: id })).id;
  return Pod.restore(id, podOptions);
}

/** The prompt as a sequence of messages. */
async function* messages(prompt: QueryOptions["prompt"]): AsyncGenerator<QueryMessage> {
  if (typeof prompt === "string" || Array.isArray(prompt)) {
    yield prompt as QueryMessage;
    return;
  }
  yield* prompt as AsyncIterable<QueryMessage>;
}

/** `canUseTool` as the pod's permission prompt. */
function askWith(canUseTool: CanUseTool): (request: PermissionRequest) => Promise<PermissionDecision> {
  return async (request) => {
    const answer = await canUseTool(request.tool, request.args, {
      callId: request.callId,
      summary: request.summary,
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      signal: request.signal,
    });
    if (answer?.behavior === "allow")
      return answer.updatedInput === undefined ? "allow" : { action: "allow", args: answer.updatedInput };
    if (answer?.behavior === "deny")
      return { action: "deny", reason: typeof answer.message === "string" ? answer.message : "denied" };
    // Anything else is not an answer: deny rather than guess.
    return "deny";
  };
}

function resultEvent(
  sessionId: string,
  result: RunResult,
  text: string,
  sources: JsonSource[],
  ledger: UsageLedger,
  durationMs: number,
): StreamJsonEvent {
  return {
    type: "result",
    status: result.status,
    session_id: sessionId,
    text,
    turns: result.turns,
    usage: jsonUsage(result.usage),
    cost_usd: ledger.totalUsd() ?? null,
    models: ledger.json(),
    duration_ms: durationMs,
    ...(sources.length > 0 ? { citations: sources } : {}),
    ...(result.error ? { error: { code: result.error.code, message: result.error.message } } : {}),
  };
}

/** Events from the subscriber to the generator: pushed as they come, taken in order, closed when a run ends. */
class EventQueue {
  #items: StreamJsonEvent[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  push(event: StreamJsonEvent): void {
    this.#items.push(event);
    this.#notify();
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  reopen(): void {
    this.#closed = false;
  }

  /** The next event, or undefined once the queue is closed and empty. */
  async next(): Promise<StreamJsonEvent | undefined> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) return item;
      if (this.#closed) return undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
