import type { BlockStopEvent, ProviderData } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { BlockHandler } from "../handler.ts";
import type { BlockStartOf, DeepReadonly } from "../kinds.ts";
import type { Timeline } from "../timeline.ts";
import { parseToolArguments } from "../tool-arguments.ts";
import { StartOrder } from "./start-order.ts";

/** A tool call as it starts: what is known before any argument arrives. */
export interface ToolCallStart {
  /** Block index in the stream. */
  index: number;
  /** The provider's call id (a generated `call_<uuid>` if the stream carried none, see `ToolCall.note`). */
  id: string;
  name: string;
  /** `custom` for OpenAI Responses free-form tools. */
  toolKind?: "function" | "custom";
}

/** A completed tool call with its arguments parsed. */
export interface ToolCall extends ToolCallStart {
  /** The raw arguments (JSON; raw text for `custom` tools); `"{}"` when the model sent none. */
  argumentsJson: string;
  /**
   * The parsed arguments object. `{}` when they were empty, invalid JSON or
   * not an object, and for `custom` tools; `note` says which.
   */
  args: Record<string, unknown>;
  /** Why `args` or `id` is not what the model sent; absent when all was well. */
  note?: string;
  /** Opaque replay data from the block stop (e.g. Gemini's thought signature). */
  providerData?: ProviderData;
}

/** A tool call that did not complete: never executed, never in history. */
export interface AbortedToolCall extends ToolCallStart {
  /** The argument text received before the abort. */
  partialJson: string;
  reason: string;
}

/** The per-block scope of a tool call handler. */
export interface ToolCallScope {
  readonly call: ToolCallStart;
  /** Arguments text received so far. */
  json: string;
}

/** Callbacks of `toolCallHandler`. */
export interface ToolCallCallbacks {
  onStart?: (call: ToolCallStart) => void;
  /** A fragment of the arguments; `soFar` is everything received including it. */
  onDelta?: (fragment: string, call: ToolCallStart, soFar: string) => void;
  onComplete?: (call: ToolCall) => void;
  onAbort?: (call: AbortedToolCall) => void;
}

/** Builds a `ToolCallStart` from a block start. */
export function toolCallStart(start: BlockStartOf<"tool_use">): ToolCallStart {
  const call: ToolCallStart = {
    index: start.index,
    id: typeof start.id === "string" && start.id !== "" ? start.id : "",
    name: typeof start.name === "string" ? start.name : "",
  };
  if (start.toolKind !== undefined) call.toolKind = start.toolKind;
  return call;
}

/** Completes a tool call from its start, its argument text and its stop. */
export function completeToolCall(
  start: ToolCallStart,
  json: string,
  stop?: DeepReadonly<BlockStopEvent>,
): ToolCall {
  const notes: string[] = [];
  let call: ToolCall;
  if (start.toolKind === "custom") {
    call = { ...start, argumentsJson: json, args: {} };
    notes.push("custom tool: its input is the free-form text in argumentsJson, not JSON arguments");
  } else {
    const parsed = parseToolArguments(json);
    call = { ...start, argumentsJson: parsed.argumentsJson, args: parsed.args };
    if (parsed.note !== undefined) notes.push(parsed.note);
  }
  if (call.id === "") {
    call.id = `call_${globalThis.crypto.randomUUID()}`;
    notes.push("the stream carried no call id; generated one");
  }
  if (call.name === "") notes.push("the stream carried no tool name");
  if (notes.length > 0) call.note = notes.join("; ");
  if (stop?.providerData !== undefined) call.providerData = stop.providerData;
  return call;
}

/**
 * A tool_use handler that assembles each call and reports its start,
 * argument fragments, completion (arguments parsed) or abort.
 */
export function toolCallHandler(
  callbacks: ToolCallCallbacks,
  name = "tool-calls",
): BlockHandler<"tool_use", ToolCallScope> {
  return {
    name,
    createScope: (start) => ({ call: toolCallStart(start), json: "" }),
    onEvent(scope, event) {
      switch (event.phase) {
        case "start":
          callbacks.onStart?.({ ...scope.call });
          return;
        case "delta":
          scope.json += event.inputJson;
          callbacks.onDelta?.(event.inputJson, scope.call, scope.json);
          return;
        case "stop":
          callbacks.onComplete?.(completeToolCall(scope.call, scope.json, event.stop));
          return;
        case "abort":
          callbacks.onAbort?.({ ...scope.call, partialJson: scope.json, reason: event.reason });
          return;
      }
    },
  };
}

/** What a tool call collector saw. */
export interface ToolCallsResult {
  /** Completed calls, in the order their blocks started. */
  calls: ToolCall[];
  /** Calls that were cut off; they must not be executed. */
  aborted: AbortedToolCall[];
}

/** Collects the tool calls of a stream, in the order their blocks started. */
export function createToolCallCollector(): Collector<ToolCallsResult> {
  let calls = new StartOrder<ToolCall>();
  let aborted: AbortedToolCall[] = [];
  return {
    register(timeline: Timeline) {
      return timeline.on(
        "tool_use",
        toolCallHandler(
          {
            onStart: (call) => calls.reserve(call.index),
            onComplete: (call) => calls.fill(call.index, call),
            onAbort(call) {
              calls.drop(call.index);
              aborted.push(call);
            },
          },
          "tool-call-collector",
        ),
      );
    },
    result: () => ({ calls: calls.values(), aborted: [...aborted] }),
    reset() {
      calls = new StartOrder();
      aborted = [];
    },
  };
}
