import type { ThinkingReplay } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import { copyReplay } from "../kinds.ts";
import type { Timeline } from "../timeline.ts";

/** A completed thinking (reasoning) block. */
export interface ThinkingBlock {
  index: number;
  /** Visible reasoning text; may be empty (redacted, or only a summary/encrypted content). */
  text: string;
  /** What the producing provider needs to accept this reasoning back. */
  replay?: ThinkingReplay;
}

/** An aborted thinking block: not replayable (no signature), kept for display. */
export interface AbortedThinking {
  index: number;
  partialText: string;
  reason: string;
}

export interface ThinkingResult {
  /** Completed blocks, in start order. */
  blocks: ThinkingBlock[];
  aborted: AbortedThinking[];
}

interface ThinkingScope {
  index: number;
  text: string;
}

/** Collects thinking blocks with their replay data. */
export function createThinkingCollector(): Collector<ThinkingResult> {
  let slots: Array<ThinkingBlock | null> = [];
  let aborted: AbortedThinking[] = [];
  let positions = new Map<number, number>();
  return {
    register(timeline: Timeline) {
      return timeline.on("thinking", {
        name: "thinking-collector",
        createScope(start): ThinkingScope {
          positions.set(start.index, slots.length);
          slots.push(null);
          return { index: start.index, text: "" };
        },
        onEvent(scope, event) {
          switch (event.phase) {
            case "delta":
              scope.text += event.text;
              return;
            case "stop": {
              const block: ThinkingBlock = { index: scope.index, text: scope.text };
              if (event.replay !== undefined) block.replay = copyReplay(event.replay);
              const at = positions.get(scope.index);
              positions.delete(scope.index);
              if (at !== undefined) slots[at] = block;
              return;
            }
            case "abort":
              positions.delete(scope.index);
              aborted.push({ index: scope.index, partialText: scope.text, reason: event.reason });
              return;
            default:
              return;
          }
        },
      });
    },
    result: () => ({
      blocks: slots.filter((b): b is ThinkingBlock => b !== null).map((b) => ({ ...b })),
      aborted: [...aborted],
    }),
    reset() {
      slots = [];
      aborted = [];
      positions = new Map();
    },
  };
}
