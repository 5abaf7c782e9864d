import type { ThinkingReplay } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import { copyReplay, type DeepReadonly } from "../kinds.ts";
import type { Timeline } from "../timeline.ts";
import { StartOrder } from "./start-order.ts";
import { type TextBlockScope, textBlockHandler } from "./text-blocks.ts";

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

/** A completed thinking block: its text and a copy of its replay data. */
export function completeThinking(
  block: TextBlockScope,
  stop: { readonly replay: DeepReadonly<ThinkingReplay> | undefined },
): ThinkingBlock {
  const done: ThinkingBlock = { index: block.index, text: block.text };
  if (stop.replay !== undefined) done.replay = copyReplay(stop.replay);
  return done;
}

/** Collects thinking blocks with their replay data. */
export function createThinkingCollector(): Collector<ThinkingResult> {
  let blocks = new StartOrder<ThinkingBlock>();
  let aborted: AbortedThinking[] = [];
  return {
    register(timeline: Timeline) {
      return timeline.on(
        "thinking",
        textBlockHandler<"thinking">(
          {
            onStart: (block) => blocks.reserve(block.index),
            onStop: (block, stop) => blocks.fill(block.index, completeThinking(block, stop)),
            onAbort(block, reason) {
              blocks.drop(block.index);
              aborted.push({ index: block.index, partialText: block.text, reason });
            },
          },
          "thinking-collector",
        ),
      );
    },
    result: () => ({
      blocks: blocks.values().map((b) => ({ ...b })),
      aborted: [...aborted],
    }),
    reset() {
      blocks = new StartOrder();
      aborted = [];
    },
  };
}
