/**
 * One model call: stream the request through the Timeline (the turn
 * collector assembles blocks; delta handlers feed UIs) and turn the result
 * into assistant Items in the order the model produced them.
 */

import {
  type Item,
  type LlmClient,
  LlmError,
  type LlmErrorCode,
  type MessageItem,
  type ReasoningItem,
  type Request,
  type ServerToolItem,
  type StopReason,
  type TextPart,
  type ToolCallItem,
  type Usage,
} from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { createTurnCollector, onTextDelta, onThinkingDelta, Timeline, type TurnResult } from "@yoi/timeline";
import type {
  RetryEvent,
  ServerToolWorkerEvent,
  TextDeltaEvent,
  ThinkingDeltaEvent,
  WarningEvent,
  WorkerError,
} from "./events.ts";
import { byteLength } from "./utf8.ts";

export type ModelCallOutcome =
  | {
      kind: "completed";
      /** Assistant items in the model's order (reasoning, text, tool calls). */
      items: Item[];
      toolCalls: ToolCallItem[];
      /** Error results for calls whose arguments could not be used (callId -> message). */
      argumentErrors: Map<string, string>;
      stopReason: StopReason | undefined;
      usage: Usage | undefined;
      /** Tool calls cut off mid-stream (never committed). */
      droppedCalls: number;
    }
  | {
      kind: "cancelled";
      /** Text the user already saw (an assistant message), when any. */
      partial: Item[];
      /** Whether the model produced anything at all before the cancel. */
      hadOutput: boolean;
      usage: Usage | undefined;
    }
  | {
      kind: "failed";
      error: WorkerError;
      /** True when the stream broke after output (the client's retries, if any, are spent). */
      midStream: boolean;
      usage: Usage | undefined;
    };

/** What one response may carry before its stream is stopped. */
export interface ResponseLimits {
  /** Bytes of text, reasoning and tool arguments together. */
  maxResponseBytes: number;
  /** Bytes of one tool call's arguments. */
  maxToolArgumentBytes: number;
}

export interface ModelCallOptions {
  client: LlmClient;
  request: Request;
  signal: AbortSignal;
  limits: ResponseLimits;
  turnIndex: number;
  /** The worker's attempt number of this call (client retries count on from it). */
  attempt: number;
  emit(event: TextDeltaEvent | ThinkingDeltaEvent | ServerToolWorkerEvent | RetryEvent | WarningEvent): void;
}

/**
 * Streams one call. Never throws for provider failures: a thrown LlmError
 * (the client's retries are exhausted before the first event) and error
 * events both become `failed`.
 */
export class ModelCaller {
  readonly #timeline = new Timeline();
  readonly #collector = createTurnCollector();
  #emit: ModelCallOptions["emit"] = () => {};
  #turnIndex = 0;
  #attempt = 1;
  /** Bytes of this response so far, and what to do when a bound is passed. */
  #bytes = 0;
  #limits: ResponseLimits | undefined;
  #overLimit: (message: string) => void = () => {};

  constructor() {
    this.#collector.register(this.#timeline);
    // After the collector: it holds what arrived up to the delta that passed a bound, and no more.
    const count = (bytes: number) => {
      this.#bytes += bytes;
      const max = this.#limits?.maxResponseBytes;
      if (max !== undefined && this.#bytes > max)
        this.#overLimit(
          `The model's response passed ${max} bytes (worker.maxResponseBytes) and was stopped; nothing of it was kept. ` +
            "Raise worker.maxResponseBytes if such responses are expected.",
        );
    };
    this.#timeline.on("text", {
      name: "worker:bytes",
      onEvent: (_s, e) => void (e.phase === "delta" && count(byteLength(e.text))),
    });
    this.#timeline.on("thinking", {
      name: "worker:bytes",
      onEvent: (_s, e) => void (e.phase === "delta" && count(byteLength(e.text))),
    });
    this.#timeline.on("tool_use", {
      name: "worker:bytes",
      createScope: (start) => ({ name: typeof start.name === "string" ? start.name : "?", bytes: 0 }),
      onEvent: (scope, e) => {
        if (e.phase !== "delta") return;
        const bytes = byteLength(e.inputJson);
        scope.bytes += bytes;
        const max = this.#limits?.maxToolArgumentBytes;
        if (max !== undefined && scope.bytes > max) {
          this.#overLimit(
            `The arguments of a ${scope.name} call passed ${max} bytes (worker.maxToolArgumentBytes); the response was stopped and nothing of it was kept. ` +
              "Raise worker.maxToolArgumentBytes if such calls are expected.",
          );
          return;
        }
        count(bytes);
      },
    });
    this.#timeline.on(
      "text",
      onTextDelta(
        (text) => this.#emit({ type: "text_delta", turnIndex: this.#turnIndex, text }),
        "worker:text",
      ),
    );
    this.#timeline.on(
      "thinking",
      onThinkingDelta(
        (text) => this.#emit({ type: "thinking_delta", turnIndex: this.#turnIndex, text }),
        "worker:thinking",
      ),
    );
    this.#timeline.on("server_tool", {
      name: "worker:server_tool",
      onEvent: (event) =>
        this.#emit({
          type: "server_tool",
          turnIndex: this.#turnIndex,
          item: structuredClone(event.item) as ServerToolItem,
        }),
    });
    // The client owns retries; the worker only forwards them (the turn collector drops discarded blocks).
    this.#timeline.on("retry", {
      name: "worker:retry",
      onEvent: (event) =>
        this.#emit({
          type: "retry",
          source: "client",
          attempt: this.#attempt + event.attempt - 1,
          maxAttempts: event.maxAttempts,
          delayMs: event.delayMs,
          reason: event.message,
          code: event.code,
          discarded: event.discarded,
        }),
    });
  }

  async call(options: ModelCallOptions): Promise<ModelCallOutcome> {
    this.#collector.reset();
    this.#emit = options.emit;
    this.#turnIndex = options.turnIndex;
    this.#attempt = options.attempt;
    this.#bytes = 0;
    this.#limits = options.limits;
    // A bound passed stops the stream (the provider's connection is closed) as a cancel of our own would.
    const bound = new AbortController();
    let exceeded: string | undefined;
    this.#overLimit = (message) => {
      if (exceeded !== undefined) return;
      exceeded = message;
      bound.abort(new Error(message));
    };
    const signal = AbortSignal.any([options.signal, bound.signal]);
    let thrown: unknown;
    try {
      await this.#timeline.consume(
        options.client.stream(options.request, {
          signal,
          // What the request could not carry (a setting the model does not take) becomes a `warning` event.
          onWarning: (warning) => this.#emit({ type: "warning", warning }),
        }),
        signal,
      );
    } catch (error) {
      thrown = error;
    } finally {
      this.#emit = () => {};
      this.#overLimit = () => {};
      this.#limits = undefined;
    }
    const turn = this.#collector.result();
    if (exceeded !== undefined && !options.signal.aborted) {
      // Nothing of an oversized response is kept: not in history, not in the log, not in a later request.
      this.#collector.reset();
      return {
        kind: "failed",
        error: { code: "limit_exceeded", message: exceeded, retryable: false },
        midStream: true,
        usage: turn.usage,
      };
    }
    const hadOutput = turn.blocks.length > 0 || turn.aborted.length > 0;
    if (options.signal.aborted || turn.status === "cancelled") {
      return { kind: "cancelled", partial: partialText(turn), hadOutput, usage: turn.usage };
    }
    if (thrown !== undefined) {
      return { kind: "failed", error: toWorkerError(thrown), midStream: false, usage: turn.usage };
    }
    const firstError = turn.errors[0];
    if (turn.status === "failed" || firstError !== undefined) {
      const error: WorkerError = firstError
        ? {
            code: firstError.code,
            message: firstError.message,
            retryable: firstError.retryable,
            ...(firstError.status !== undefined ? { status: firstError.status } : {}),
            ...(firstError.resetAt !== undefined ? { resetAt: firstError.resetAt } : {}),
            ...(firstError.networkReason !== undefined ? { networkReason: firstError.networkReason } : {}),
          }
        : {
            code: "incomplete_stream",
            message: "The model call failed without an error message.",
            retryable: true,
          };
      // The client already applied its retry policy; sending the same request again here would multiply the attempts.
      return { kind: "failed", error, midStream: firstError?.beforeOutput !== true, usage: turn.usage };
    }
    if (turn.status === undefined) {
      // A client that ends its stream without a terminal status broke the contract; treat it as a broken stream.
      return {
        kind: "failed",
        error: {
          code: "incomplete_stream",
          message: "The stream ended without a terminal status.",
          retryable: true,
        },
        midStream: true,
        usage: turn.usage,
      };
    }
    return completed(turn, options.client.provider);
  }
}

function completed(turn: TurnResult, provider: LlmClient["provider"]): ModelCallOutcome {
  const items: Item[] = [];
  const toolCalls: ToolCallItem[] = [];
  const argumentErrors = new Map<string, string>();
  let text: MessageItem | undefined;
  for (const block of turn.blocks) {
    if (block.kind === "text") {
      if (block.text === "") continue;
      const part: TextPart = { type: "text", text: block.text };
      if (block.citations !== undefined && block.citations.length > 0) part.citations = block.citations;
      // Adjacent text blocks form one assistant message (providers replay them as parts of one).
      if (text && block.providerData === undefined && text.providerData === undefined) {
        text.content.push(part);
        continue;
      }
      text = { type: "message", role: "assistant", content: [part] };
      if (block.providerData !== undefined) text.providerData = block.providerData;
      items.push(text);
      continue;
    }
    text = undefined;
    if (block.kind === "server_tool") {
      items.push(block.item);
      continue;
    }
    if (block.kind === "thinking") {
      const replay = block.replay;
      if (block.text === "" && !replay?.signature && !replay?.encryptedContent && !replay?.summary?.length)
        continue;
      // The replay data are the item's own fields; without any, the item is the calling client's provider's.
      const item: ReasoningItem = { type: "reasoning", text: block.text, provider, ...replay };
      items.push(item);
      continue;
    }
    const item: ToolCallItem = {
      type: "tool_call",
      callId: block.id,
      name: block.name,
      arguments: block.argumentsJson,
    };
    if (block.toolKind !== undefined) item.kind = block.toolKind;
    if (block.providerData !== undefined) item.providerData = block.providerData;
    if (block.toolKind !== "custom" && block.note !== undefined && !isJsonObject(block.argumentsJson)) {
      // History must stay replayable: providers reject a tool call whose input is not an object.
      item.arguments = "{}";
      argumentErrors.set(
        block.id,
        `The arguments of this ${block.name} call could not be used: ${block.note.replace(/; using \{\}$/, "")}. ` +
          `You sent: ${JSON.stringify(block.argumentsJson.slice(0, 300))}. Call ${block.name} again with a JSON object that matches its input schema.`,
      );
    }
    items.push(item);
    toolCalls.push(item);
  }
  return {
    kind: "completed",
    items,
    toolCalls,
    argumentErrors,
    stopReason: turn.stopReason,
    usage: turn.usage,
    droppedCalls: turn.aborted.filter((a) => a.block === "tool_use").length,
  };
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** The text a cancelled call had streamed: kept, because the user saw it. */
function partialText(turn: TurnResult): Item[] {
  const text = turn.blocks
    .filter((b) => b.kind === "text")
    .map((b) => b.text)
    .join("");
  return text === "" ? [] : [{ type: "message", role: "assistant", content: [{ type: "text", text }] }];
}

export function toWorkerError(error: unknown): WorkerError {
  if (LlmError.isInstance(error)) {
    return {
      code: error.code as LlmErrorCode,
      message: error.message,
      retryable: error.retryable,
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(error.resetAt !== undefined ? { resetAt: error.resetAt } : {}),
      ...(error.networkReason !== undefined ? { networkReason: error.networkReason } : {}),
    };
  }
  return {
    code: "internal",
    message: errorMessage(error),
    retryable: false,
  };
}
