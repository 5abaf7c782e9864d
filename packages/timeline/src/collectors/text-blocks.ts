import type { BlockHandler } from "../handler.ts";
import type { BlockStartOf, KindEvent } from "../kinds.ts";

/** The blocks whose deltas are text: visible text and reasoning. */
export type TextualKind = "text" | "thinking";

/** A text or thinking block as it streams: its index and the text that arrived so far. */
export interface TextBlockScope {
  readonly index: number;
  text: string;
}

/** Callbacks of `textBlockHandler`; each gets the block's scope (its text so far). */
export interface TextBlockCallbacks<K extends TextualKind, S extends TextBlockScope = TextBlockScope> {
  onStart?: (block: S) => void;
  /** A piece of text; `block.text` already includes it. */
  onDelta?: (text: string, block: S) => void;
  /** The block completed; `stop` carries its provider data (and, for thinking, its replay). */
  onStop?: (block: S, stop: Extract<KindEvent<K>, { phase: "stop" }>) => void;
  /** The block was cut off; `block.text` is what arrived before. */
  onAbort?: (block: S, reason: string) => void;
}

/**
 * A handler for `text` or `thinking` blocks that gathers each block's text
 * and reports its start, deltas, stop or abort: the one place the
 * collectors and the one-line UI callbacks read text blocks from. The
 * scope is `{ index, text }`, or what `newScope` makes (a collector's own
 * block record, kept as the text grows).
 */
export function textBlockHandler<K extends TextualKind>(
  callbacks: TextBlockCallbacks<K>,
  name: string,
): BlockHandler<K, TextBlockScope>;
export function textBlockHandler<K extends TextualKind, S extends TextBlockScope>(
  callbacks: TextBlockCallbacks<K, S>,
  name: string,
  newScope: (start: BlockStartOf<K>) => S,
): BlockHandler<K, S>;
export function textBlockHandler<K extends TextualKind>(
  callbacks: TextBlockCallbacks<K>,
  name: string,
  newScope: (start: BlockStartOf<K>) => TextBlockScope = (start) => ({ index: start.index, text: "" }),
): BlockHandler<K, TextBlockScope> {
  return {
    name,
    createScope: newScope,
    onEvent(block, event) {
      switch (event.phase) {
        case "start":
          callbacks.onStart?.(block);
          return;
        case "delta":
          block.text += event.text;
          callbacks.onDelta?.(event.text, block);
          return;
        case "stop":
          callbacks.onStop?.(block, event as Extract<KindEvent<K>, { phase: "stop" }>);
          return;
        case "abort":
          callbacks.onAbort?.(block, event.reason);
          return;
      }
    },
  };
}
