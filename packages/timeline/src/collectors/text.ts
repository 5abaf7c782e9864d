import type { Citation, ProviderData } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { KindEvent } from "../kinds.ts";
import type { Timeline } from "../timeline.ts";
import { StartOrder } from "./start-order.ts";
import { textBlockHandler } from "./text-blocks.ts";

/** One text block. */
export interface TextBlock {
  index: number;
  text: string;
  /** True when the block was aborted: `text` is what arrived before the cut. */
  partial?: true;
  /** Opaque replay data from the block stop (e.g. Gemini's thought signature on a text part). */
  providerData?: ProviderData;
  /** The sources the provider cited for this block (web search). */
  citations?: Citation[];
}

export interface TextResult {
  /** All text blocks joined, in start order. */
  text: string;
  /** Each text block, in the order they started (aborted ones marked `partial`). */
  blocks: TextBlock[];
}

/** What a completed text block keeps of its stop: Gemini's thought signature and the citations, if any. */
export function keepTextStop(block: TextBlock, stop: Extract<KindEvent<"text">, { phase: "stop" }>): void {
  if (stop.stop.providerData !== undefined) block.providerData = stop.stop.providerData;
  if (stop.stop.citations !== undefined && stop.stop.citations.length > 0)
    block.citations = structuredClone(stop.stop.citations) as Citation[];
}

/**
 * Collects the text of a stream. Aborted blocks keep the text that arrived
 * (the user saw it), marked `partial: true`.
 */
export function createTextCollector(): Collector<TextResult> {
  let blocks = new StartOrder<TextBlock>();
  return {
    register(timeline: Timeline) {
      return timeline.on(
        "text",
        textBlockHandler<"text", TextBlock>(
          {
            // Kept from its start, so a result taken mid-block has the text so far.
            onStart: (block) => blocks.fill(block.index, block),
            onStop: keepTextStop,
            onAbort(block) {
              block.partial = true;
            },
          },
          "text-collector",
          (start) => ({ index: start.index, text: "" }),
        ),
      );
    },
    result() {
      const copy = blocks.values().map((b) => ({ ...b }));
      return { text: copy.map((b) => b.text).join(""), blocks: copy };
    },
    reset() {
      blocks = new StartOrder();
    },
  };
}
