/**
 * Runs the tool calls of one assistant response
 * (docs/design/tool-execution.md#parallel-batches): interceptors decide per
 * call in the model's order, approved calls run in parallel with their
 * ToolExecutionContext, and results come back in call order. The worker holds
 * no scheduling policy; tools that must not overlap wait on each other
 * themselves.
 */
import { type Context, context } from "@opentelemetry/api";
import { activeContext, type ToolCallItem, type ToolResultItem } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import type * as z from "zod";
import { type BlobStore, BlobStoreError } from "./blob-store.ts";
import type { ToolCallEndEvent, ToolCallStartEvent, ToolOutputDeltaEvent } from "./events.ts";
import type { Interceptor, ToolCallInfo, ToolOutcome, ToolResultInfo } from "./interceptor.ts";
import { type OutputLimits, type ProcessedOutput, processToolReturn } from "./output-processing.ts";
import { startToolSpan } from "./telemetry.ts";
import { type Tool, ToolError, type ToolExecutionContext, type ToolReturn } from "./tool.ts";
import { isToolOutput } from "./tool-output.ts";
import { byteLength } from "./utf8.ts";

export interface BatchCall {
  item: ToolCallItem;
  callIndex: number;
}

export interface BatchOptions {
  calls: readonly BatchCall[];
  batchId: string;
  batchSize: number;
  turnIndex: number;
  tools: ReadonlyMap<string, Tool>;
  interceptors: readonly Interceptor[];
  signal: AbortSignal;
  limits: OutputLimits;
  toolTimeoutMs: number;
  blobStore: BlobStore | undefined;
  /** Calls whose arguments the model sent in a form that could not be used (callId -> error text). */
  argumentErrors?: ReadonlyMap<string, string>;
  /**
   * Calls past the response's bound on tool calls (callId -> error text):
   * answered with that error, never run and never put to the interceptors
   * (a permission question each would be a flood).
   */
  refused?: ReadonlyMap<string, string>;
  /** Most calls running at once; the others wait, in call order. Default: no limit. */
  concurrency?: number;
  /**
   * Turns a result into what enters history (the context policy's
   * `prepareToolResult`), as each call finishes and before its
   * `tool_call_end`, so the event reports what entered the context. Never
   * rejects (the worker reports a failure and keeps the result as it was).
   */
  prepare?(result: ToolResultItem, full: string): Promise<ToolResultItem>;
  emit(event: ToolCallStartEvent | ToolCallEndEvent | ToolOutputDeltaEvent): void;
}

export interface CallResult {
  call: BatchCall;
  info: ToolCallInfo;
  processed: ProcessedOutput;
  outcome: ToolOutcome;
  /** The item to commit: the processed output, prepared by the context policy. */
  result: ToolResultItem;
}

/**
 * `results` resolve in any order; the caller awaits them in call order to
 * commit. `paused`: nothing ran and nothing is to be committed.
 */
export type BatchStart =
  | { kind: "paused"; reason: string | undefined }
  | { kind: "running"; results: Promise<CallResult>[]; abortReason: string | undefined };

type Plan = { kind: "run" } | { kind: "fixed"; output: ToolReturn; isError: boolean; outcome: ToolOutcome };

export function callInfo(
  call: BatchCall,
  options: Pick<BatchOptions, "batchId" | "batchSize" | "turnIndex" | "signal">,
): ToolCallInfo {
  let args: unknown;
  try {
    args = JSON.parse(call.item.arguments === "" ? "{}" : call.item.arguments);
  } catch {
    args = undefined;
  }
  return {
    callId: call.item.callId,
    name: call.item.name,
    arguments: call.item.arguments,
    args,
    batchId: options.batchId,
    callIndex: call.callIndex,
    batchSize: options.batchSize,
    turnIndex: options.turnIndex,
    item: call.item,
    signal: options.signal,
  };
}

export async function startBatch(options: BatchOptions): Promise<BatchStart> {
  const infos = options.calls.map((call): ToolCallInfo => {
    const info = callInfo(call, options);
    return { ...info, precheck: () => precheck(options, options.tools.get(info.name), info) };
  });
  // Phase 1: decisions in call order, before anything runs (a Pause must leave nothing half done).
  const plans: Plan[] = [];
  let abortReason: string | undefined;
  for (const [index, model] of infos.entries()) {
    let info = model;
    const refusal = options.refused?.get(info.callId);
    if (refusal !== undefined) {
      plans.push({ kind: "fixed", output: refusal, isError: true, outcome: "skipped" });
      continue;
    }
    if (abortReason !== undefined) {
      plans.push({
        kind: "fixed",
        output: abortedText(info.name, abortReason),
        isError: true,
        outcome: "aborted",
      });
      continue;
    }
    // Arguments that could not be used at all (not a JSON object: a stream cut short, a string): the call
    // can only fail with that error, so it is not put to the interceptors (nobody is asked about it).
    if (options.argumentErrors?.has(info.callId)) {
      plans.push({ kind: "run" });
      continue;
    }
    let plan: Plan = { kind: "run" };
    for (const interceptor of options.interceptors) {
      const action = await interceptor.beforeToolCall?.(info);
      if (action?.action === "continue" && action.args !== undefined) {
        info = withArgs(info, action.args, options);
        infos[index] = info;
        continue;
      }
      if (!action || action.action === "continue") continue;
      if (action.action === "pause") return { kind: "paused", reason: action.reason };
      if (action.action === "skip")
        plan = { kind: "fixed", output: action.result, isError: true, outcome: "skipped" };
      else if (action.action === "synthetic_result")
        plan = { kind: "fixed", output: action.result, isError: false, outcome: "synthetic" };
      else {
        abortReason = action.reason;
        plan = {
          kind: "fixed",
          output: abortedText(info.name, action.reason),
          isError: true,
          outcome: "aborted",
        };
      }
      break;
    }
    plans.push(plan);
  }
  if (abortReason !== undefined) {
    // Nothing runs once the run is aborted, including calls approved before the abort.
    for (let i = 0; i < plans.length; i++) {
      if (plans[i]!.kind === "run") {
        plans[i] = {
          kind: "fixed",
          output: abortedText(infos[i]!.name, abortReason),
          isError: true,
          outcome: "aborted",
        };
      }
    }
  }
  // Phase 2: calls start in order, at most `concurrency` running at once (no EMFILE from a thousand reads).
  const slot = pool(options.concurrency ?? Number.POSITIVE_INFINITY);
  // Every call's span hangs under the run's, whichever call's end lets it start.
  const parent = activeContext();
  const results = infos.map((info, i) => {
    const plan = plans[i]!;
    const run = () => settle(options, options.calls[i]!, info, plan, parent);
    return plan.kind === "run" ? slot(run) : run();
  });
  return { kind: "running", results, abortReason };
}

/** A call with the arguments an interceptor gave it (the tool and its check see these). */
function withArgs(info: ToolCallInfo, args: unknown, options: BatchOptions): ToolCallInfo {
  const edited: ToolCallInfo = { ...info, args, arguments: JSON.stringify(args) };
  return { ...edited, precheck: () => precheck(options, options.tools.get(info.name), edited) };
}

/** The refusal of the tool's `check` for a call, if it has one and refuses (see `ToolCallInfo.precheck`). */
async function precheck(
  options: Pick<BatchOptions, "argumentErrors" | "signal">,
  tool: Tool | undefined,
  info: ToolCallInfo,
): Promise<string | undefined> {
  if (tool?.check === undefined || info.args === undefined || options.argumentErrors?.has(info.callId))
    return undefined;
  const parsed = await tool.inputSchema.safeParseAsync(info.args);
  if (!parsed.success) return undefined;
  try {
    await tool.check(parsed.data, { callId: info.callId, signal: options.signal });
    return undefined;
  } catch (error) {
    return ToolError.isInstance(error) ? error.message : undefined;
  }
}

/** Runs the functions given to it at most `max` at a time, in the order given. */
function pool(max: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return (fn) =>
    new Promise((resolve, reject) => {
      const start = () => {
        active++;
        fn()
          .then(resolve, reject)
          .finally(() => {
            active--;
            waiting.shift()?.();
          });
      };
      if (active < max) start();
      else waiting.push(start);
    });
}

function abortedText(name: string, reason: string): string {
  return `Tool call ${name} was not run: the run was aborted (${reason}).`;
}

/** Never rejects: every outcome becomes a result. */
async function settle(
  options: BatchOptions,
  call: BatchCall,
  info: ToolCallInfo,
  plan: Plan,
  parent: Context,
): Promise<CallResult> {
  const span = startToolSpan(info, options.batchSize, parent);
  try {
    // In the call's context: what the tool does (a subagent's run, its own spans) hangs under its span.
    const settled = await context.with(span.context, () => settleUnsafe(options, call, info, plan));
    span.end(settled.outcome, settled.result.isError, settled.result.output);
    return settled;
  } catch (error) {
    // A store that cannot write ends the run (the worker fails it with `storage`): nothing unrecorded goes on.
    if (BlobStoreError.isInstance(error)) {
      span.end("error", true, "");
      throw error;
    }
    // A failing interceptor must not leave the call without a result.
    const output = `Tool call ${info.name} failed in the worker: ${errorMessage(error)}`;
    const processed: ProcessedOutput = { output, isError: true, full: output };
    span.end("error", true, output);
    return { call, info, processed, outcome: "error", result: resultItem(info, processed) };
  }
}

async function settleUnsafe(
  options: BatchOptions,
  call: BatchCall,
  info: ToolCallInfo,
  plan: Plan,
): Promise<CallResult> {
  const startedAt = Date.now();
  const started = performance.now();
  options.emit({
    type: "tool_call_start",
    callId: info.callId,
    name: info.name,
    args: info.args,
    batchId: info.batchId,
    callIndex: info.callIndex,
    turnIndex: info.turnIndex,
    startedAt,
  });
  const tool = options.tools.get(info.name);
  let returned: ToolReturn;
  let isError: boolean;
  let outcome: ToolOutcome;
  if (plan.kind === "fixed") {
    ({ output: returned, isError, outcome } = plan);
  } else {
    ({ returned, isError, outcome } = await execute(options, tool, info));
  }
  let processed = await process(options, tool, returned, isError);
  let result = resultInfo(processed, outcome, performance.now() - started);
  for (const interceptor of options.interceptors) {
    try {
      const action = await interceptor.afterToolCall?.(info, result);
      if (action?.action === "replace") {
        processed = await process(options, tool, action.output, action.isError ?? false);
        result = resultInfo(processed, outcome, result.durationMs);
      }
    } catch (error) {
      // An observer's failure must not lose the tool's result.
      processed = {
        ...processed,
        output: `${processed.output}\n[afterToolCall ${interceptor.name ?? "interceptor"} failed: ${errorMessage(error)}]`,
      };
    }
  }
  const item = options.prepare
    ? await options.prepare(resultItem(info, processed), processed.full)
    : resultItem(info, processed);
  // The blob that holds what the model did not see: the worker's Stored blob, or the
  // context policy's ref when its view is shorter than the output.
  const fullBytes = byteLength(processed.full);
  const outputBytes = byteLength(item.output);
  const blobId =
    processed.outputRef?.id ?? (item.outputRef && fullBytes > outputBytes ? item.outputRef.id : undefined);
  options.emit({
    type: "tool_call_end",
    callId: info.callId,
    name: info.name,
    batchId: info.batchId,
    callIndex: info.callIndex,
    turnIndex: info.turnIndex,
    isError: item.isError,
    outcome,
    durationMs: result.durationMs,
    preview: item.output.length > 200 ? `${item.output.slice(0, 200)}…` : item.output,
    outputBytes,
    fullBytes,
    ...(blobId !== undefined ? { blobId } : {}),
  });
  return { call, info, processed, outcome, result: item };
}

/** The history item of a processed output. */
function resultItem(info: ToolCallInfo, processed: ProcessedOutput): ToolResultItem {
  return {
    type: "tool_result",
    callId: info.callId,
    name: info.name,
    output: processed.output,
    isError: processed.isError,
    ...(processed.outputRef ? { outputRef: processed.outputRef } : {}),
    ...(processed.images ? { images: processed.images } : {}),
  };
}

function resultInfo(processed: ProcessedOutput, outcome: ToolOutcome, durationMs: number): ToolResultInfo {
  const info: ToolResultInfo = {
    output: processed.output,
    isError: processed.isError,
    outcome,
    durationMs,
    ...(processed.outputRef ? { blobId: processed.outputRef.id } : {}),
  };
  return info;
}

function process(
  options: BatchOptions,
  tool: Tool | undefined,
  returned: ToolReturn,
  isError: boolean,
): Promise<ProcessedOutput> {
  const limits =
    tool?.maxOutputBytes === undefined
      ? options.limits
      : { ...options.limits, maxBytes: tool.maxOutputBytes };
  return processToolReturn(returned, {
    limits,
    blobStore: options.blobStore,
    storeLargeOutput: tool?.storeLargeOutput ?? true,
    isError,
  });
}

interface Executed {
  returned: ToolReturn;
  isError: boolean;
  outcome: ToolOutcome;
}

async function execute(options: BatchOptions, tool: Tool | undefined, info: ToolCallInfo): Promise<Executed> {
  if (!tool) {
    const names = [...options.tools.keys()].join(", ");
    return {
      returned: `Unknown tool "${info.name}". Available tools: ${names === "" ? "(none)" : names}. Call one of these by its exact name.`,
      isError: true,
      outcome: "unknown_tool",
    };
  }
  const argumentError = options.argumentErrors?.get(info.callId);
  if (argumentError !== undefined) return { returned: argumentError, isError: true, outcome: "invalid_args" };
  if (info.args === undefined) {
    return {
      returned: `Arguments for ${info.name} are not valid JSON: ${JSON.stringify(truncate(info.arguments, 200))}. Send a JSON object that matches the tool's input schema.`,
      isError: true,
      outcome: "invalid_args",
    };
  }
  const parsed = await tool.inputSchema.safeParseAsync(info.args);
  if (!parsed.success) {
    return {
      returned: `Invalid arguments for ${info.name}:\n${renderIssues(parsed.error)}\nFix the arguments and call ${info.name} again.`,
      isError: true,
      outcome: "invalid_args",
    };
  }
  if (options.signal.aborted) return interrupted(info.name);
  const timeoutMs = tool.timeoutMs ?? options.toolTimeoutMs;
  const timeout = new AbortController();
  const signal = AbortSignal.any([options.signal, timeout.signal]);
  // Progress is heard only while the call runs: nothing after its result (a timeout, a cancel).
  let running = true;
  const ctx: ToolExecutionContext = {
    callId: info.callId,
    batchId: info.batchId,
    callIndex: info.callIndex,
    batchSize: info.batchSize,
    turnIndex: info.turnIndex,
    signal,
    progress: (text) => {
      if (!running || text === "") return;
      options.emit({
        type: "tool_output_delta",
        callId: info.callId,
        name: info.name,
        turnIndex: info.turnIndex,
        text,
      });
    },
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<Executed>((resolve) => {
    timer = setTimeout(() => {
      timeout.abort(new Error(`timed out after ${timeoutMs} ms`));
      resolve({
        returned: `Tool ${info.name} timed out after ${timeoutMs} ms and was stopped. Try a smaller request, or a different approach.`,
        isError: true,
        outcome: "timeout",
      });
    }, timeoutMs);
    // A cancelled run does not wait for a tool that ignores its signal.
    onAbort = () => resolve(interrupted(info.name));
    options.signal.addEventListener("abort", onAbort, { once: true });
  });
  const run = (async (): Promise<Executed> => {
    try {
      const returned: unknown = await tool.execute(parsed.data, ctx);
      return { returned: normalizeReturn(returned), isError: false, outcome: "ok" };
    } catch (error) {
      if (options.signal.aborted) return interrupted(info.name);
      const text = ToolError.isInstance(error)
        ? error.message
        : `Tool ${info.name} failed: ${errorMessage(error)}`;
      return { returned: text, isError: true, outcome: "error" };
    }
  })();
  try {
    return await Promise.race([run, limits]);
  } finally {
    running = false;
    clearTimeout(timer);
    if (onAbort) options.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Tolerates what JavaScript tools return in practice: nothing becomes
 * `(no output)`, a plain object or array becomes JSON (and may be stored as
 * structured content), anything else its string form.
 */
function normalizeReturn(value: unknown): ToolReturn {
  if (typeof value === "string" || isToolOutput(value)) return value;
  if (value === undefined || value === null) return "(no output)";
  if (typeof value === "object") {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

export function interruptedText(name: string): string {
  return `Tool call ${name} was interrupted before it finished (the run was cancelled); its effects, if any, are unknown.`;
}

function interrupted(name: string): Executed {
  return { returned: interruptedText(name), isError: true, outcome: "interrupted" };
}

function renderIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length === 0 ? "(arguments)" : issue.path.map(String).join(".");
      return `- ${path}: ${issue.message}`;
    })
    .join("\n");
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
