import type { ProviderData } from "@yoi/llm-client";
import type { Collector } from "../collector.ts";
import type { Timeline } from "../timeline.ts";

/** One text block. */
export interface TextBlock {
  index: number;
  text: string;
  /** True when the block was aborted: `text` is what arrived before the cut. */
  partial?: true;
  /** Opaque replay data from the block stop (e.g. Gemini's thought signature on a text part). */
  providerData?: ProviderData;
}

export interface TextResult {
  /** All text blocks joined, in start order. */
  text: string;
  /** Each text block, in the order they started (aborted ones marked `partial`). */
  blocks: TextBlock[];
}

interface TextScope {
  block: TextBlock;
}

/**
 * Collects the text of a stream. Aborted blocks keep the text that arrived
 * (the user saw it), marked `partial: true`.
 */
export function createTextCollector(): Collector<TextResult> {
  let blocks: TextBlock[] = [];
  return {
    register(timeline: Timeline) {
      return timeline.on("text", {
        name: "text-collector",
        createScope(start): TextScope {
          const block: TextBlock = { index: start.index, text: "" };
          blocks.push(block);
          return { block };
        },
        onEvent(scope, event) {
          switch (event.phase) {
            case "delta":
              scope.block.text += event.text;
              return;
            case "stop":
              if (event.stop.providerData !== undefined) scope.block.providerData = event.stop.providerData;
              return;
            case "abort":
              scope.block.partial = true;
              return;
            default:
              return;
          }
        },
      });
    },
    result() {
      const copy = blocks.map((b) => ({ ...b }));
      return { text: copy.map((b) => b.text).join(""), blocks: copy };
    },
    reset() {
      blocks = [];
    },
  };
}
