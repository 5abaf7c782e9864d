import type { BlockKind, BlockStartOf, Kind, KindEvent, MetaKind } from "./kinds.ts";

/**
 * Handles the blocks of one kind. Each open block gets its own scope per
 * handler: `createScope` runs at the block's start (scope `undefined` when
 * absent), every lifecycle event of that block is passed with that scope, and
 * the scope is dropped after `stop` or `abort`. Several handlers of the same
 * kind each have their own scopes; a block is only delivered to handlers
 * registered before it started.
 *
 * Events are shared by every handler of the dispatch: treat them as read-only.
 * A handler that throws (in `createScope` or `onEvent`) is reported through
 * the Timeline's `onHandlerError` and gets no further events for that block;
 * other handlers are not affected.
 */
export interface BlockHandler<K extends BlockKind, S = undefined> {
  /** Shown in error reports. */
  readonly name: string;
  readonly createScope?: (start: BlockStartOf<K>) => S;
  readonly onEvent: (scope: S, event: KindEvent<K>) => void;
}

/** Handles single meta events (usage, ping, status, error); needs no scope. */
export interface MetaHandler<K extends MetaKind> {
  /** Shown in error reports. */
  readonly name: string;
  readonly onEvent: (event: KindEvent<K>) => void;
}

/** The handler shape for kind `K`: scoped for block kinds, scope-less for meta kinds. */
export type Handler<K extends Kind, S = undefined> = K extends BlockKind
  ? BlockHandler<K, S>
  : K extends MetaKind
    ? MetaHandler<K>
    : never;

/** Removes what was registered; calling it again does nothing. */
export type Unsubscribe = () => void;

/** A handler failure, reported once per failure with the handler's name. */
export interface HandlerError {
  /** `name` of the handler that threw. */
  handler: string;
  kind: Kind;
  /** Block index, for block kinds. */
  index?: number;
  /** Lifecycle phase being delivered, for block kinds (`start` covers `createScope`). */
  phase?: "start" | "delta" | "stop" | "abort";
  /** What was thrown. */
  error: unknown;
}
