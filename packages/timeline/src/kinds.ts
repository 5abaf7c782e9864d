/**
 * Kinds (docs/design/timeline.md#kinds-handlers-and-scopes): a Kind fixes the
 * event type its handlers receive.
 *
 * Meta kinds carry one llm-client event each, delivered at once. Block kinds
 * carry the typed lifecycle of one content block: exactly one `start`, any
 * number of `delta`s, then exactly one `stop` or `abort`.
 */

import type {
  BlockKind,
  BlockStartEvent,
  BlockStopEvent,
  ErrorEvent,
  PingEvent,
  RetryEvent,
  ServerToolEvent,
  StatusEvent,
  ThinkingReplay,
  UsageEvent,
} from "@yoi/llm-client";

export type { BlockKind };

/** Kinds whose events are single, scope-less llm-client events. */
export type MetaKind = "usage" | "ping" | "status" | "error" | "retry" | "server_tool";

/** Every kind a handler can register for. */
export type Kind = MetaKind | BlockKind;

/** The `block_start` of a block of kind `K` (its `block` field is always `K`). */
export type BlockStartOf<K extends BlockKind> = BlockStartEvent & { readonly block: K };

/**
 * A block opens. `synthesized` is true when the stream sent no `block_start`
 * for this index (some providers start with a delta, or send a stop alone):
 * the Timeline then builds `start` from what it knows (index and kind only).
 */
export interface BlockStartPhase<K extends BlockKind> {
  readonly phase: "start";
  readonly index: number;
  readonly start: BlockStartOf<K>;
  readonly synthesized: boolean;
}

/** The block ended normally. */
export interface BlockStopPhase {
  readonly phase: "stop";
  readonly index: number;
  readonly stop: BlockStopEvent;
}

/**
 * The block ended without completing: the stream sent `block_abort`, the
 * Timeline was ended with the block open (`Timeline.end`), or a second
 * `block_start` arrived for an index that was still open.
 */
export interface BlockAbortPhase {
  readonly phase: "abort";
  readonly index: number;
  readonly reason: string;
}

/** Lifecycle of a text block; deltas carry visible text. */
export type TextBlockEvent =
  | BlockStartPhase<"text">
  | { readonly phase: "delta"; readonly index: number; readonly text: string }
  | BlockStopPhase
  | BlockAbortPhase;

/**
 * Lifecycle of a thinking (reasoning) block; deltas carry reasoning text.
 * `stop.replay` (also surfaced as `replay`) is what the producing provider
 * needs to accept the reasoning back (signature, encrypted content).
 */
export type ThinkingBlockEvent =
  | BlockStartPhase<"thinking">
  | { readonly phase: "delta"; readonly index: number; readonly text: string }
  | (BlockStopPhase & { readonly replay: ThinkingReplay | undefined })
  | BlockAbortPhase;

/**
 * Lifecycle of a tool call; `start` carries the call id and tool name, deltas
 * carry fragments of the arguments JSON (`inputJson`, in order; only their
 * concatenation is meaningful).
 */
export type ToolUseBlockEvent =
  | BlockStartPhase<"tool_use">
  | { readonly phase: "delta"; readonly index: number; readonly inputJson: string }
  | BlockStopPhase
  | BlockAbortPhase;

/**
 * `T` read-only all the way down. Every handler of a dispatch receives the
 * same event object, so a handler must not be able to change what the next
 * one sees: the types say so at compile time, at no cost on the
 * per-delta path (freezing each event would cost an allocation-free but
 * measurable call per delta, and only in code that already ignores types).
 */
export type DeepReadonly<T> = T extends string | number | boolean | bigint | symbol | null | undefined
  ? T // also a branded primitive such as `string & {}` (an outside provider's name)
  : T extends (...args: never[]) => unknown
    ? T
    : T extends readonly (infer E)[]
      ? readonly DeepReadonly<E>[]
      : T extends object
        ? { readonly [P in keyof T]: DeepReadonly<T[P]> }
        : T;

/** The type map: which event a handler of each kind receives. */
export interface KindEventMap {
  usage: UsageEvent;
  ping: PingEvent;
  status: StatusEvent;
  error: ErrorEvent;
  /** The client retries: `discarded` voids what the previous attempt streamed. */
  retry: RetryEvent;
  /** A tool the provider runs itself (web search) started or finished; a later event for an index replaces the earlier. */
  server_tool: ServerToolEvent;
  text: TextBlockEvent;
  thinking: ThinkingBlockEvent;
  tool_use: ToolUseBlockEvent;
}

/** The event a handler of kind `K` receives: read-only (see {@link DeepReadonly}). */
export type KindEvent<K extends Kind> = DeepReadonly<KindEventMap[K]>;

/** Lifecycle phases of a block event. */
export type BlockPhase = "start" | "delta" | "stop" | "abort";

/** All meta kinds, in a stable order. */
export const META_KINDS: readonly MetaKind[] = ["usage", "ping", "status", "error", "retry", "server_tool"];
/** All block kinds, in a stable order. */
export const BLOCK_KINDS: readonly BlockKind[] = ["text", "thinking", "tool_use"];

/** Whether `kind` names a block kind (whose handlers have scopes). */
export function isBlockKind(kind: string): kind is BlockKind {
  return kind === "text" || kind === "thinking" || kind === "tool_use";
}

/** Whether `kind` names a meta kind. */
export function isMetaKind(kind: string): kind is MetaKind {
  return (
    kind === "usage" ||
    kind === "ping" ||
    kind === "status" ||
    kind === "error" ||
    kind === "retry" ||
    kind === "server_tool"
  );
}

/** A caller-owned copy of a thinking block's replay data (collectors keep it past the dispatch). */
export function copyReplay(replay: DeepReadonly<ThinkingReplay>): ThinkingReplay {
  const copy: ThinkingReplay = { ...replay, summary: undefined, providerData: undefined };
  if (replay.summary !== undefined) copy.summary = [...replay.summary];
  else delete copy.summary;
  if (replay.providerData !== undefined)
    copy.providerData = structuredClone(replay.providerData) as ThinkingReplay["providerData"];
  else delete copy.providerData;
  return copy;
}
