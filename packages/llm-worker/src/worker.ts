/**
 * The Worker: owns the history, the tools and the client, and runs the
 * model/tool loop (see README for the full contract).
 */
import type {
  Item,
  LlmClient,
  Request,
  RequestSettings,
  StopReason,
  ToolResultItem,
  ToolSpec,
  Usage,
} from "@yoi/llm-client";
import {
  INLINE_THRESHOLD_BYTES,
  SUMMARY_HEAD_LINES,
  SUMMARY_MAX_BYTES,
  SUMMARY_TAIL_LINES,
  TOOL_OUTPUT_MAX_BYTES,
  TOOLS_WARN_BYTES,
  TOOLS_WARN_COUNT,
  WORKER_DEFAULTS,
} from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { v7 as uuidv7 } from "uuid";
import { type BlobStore, BlobStoreError } from "./blob-store.ts";
import type { ContextCheckpoint, ContextPolicy, ContextState } from "./context-policy.ts";
import { eventIterator } from "./event-stream.ts";
import type {
  CommitReason,
  HistoryReplaceReason,
  RunStatus,
  WorkerError,
  WorkerEvent,
  WorkerEventListener,
} from "./events.ts";
import { needsAnswer, type PendingCall, pendingToolCalls } from "./history-scan.ts";
import { hookAsInterceptor } from "./hook.ts";
import { createInspectTool, INSPECT_TOOL_NAME } from "./inspect-tool.ts";
import type { Interceptor, TurnEndAction } from "./interceptor.ts";
import { ModelCaller, type ModelCallOutcome, type ResponseLimits } from "./model-call.ts";
import type { RunOptions, RunResult, WorkerOptions } from "./options.ts";
import type { OutputLimits } from "./output-processing.ts";
import { inAgentSpan } from "./telemetry.ts";
import { type Tool, toolSpec } from "./tool.ts";
import { type BatchCall, interruptedText, startBatch } from "./tool-batch.ts";
import { sumUsage } from "./usage.ts";

/** Per-run bookkeeping. */
interface RunContext {
  readonly runId: string;
  readonly signal: AbortSignal;
  turns: number;
  usage: Usage;
  /**
   * History length before this run's submission; set until the first model
   * output is committed, so a turn cancelled before any output is rolled back.
   */
  rollbackMark: number | undefined;
  /** The last response was paused by the provider (`pause_turn`): the next request goes on from it. */
  continuePaused?: boolean;
}

/** The batch a pause left pending, so resume keeps its identity. */
interface PendingBatch {
  batchId: string;
  turnIndex: number;
}

export class Worker {
  readonly #client: LlmClient;
  #tools: ReadonlyMap<string, Tool>;
  #specs: ToolSpec[];
  readonly #system: string | undefined;
  readonly #settings: RequestSettings;
  readonly #maxTurns: number;
  readonly #blobStore: BlobStore | undefined;
  readonly #policy: ContextPolicy | undefined;
  readonly #interceptors: readonly Interceptor[];
  readonly #limits: OutputLimits;
  readonly #toolTimeoutMs: number;
  readonly #responseLimits: ResponseLimits;
  readonly #maxToolCalls: number;
  readonly #toolConcurrency: number;
  /** Whether the offered tools were already found over the warning budget (said once per tool list). */
  #toolsWarned = false;
  readonly #caller = new ModelCaller();
  readonly #listeners = new Set<WorkerEventListener>();
  #history: Item[];
  #running = false;
  #pendingBatch: PendingBatch | undefined;
  #pauseReason: string | undefined;
  #lastUsage: Usage | undefined;
  /** Argument errors found while assembling the pending batch's calls (callId -> message). */
  #argumentErrors = new Map<string, string>();
  /** Calls of the pending batch past `maxToolCallsPerResponse` (callId -> message). */
  #refused = new Map<string, string>();

  constructor(options: WorkerOptions) {
    if (!options?.client)
      throw new TypeError("Worker: `client` is required (an LlmClient from @yoi/llm-client createClient).");
    this.#client = options.client;
    this.#system = options.system;
    this.#settings = { maxTokens: WORKER_DEFAULTS.maxTokens, ...options.settings };
    this.#maxTurns = positive("maxTurns", options.maxTurns ?? WORKER_DEFAULTS.maxTurns);
    this.#blobStore = options.blobStore;
    this.#policy = options.contextPolicy;
    this.#interceptors = [...(options.interceptors ?? []), ...(options.hooks ?? []).map(hookAsInterceptor)];
    const out = options.toolOutput ?? {};
    this.#limits = {
      inlineThresholdBytes: positive(
        "toolOutput.inlineThresholdBytes",
        out.inlineThresholdBytes ?? INLINE_THRESHOLD_BYTES,
      ),
      summaryMaxBytes: positive("toolOutput.summaryMaxBytes", out.summaryMaxBytes ?? SUMMARY_MAX_BYTES),
      summaryHeadLines: out.summaryHeadLines ?? SUMMARY_HEAD_LINES,
      summaryTailLines: out.summaryTailLines ?? SUMMARY_TAIL_LINES,
      maxBytes: positive("toolOutput.maxBytes", out.maxBytes ?? TOOL_OUTPUT_MAX_BYTES),
      maxBytesWithoutStore:
        out.maxBytesWithoutStore === undefined
          ? undefined
          : positive("toolOutput.maxBytesWithoutStore", out.maxBytesWithoutStore),
    };
    this.#toolTimeoutMs = positive("toolTimeoutMs", options.toolTimeoutMs ?? WORKER_DEFAULTS.toolTimeoutMs);
    const bounds = options.bounds ?? {};
    this.#responseLimits = {
      maxResponseBytes: positive(
        "bounds.maxResponseBytes",
        bounds.maxResponseBytes ?? WORKER_DEFAULTS.maxResponseBytes,
      ),
      maxToolArgumentBytes: positive(
        "bounds.maxToolArgumentBytes",
        bounds.maxToolArgumentBytes ?? WORKER_DEFAULTS.maxToolArgumentBytes,
      ),
    };
    this.#maxToolCalls = positive(
      "bounds.maxToolCallsPerResponse",
      bounds.maxToolCallsPerResponse ?? WORKER_DEFAULTS.maxToolCallsPerResponse,
    );
    this.#toolConcurrency = positive(
      "bounds.toolConcurrency",
      bounds.toolConcurrency ?? WORKER_DEFAULTS.toolConcurrency,
    );

    const { tools, specs } = this.#toolTable(options.tools ?? []);
    this.#tools = tools;
    this.#specs = specs;
    this.#history = options.history ? [...options.history] : [];
  }

  /** The history (a live read-only view; copy it to keep a snapshot). */
  get history(): readonly Item[] {
    return this.#history;
  }

  /** Whether a run or resume is in progress. */
  get running(): boolean {
    return this.#running;
  }

  /** Why the last run paused, while it stays paused. */
  get pausedReason(): string | undefined {
    return this.#pauseReason;
  }

  /** The tools the model sees (inspect included when there is a BlobStore). */
  get tools(): readonly Tool[] {
    return [...this.#tools.values()];
  }

  /**
   * Replaces the tools (tools that come and go: MCP servers that start late
   * or change their list). The next model request sends the new list; a
   * batch already started keeps the tools it began with. Throws, changing
   * nothing, on a duplicate or invalid name.
   */
  setTools(tools: readonly Tool[]): void {
    const table = this.#toolTable(tools);
    this.#tools = table.tools;
    this.#specs = table.specs;
    this.#toolsWarned = false;
  }

  #toolTable(given: readonly Tool[]): { tools: Map<string, Tool>; specs: ToolSpec[] } {
    const tools = new Map<string, Tool>();
    const all = [...given];
    if (this.#blobStore && !all.some((t) => t.name === INSPECT_TOOL_NAME)) {
      all.push(createInspectTool(this.#blobStore, { maxOutputBytes: this.#limits.maxBytes }));
    }
    for (const tool of all) {
      if (tools.has(tool.name))
        throw new TypeError(`Worker: two tools are named "${tool.name}"; tool names must be unique.`);
      tools.set(tool.name, tool);
    }
    // JSON Schema generation is not free: once per tool list, not per request.
    return { tools, specs: all.map(toolSpec) };
  }

  /** Subscribes to events; returns the unsubscribe function. Listeners are called synchronously, in order. */
  subscribe(listener: WorkerEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Events as an async iterator, until `signal` aborts or the iterator is closed. */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<WorkerEvent> {
    return eventIterator((listener) => this.subscribe(listener), options.signal);
  }

  /**
   * Replaces the whole history (e.g. a manual compaction) while no run is in
   * progress. During a run, history changes go through the ContextPolicy.
   */
  replaceHistory(
    items: readonly Item[],
    reason: HistoryReplaceReason = "external",
    detail?: Record<string, unknown>,
  ): void {
    if (this.#running) {
      throw new Error(
        "Worker.replaceHistory: a run is in progress; replace history from a ContextPolicy or after the run ends.",
      );
    }
    this.#replace([...items], reason, detail);
    this.#pendingBatch = undefined;
  }

  /**
   * Submits input (a string becomes a user message) and runs the loop until
   * the model ends its turn, `maxTurns` is reached, the run is cancelled
   * (`signal`, an interceptor) or paused. Never rejects for model or tool
   * failures: they end the run with status `failed`.
   */
  async run(input: string | Item | readonly Item[], options: RunOptions = {}): Promise<RunResult> {
    const items = normalizeInput(input);
    const ctx = this.#begin(options);
    return inAgentSpan(this.#client, ctx.runId, "run", options.agent, () => this.#run(ctx, items));
  }

  async #run(ctx: RunContext, items: Item[]): Promise<RunResult> {
    try {
      this.#emit({ type: "run_start", runId: ctx.runId, mode: "run", input: items });
      const extras: Item[] = [];
      for (const interceptor of this.#interceptors) {
        const action = await interceptor.onPromptSubmit?.({
          input: items,
          history: this.#history,
          signal: ctx.signal,
        });
        if (!action || action.action === "continue") continue;
        if (action.action === "cancel") return this.#finish(ctx, "cancelled", { reason: action.reason });
        extras.push(...action.items);
      }
      if (ctx.signal.aborted) return this.#finish(ctx, "cancelled", { reason: abortReason(ctx.signal) });
      // A pause or crash may have left calls without results; the new prompt supersedes them.
      this.#closePending("it was superseded by a new message before it ran");
      this.#pauseReason = undefined;
      ctx.rollbackMark = this.#history.length;
      for (const item of items) this.#commit(item, "user");
      for (const item of extras) this.#commit(item, "interceptor");
      return await this.#loop(ctx);
    } catch (error) {
      return this.#crash(ctx, error);
    } finally {
      this.#running = false;
    }
  }

  /**
   * Continues without a new user message: pending tool calls (left by a
   * pause, a crash or loaded history) run first, then the model is called if
   * the history ends with input to it. After a failed run, this retries.
   */
  async resume(options: RunOptions = {}): Promise<RunResult> {
    const ctx = this.#begin(options);
    return inAgentSpan(this.#client, ctx.runId, "resume", options.agent, () => this.#resume(ctx));
  }

  async #resume(ctx: RunContext): Promise<RunResult> {
    try {
      this.#emit({ type: "run_start", runId: ctx.runId, mode: "resume", input: [] });
      this.#pauseReason = undefined;
      return await this.#loop(ctx);
    } catch (error) {
      return this.#crash(ctx, error);
    } finally {
      this.#running = false;
    }
  }

  #begin(options: RunOptions): RunContext {
    if (this.#running)
      throw new Error(
        "Worker: a run is already in progress; await it (or cancel it) before starting another.",
      );
    this.#running = true;
    return {
      runId: uuidv7(),
      signal: options.signal ?? new AbortController().signal,
      turns: 0,
      usage: {},
      rollbackMark: undefined,
    };
  }

  async #loop(ctx: RunContext): Promise<RunResult> {
    for (;;) {
      const pending = pendingToolCalls(this.#history);
      if (pending.length > 0) {
        const batch = await this.#runBatch(ctx, pending);
        if (batch.kind === "paused")
          return this.#finish(ctx, "paused", batch.reason === undefined ? {} : { reason: batch.reason });
        if (batch.kind === "aborted") return this.#finish(ctx, "cancelled", { reason: batch.reason });
        if (ctx.signal.aborted) return this.#finish(ctx, "cancelled", { reason: abortReason(ctx.signal) });
        await this.#checkpoint(ctx, "after_tools");
      } else if (!ctx.continuePaused && !needsAnswer(this.#history)) {
        // Nothing to do (e.g. resume after the model had ended its turn).
        return this.#finish(ctx, "completed");
      }
      if (ctx.signal.aborted) return this.#finish(ctx, "cancelled", { reason: abortReason(ctx.signal) });
      if (ctx.turns >= this.#maxTurns)
        return this.#finish(ctx, "max_turns", { reason: `reached maxTurns (${this.#maxTurns})` });

      const turnIndex = ctx.turns;
      const outcome = await this.#callModel(ctx, turnIndex);
      ctx.continuePaused = false;
      if (outcome.kind === "request_cancelled") {
        // Nothing was sent: like a cancelled prompt, the submission leaves no trace.
        if (ctx.rollbackMark !== undefined) this.#rollback(ctx.rollbackMark);
        return this.#finish(ctx, "cancelled", { reason: outcome.reason });
      }
      ctx.turns++;
      if (outcome.usage) {
        this.#lastUsage = outcome.usage;
        ctx.usage = sumUsage(ctx.usage, outcome.usage);
        this.#emit({ type: "usage", turnIndex, usage: outcome.usage, total: ctx.usage });
      }
      if (outcome.kind === "cancelled") {
        if (!outcome.hadOutput && ctx.rollbackMark !== undefined) {
          this.#rollback(ctx.rollbackMark);
        } else {
          for (const item of outcome.partial) this.#commit(item, "assistant");
        }
        return this.#finish(ctx, "cancelled", { reason: abortReason(ctx.signal) });
      }
      if (outcome.kind === "failed") return this.#finish(ctx, "failed", { error: outcome.error });

      ctx.rollbackMark = undefined;
      const refused = this.#refuseExtraCalls(outcome.items, outcome.toolCalls.length);
      for (const item of outcome.items) this.#commit(item, "assistant");
      if (outcome.droppedCalls > 0) {
        this.#emit({
          type: "error",
          fatal: false,
          error: {
            code: "incomplete_stream",
            message: `${outcome.droppedCalls} tool call(s) were cut off mid-stream and were not run.`,
            retryable: false,
          },
        });
      }
      this.#emit({
        type: "turn_end",
        turnIndex,
        stopReason: outcome.stopReason,
        toolCalls: outcome.toolCalls.length,
      });
      await this.#checkpoint(ctx, "after_model_call");

      if (outcome.toolCalls.length > 0) {
        this.#pendingBatch = { batchId: uuidv7(), turnIndex };
        this.#argumentErrors = outcome.argumentErrors;
        this.#refused = refused;
        continue;
      }
      // The provider paused its own tool loop (a long web search): the paused response goes back as it is.
      if (outcome.stopReason === "pause_turn") {
        ctx.continuePaused = true;
        continue;
      }
      const action = await this.#turnEnd(ctx, turnIndex, outcome.stopReason, outcome.items);
      if (action.action === "finish") return this.#finish(ctx, "completed");
      if (action.action === "pause")
        return this.#finish(ctx, "paused", action.reason === undefined ? {} : { reason: action.reason });
      for (const item of action.items) this.#commit(item, "interceptor");
    }
  }

  async #turnEnd(
    ctx: RunContext,
    turnIndex: number,
    stopReason: StopReason | undefined,
    items: readonly Item[],
  ): Promise<TurnEndAction> {
    const info = { turnIndex, stopReason, items, history: this.#history, signal: ctx.signal };
    for (const interceptor of this.#interceptors) {
      const action = await interceptor.onTurnEnd?.(info);
      if (action && action.action !== "finish") return action;
    }
    return { action: "finish" };
  }

  async #callModel(
    ctx: RunContext,
    turnIndex: number,
  ): Promise<ModelCallOutcome | { kind: "request_cancelled"; reason: string; usage?: undefined }> {
    let attempt = 1;
    let overflowRetried = false;
    let usage: Usage | undefined;
    for (;;) {
      if (this.#policy?.checkRequest) {
        try {
          await this.#policy.checkRequest(this.#state(ctx));
        } catch (error) {
          // Nothing was sent; the run fails with what the policy needs fixed.
          const failure: WorkerError = {
            code: "context_policy",
            message: errorMessage(error),
            retryable: false,
          };
          return { kind: "failed", error: failure, midStream: false, usage };
        }
      }
      let request: Request = this.#buildRequest();
      for (const interceptor of this.#interceptors) {
        const action = await interceptor.beforeRequest?.({
          request,
          turnIndex,
          history: this.#history,
          signal: ctx.signal,
        });
        if (action?.action === "cancel") return { kind: "request_cancelled", reason: action.reason };
        if (action?.request) request = action.request;
      }
      this.#emit({
        type: "request_start",
        runId: ctx.runId,
        turnIndex,
        attempt,
        itemCount: request.items.length,
      });
      const outcome = await this.#caller.call({
        client: this.#client,
        request,
        signal: ctx.signal,
        limits: this.#responseLimits,
        turnIndex,
        emit: (event) => this.#emit(event),
        attempt,
      });
      if (outcome.usage) usage = sumUsage(usage ?? {}, outcome.usage);
      if (outcome.kind !== "failed") return { ...outcome, usage };
      const error = outcome.error;
      if (error.code === "context_overflow") {
        if (!overflowRetried && this.#policy?.onContextOverflow) {
          this.#emit({ type: "error", error, fatal: false });
          const replacement = await this.#policy.onContextOverflow(this.#state(ctx));
          if (replacement) {
            this.#replace(replacement.history, replacement.reason, replacement.detail);
            overflowRetried = true;
            attempt++;
            this.#emit({
              type: "retry",
              source: "context_overflow",
              attempt,
              delayMs: 0,
              reason: error.message,
              code: error.code,
              discarded: false,
            });
            continue;
          }
        }
        const fatal: WorkerError = {
          ...error,
          message: overflowRetried
            ? `The conversation is still too long for the model's context window after the context policy shrank it: ${error.message}`
            : this.#policy?.onContextOverflow
              ? `The conversation is too long for the model's context window and the context policy could not shrink it: ${error.message}`
              : `The conversation is too long for the model's context window (no context policy is configured to compact it): ${error.message}`,
        };
        return { kind: "failed", error: fatal, midStream: outcome.midStream, usage };
      }
      return { ...outcome, usage };
    }
  }

  /**
   * The calls of a response past `maxToolCallsPerResponse`: each gets an
   * error result saying so (the model can call again what it still needs),
   * and its arguments are not kept (history and the log stay small).
   */
  #refuseExtraCalls(items: Item[], count: number): Map<string, string> {
    const refused = new Map<string, string>();
    if (count <= this.#maxToolCalls) return refused;
    const message =
      `Not run: this response made ${count} tool calls and at most ${this.#maxToolCalls} run per response ` +
      "(worker.maxToolCallsPerResponse). Make the calls you still need in a later response, fewer at a time.";
    let seen = 0;
    for (const [i, item] of items.entries()) {
      if (item.type !== "tool_call") continue;
      seen++;
      if (seen <= this.#maxToolCalls) continue;
      refused.set(item.callId, message);
      items[i] = { ...item, arguments: "{}" };
    }
    this.#emit({
      type: "warning",
      warning: {
        code: "tool_calls_over_limit",
        message: `The model made ${count} tool calls in one response; the first ${this.#maxToolCalls} run, the other ${count - this.#maxToolCalls} were answered with an error (worker.maxToolCallsPerResponse).`,
      },
    });
    return refused;
  }

  /** Says once per tool list when the tools sent with every request are more than a model handles well. */
  #warnAboutTools(): void {
    if (this.#toolsWarned) return;
    this.#toolsWarned = true;
    const count = this.#specs.length;
    const bytes = Buffer.byteLength(JSON.stringify(this.#specs), "utf8");
    if (count <= TOOLS_WARN_COUNT && bytes <= TOOLS_WARN_BYTES) return;
    this.#emit({
      type: "warning",
      warning: {
        code: "tools_over_budget",
        message: `${count} tools (${Math.round(bytes / 1024)} KB of definitions) are sent with every request, more than the ${TOOLS_WARN_COUNT} tools or ${TOOLS_WARN_BYTES / 1024} KB a model handles well; turn off MCP servers or tools this session does not need.`,
      },
    });
  }

  #buildRequest(): Request {
    this.#warnAboutTools();
    const request: Request = { items: this.#history.slice(), settings: this.#settings };
    if (this.#system !== undefined) request.system = this.#system;
    if (this.#specs.length > 0) request.tools = this.#specs;
    return request;
  }

  async #runBatch(
    ctx: RunContext,
    pending: PendingCall[],
  ): Promise<
    { kind: "done" } | { kind: "paused"; reason: string | undefined } | { kind: "aborted"; reason: string }
  > {
    const first = pending[0]!;
    const batch = this.#pendingBatch ?? { batchId: uuidv7(), turnIndex: ctx.turns };
    this.#pendingBatch = batch;
    const argumentErrors = this.#argumentErrors;
    const calls: BatchCall[] = pending.map((p) => ({ item: p.item, callIndex: p.callIndex }));
    const started = await startBatch({
      calls,
      batchId: batch.batchId,
      batchSize: first.batchSize,
      turnIndex: batch.turnIndex,
      tools: this.#tools,
      interceptors: this.#interceptors,
      signal: ctx.signal,
      limits: this.#limits,
      toolTimeoutMs: this.#toolTimeoutMs,
      blobStore: this.#blobStore,
      argumentErrors,
      refused: this.#refused,
      concurrency: this.#toolConcurrency,
      ...(this.#policy?.prepareToolResult
        ? { prepare: (result, full) => this.#prepareResult(ctx, result, full) }
        : {}),
      emit: (event) => this.#emit(event),
    });
    if (started.kind === "paused") {
      this.#pauseReason = started.reason ?? "paused before a tool call";
      return { kind: "paused", reason: started.reason };
    }
    // A result rejects only when a store cannot write, which ends the run at the first one awaited; the others are
    // marked handled here, so none is an unhandled rejection.
    for (const promise of started.results) promise.catch(() => {});
    // Commit in call order, each as soon as it and all before it are done.
    for (const promise of started.results) {
      const { result, outcome } = await promise;
      // Results the worker made up (the call never ran to an end) are logged as synthetic.
      this.#commit(result, outcome === "interrupted" || outcome === "aborted" ? "synthetic" : "tool_result");
    }
    this.#pendingBatch = undefined;
    this.#argumentErrors = new Map();
    this.#refused = new Map();
    if (started.abortReason !== undefined) return { kind: "aborted", reason: started.abortReason };
    return { kind: "done" };
  }

  /** The context policy's view of a tool result; on failure the result stays as it was and the error is reported. */
  async #prepareResult(ctx: RunContext, result: ToolResultItem, full: string): Promise<ToolResultItem> {
    try {
      return { ...(await this.#policy!.prepareToolResult!(result, full, this.#state(ctx))) };
    } catch (error) {
      this.#emit({
        type: "error",
        fatal: false,
        error: {
          code: "context_policy",
          message: `prepareToolResult failed: ${errorMessage(error)}`,
          retryable: false,
        },
      });
      return result;
    }
  }

  async #checkpoint(ctx: RunContext, point: ContextCheckpoint): Promise<void> {
    if (!this.#policy?.checkpoint) return;
    try {
      const replacement = await this.#policy.checkpoint(point, this.#state(ctx));
      if (replacement) this.#replace(replacement.history, replacement.reason, replacement.detail);
    } catch (error) {
      if (ctx.signal.aborted) return;
      // Context management failing must not lose the conversation; the next checkpoint tries again.
      this.#emit({
        type: "error",
        fatal: false,
        error: {
          code: "context_policy",
          message: `context policy checkpoint ${point} failed: ${errorMessage(error)}`,
          retryable: true,
        },
      });
    }
  }

  #state(ctx: RunContext): ContextState {
    return {
      history: this.#history,
      lastUsage: this.#lastUsage,
      client: this.#client,
      blobStore: this.#blobStore,
      signal: ctx.signal,
    };
  }

  /** Gives every tool call still without a result a synthetic one, so history stays valid. */
  #closePending(why: string): void {
    const pending = pendingToolCalls(this.#history);
    for (const p of pending) {
      this.#commit(
        {
          type: "tool_result",
          callId: p.item.callId,
          name: p.item.name,
          output: `Tool call ${p.item.name} was not run: ${why}.`,
          isError: true,
        },
        "synthetic",
      );
    }
    this.#pendingBatch = undefined;
    this.#argumentErrors = new Map();
    this.#refused = new Map();
  }

  #closeInterrupted(): void {
    for (const p of pendingToolCalls(this.#history)) {
      this.#commit(
        {
          type: "tool_result",
          callId: p.item.callId,
          name: p.item.name,
          output: interruptedText(p.item.name),
          isError: true,
        },
        "synthetic",
      );
    }
    this.#pendingBatch = undefined;
    this.#argumentErrors = new Map();
    this.#refused = new Map();
  }

  #commit(item: Item, reason: CommitReason): void {
    const index = this.#history.push(item) - 1;
    this.#emit({ type: "item_committed", item, index, reason });
  }

  #replace(items: Item[], reason: HistoryReplaceReason, detail?: Record<string, unknown>): void {
    if (!Array.isArray(items))
      throw new TypeError("Worker: a history replacement must be an array of Items.");
    this.#history = items;
    // A copy: the worker keeps appending to the array it adopted, and a listener may keep the event.
    this.#emit({ type: "history_replaced", items: items.slice(), reason, ...(detail ? { detail } : {}) });
  }

  #rollback(mark: number): void {
    const removed = this.#history.length - mark;
    if (removed <= 0) return;
    this.#replace(this.#history.slice(0, mark), "rollback", { removed });
  }

  async #finish(
    ctx: RunContext,
    status: RunStatus,
    extra: { reason?: string; error?: WorkerError } = {},
  ): Promise<RunResult> {
    if (status === "cancelled" || status === "failed") {
      // Every call gets a result before the next request, even if the run stopped between commit and tools.
      this.#closeInterrupted();
    } else {
      await this.#checkpoint(ctx, "before_return");
    }
    if (status === "paused") this.#pauseReason = extra.reason ?? this.#pauseReason ?? "paused";
    if (extra.error) this.#emit({ type: "error", error: extra.error, fatal: true });
    const result: RunResult = { status, turns: ctx.turns, usage: ctx.usage };
    if (extra.reason !== undefined) result.reason = extra.reason;
    if (extra.error !== undefined) result.error = extra.error;
    this.#emit({ type: "run_end", runId: ctx.runId, status, turns: ctx.turns, usage: ctx.usage, ...extra });
    return result;
  }

  /** A store that cannot write, a bug or a throwing interceptor/policy: the run fails, history stays valid. */
  #crash(ctx: RunContext, error: unknown): Promise<RunResult> {
    const err: WorkerError =
      BlobStoreError.isInstance(error) && error.code === "io"
        ? {
            code: "storage",
            message: `A tool's output could not be stored, so the run stopped: ${error.message}. Free disk space (or fix the store) and continue the session.`,
            retryable: false,
          }
        : { code: "internal", message: errorMessage(error), retryable: false };
    return this.#finish(ctx, "failed", { error: err });
  }

  #emit(event: WorkerEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break the run or the other listeners.
      }
    }
  }
}

function normalizeInput(input: string | Item | readonly Item[]): Item[] {
  if (typeof input === "string") {
    if (input === "")
      throw new TypeError("Worker.run: the input is empty; pass a non-empty string or Items.");
    return [{ type: "message", role: "user", content: [{ type: "text", text: input }] }];
  }
  const items = Array.isArray(input) ? [...(input as readonly Item[])] : [input as Item];
  if (items.length === 0)
    throw new TypeError(
      "Worker.run: no input items; pass a string, an Item or a non-empty Item[] (use resume() to continue without input).",
    );
  for (const item of items) {
    if (typeof item !== "object" || item === null || typeof (item as { type?: unknown }).type !== "string") {
      throw new TypeError(
        `Worker.run: ${JSON.stringify(item)} is not an Item (expected an object with a type).`,
      );
    }
  }
  return items;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`Worker: ${name} must be a positive number, got ${value}.`);
  return value;
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.name === "AbortError" ? "cancelled" : reason.message;
  return typeof reason === "string" ? reason : "cancelled";
}
