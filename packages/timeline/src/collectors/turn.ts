import type {
  BlockKind,
  Citation,
  ErrorEvent,
  ProviderData,
  ServerToolItem,
  StopReason,
  ThinkingReplay,
  Usage,
} from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { Timeline } from "../timeline.ts";
import { CallBoundary } from "./call-boundary.ts";
import { StartOrder } from "./start-order.ts";
import { keepTextStop } from "./text.ts";
import { textBlockHandler } from "./text-blocks.ts";
import { completeThinking } from "./thinking.ts";
import { toolCallHandler } from "./tool-calls.ts";
import { mergeUsage } from "./usage.ts";

export interface TurnTextBlock {
  kind: "text";
  index: number;
  text: string;
  /** The block was aborted; `text` is what arrived before (it is also listed in `aborted`). */
  partial?: true;
  providerData?: ProviderData;
  /** The sources the provider cited for this block (web search). */
  citations?: Citation[];
}

export interface TurnThinkingBlock {
  kind: "thinking";
  index: number;
  text: string;
  /** Signature / encrypted content needed to send this reasoning back to its provider. */
  replay?: ThinkingReplay;
}

export interface TurnToolCallBlock {
  kind: "tool_call";
  index: number;
  id: string;
  name: string;
  /** Raw arguments JSON (raw text for custom tools); `"{}"` when the model sent none. */
  argumentsJson: string;
  /** Parsed arguments; `{}` when empty, invalid or not an object (then `note` says why). */
  args: Record<string, unknown>;
  note?: string;
  toolKind?: "function" | "custom";
  providerData?: ProviderData;
}

/** A tool the provider ran itself (web search): its latest state. */
export interface TurnServerToolBlock {
  kind: "server_tool";
  index: number;
  item: ServerToolItem;
}

export type TurnBlock = TurnTextBlock | TurnThinkingBlock | TurnToolCallBlock | TurnServerToolBlock;

/** A block that did not complete. */
export interface TurnAbortedBlock {
  index: number;
  block: BlockKind;
  reason: string;
  /** What arrived before the abort: text, reasoning text, or argument JSON. */
  partial: string;
  /** tool_use only. */
  id?: string;
  /** tool_use only. */
  name?: string;
}

/** Everything the worker needs from one model call. */
export interface TurnResult {
  /**
   * Completed blocks in the order the model started them. Aborted tool calls
   * and aborted thinking are not here (see `aborted`); an aborted text block
   * is, marked `partial`, because the user already saw it.
   */
  blocks: TurnBlock[];
  aborted: TurnAbortedBlock[];
  /** Merged usage of the call (latest value per field); `undefined` if none was reported. */
  usage: Usage | undefined;
  /** From the terminal status. */
  stopReason: StopReason | undefined;
  /** The terminal status; `undefined` while the call is still streaming (or none arrived). */
  status: "completed" | "cancelled" | "failed" | undefined;
  errors: ErrorEvent[];
  /** Convenience: the text of all text blocks, joined. */
  text: string;
  /** Convenience: the tool_call blocks of `blocks`. */
  toolCalls: TurnToolCallBlock[];
}

class TurnState {
  entries = new StartOrder<TurnBlock>();
  aborted: TurnAbortedBlock[] = [];
  usage: Usage | undefined;
  stopReason: StopReason | undefined;
  status: TurnResult["status"];
  errors: ErrorEvent[] = [];
  /** Server tool blocks by index (updated in place as results arrive). */
  serverTools = new Map<number, TurnServerToolBlock>();
}

/**
 * Collects one model call into ordered blocks, usage, stop reason, status
 * and errors: `register(timeline)`, run the stream, then `result()`.
 *
 * On a reused Timeline the collector starts over at the next call's
 * `status: started` (after a terminal status); `reset()` does it by hand.
 */
export function createTurnCollector(): Collector<TurnResult> {
  let state = new TurnState();
  const boundary = new CallBoundary();
  return {
    register(timeline: Timeline) {
      const offs = [
        timeline.on(
          "text",
          textBlockHandler<"text", TurnTextBlock>(
            {
              // Kept from its start, so a result taken mid-block has the text so far.
              onStart: (block) => state.entries.fill(block.index, block),
              onStop: keepTextStop,
              onAbort(block, reason) {
                block.partial = true;
                state.aborted.push({ index: block.index, block: "text", reason, partial: block.text });
              },
            },
            "turn-collector:text",
            (start) => ({ kind: "text", index: start.index, text: "" }),
          ),
        ),
        timeline.on(
          "thinking",
          textBlockHandler<"thinking">(
            {
              onStart: (block) => state.entries.reserve(block.index),
              onStop: (block, stop) =>
                state.entries.fill(block.index, { kind: "thinking", ...completeThinking(block, stop) }),
              onAbort(block, reason) {
                state.entries.drop(block.index);
                state.aborted.push({ index: block.index, block: "thinking", reason, partial: block.text });
              },
            },
            "turn-collector:thinking",
          ),
        ),
        timeline.on(
          "tool_use",
          toolCallHandler(
            {
              onStart: (call) => state.entries.reserve(call.index),
              onComplete: (call) => state.entries.fill(call.index, { kind: "tool_call", ...call }),
              onAbort(call) {
                state.entries.drop(call.index);
                state.aborted.push({
                  index: call.index,
                  block: "tool_use",
                  reason: call.reason,
                  partial: call.partialJson,
                  id: call.id,
                  name: call.name,
                });
              },
            },
            "turn-collector:tool_use",
          ),
        ),
        timeline.on("server_tool", {
          name: "turn-collector:server_tool",
          onEvent(event) {
            // The first event keeps the call's place; later ones (its results) replace it there.
            const block: TurnServerToolBlock = {
              kind: "server_tool",
              index: event.index,
              item: structuredClone(event.item) as ServerToolItem,
            };
            if (!state.serverTools.has(event.index)) {
              state.serverTools.set(event.index, block);
              state.entries.fill(event.index, block);
            } else Object.assign(state.serverTools.get(event.index)!, block);
          },
        }),
        timeline.on("usage", {
          name: "turn-collector:usage",
          onEvent(event) {
            const merged: Usage = state.usage ?? {};
            if (mergeUsage(merged, event.usage)) state.usage = merged;
          },
        }),
        timeline.on("status", {
          name: "turn-collector:status",
          onEvent(event) {
            if (boundary.next(event)) state = new TurnState();
            if (event.status === "started") return;
            state.status = event.status;
            state.stopReason = event.stopReason;
          },
        }),
        timeline.on("error", {
          name: "turn-collector:error",
          onEvent(event) {
            state.errors.push(event);
          },
        }),
        timeline.on("retry", {
          name: "turn-collector:retry",
          onEvent(event) {
            if (!event.discarded) return;
            // The client sends the call again from the start: what the broken attempt streamed is void.
            const usage = state.usage;
            state = new TurnState();
            state.usage = usage;
          },
        }),
      ];
      return () => {
        for (const off of offs) off();
      };
    },
    result(): TurnResult {
      const blocks: TurnBlock[] = [];
      const toolCalls: TurnToolCallBlock[] = [];
      let text = "";
      for (const entry of state.entries.values()) {
        const copy = { ...entry };
        blocks.push(copy);
        if (copy.kind === "text") text += copy.text;
        else if (copy.kind === "tool_call") toolCalls.push(copy);
      }
      return {
        blocks,
        aborted: state.aborted.map((a) => ({ ...a })),
        usage: state.usage === undefined ? undefined : { ...state.usage },
        stopReason: state.stopReason,
        status: state.status,
        errors: [...state.errors],
        text,
        toolCalls,
      };
    },
    reset() {
      state = new TurnState();
      boundary.reset();
    },
  };
}
