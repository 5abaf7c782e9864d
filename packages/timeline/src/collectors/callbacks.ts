/**
 * One-line handlers for UIs, e.g.
 * `timeline.on("text", onTextDelta((text) => process.stdout.write(text)))`.
 */
import type { BlockHandler } from "../handler.ts";
import { type TextBlockScope, textBlockHandler } from "./text-blocks.ts";
import type { AbortedToolCall, ToolCall, ToolCallScope, ToolCallStart } from "./tool-calls.ts";
import { toolCallHandler } from "./tool-calls.ts";

/** Calls `cb` with every text delta (register on `"text"`). */
export function onTextDelta(
  cb: (text: string, index: number) => void,
  name = "onTextDelta",
): BlockHandler<"text", TextBlockScope> {
  return textBlockHandler<"text">({ onDelta: (text, block) => cb(text, block.index) }, name);
}

/** Calls `cb` with every reasoning delta (register on `"thinking"`). */
export function onThinkingDelta(
  cb: (text: string, index: number) => void,
  name = "onThinkingDelta",
): BlockHandler<"thinking", TextBlockScope> {
  return textBlockHandler<"thinking">({ onDelta: (text, block) => cb(text, block.index) }, name);
}

/** Calls `cb` when a tool call starts, before its arguments (register on `"tool_use"`). */
export function onToolCallStart(
  cb: (call: ToolCallStart) => void,
  name = "onToolCallStart",
): BlockHandler<"tool_use", ToolCallScope> {
  return toolCallHandler({ onStart: cb }, name);
}

/** Calls `cb` with each argument fragment and the text so far (register on `"tool_use"`). */
export function onToolCallDelta(
  cb: (fragment: string, call: ToolCallStart, soFar: string) => void,
  name = "onToolCallDelta",
): BlockHandler<"tool_use", ToolCallScope> {
  return toolCallHandler({ onDelta: cb }, name);
}

/** Calls `cb` with each completed tool call, arguments parsed (register on `"tool_use"`). */
export function onToolCallComplete(
  cb: (call: ToolCall) => void,
  name = "onToolCallComplete",
): BlockHandler<"tool_use", ToolCallScope> {
  return toolCallHandler({ onComplete: cb }, name);
}

/** Calls `cb` with each tool call that was cut off (register on `"tool_use"`). */
export function onToolCallAbort(
  cb: (call: AbortedToolCall) => void,
  name = "onToolCallAbort",
): BlockHandler<"tool_use", ToolCallScope> {
  return toolCallHandler({ onAbort: cb }, name);
}
