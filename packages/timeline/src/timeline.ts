import type {
  BlockAbortEvent,
  BlockDeltaEvent,
  BlockKind,
  BlockStartEvent,
  BlockStopEvent,
  Event,
} from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { CLOSED, type Fail, type HandlerSet, handlerSet, type Slot } from "./fan-out.ts";
import type { BlockHandler, HandlerError, MetaHandler, Unsubscribe } from "./handler.ts";
import type { BlockPhase, Kind, MetaKind } from "./kinds.ts";

/** Options of a Timeline. */
export interface TimelineOptions {
  /**
   * Receives every handler failure, once, with the handler's name. Default:
   * failures are appended to `timeline.handlerErrors`. If this callback
   * itself throws, that failure is appended to `handlerErrors` instead.
   */
  onHandlerError?: (error: HandlerError) => void;
}

/** Reason given to open blocks when `end()` is called without one. */
export const DEFAULT_END_REASON = "the stream ended with the block still open";

// Block indexes below this are looked up in an array instead of the Map.
const SMALL_INDEX = 64;

function isSmall(index: number): boolean {
  return index >>> 0 === index && index < SMALL_INDEX;
}

interface KindEntry {
  readonly set: HandlerSet;
  /** Reports a failure of the handler at a position of `set` (meta kinds). */
  readonly fail: Fail;
}

interface OpenBlock {
  readonly index: number;
  readonly kind: BlockKind;
  /** The kind's handlers when the block started (sets are replaced, never mutated: a stable snapshot). */
  readonly set: HandlerSet;
  /** Scope per handler position, or CLOSED. */
  readonly scopes: unknown[];
  /** Reports a delta failure of the handler at a position. */
  readonly fail: Fail;
}

/**
 * Receives the flat llm-client Event stream and dispatches it to handlers
 * (docs/design/timeline.md).
 *
 * Contract:
 * - Handlers of a kind are called in registration order; a handler never
 *   changes what later handlers receive: events are shared and typed
 *   read-only all the way down (`KindEvent` is `DeepReadonly`).
 * - Meta events (usage, ping, status, error) are delivered the moment they are
 *   dispatched, so they keep their position relative to block events.
 * - Block events become the typed lifecycle of their block. Each handler gets a
 *   scope per open block index, created at the start and dropped after the
 *   stop or abort. Several blocks may be open at once (parallel tool calls).
 * - A delta or stop for an index with no open block opens it first with a
 *   synthesized start (kind from the delta kind or the stop). A `block_start`
 *   for an index that is still open aborts the old block first. A
 *   `block_abort` for an index that is not open is ignored.
 * - `end()` aborts every open block; the Timeline can then be reused for the
 *   next model call.
 * - A handler that throws is reported (see `TimelineOptions.onHandlerError`)
 *   and gets no further events of that block; the others continue unharmed.
 */
export class Timeline {
  /** Handler failures, when no `onHandlerError` option was given. */
  readonly handlerErrors: HandlerError[] = [];

  readonly #onHandlerError: ((error: HandlerError) => void) | undefined;
  // Per-kind handler sets, replaced (never mutated) on registration changes.
  #usage: KindEntry;
  #ping: KindEntry;
  #status: KindEntry;
  #error: KindEntry;
  #retry: KindEntry;
  #serverTool: KindEntry;
  #text: KindEntry;
  #thinking: KindEntry;
  #toolUse: KindEntry;
  readonly #open = new Map<number, OpenBlock>();
  // Direct lookup for the small indexes real streams use; #open stays the source of truth (and keeps open order).
  readonly #byIndex: Array<OpenBlock | undefined> = new Array<OpenBlock | undefined>(SMALL_INDEX).fill(
    undefined,
  );

  constructor(options: TimelineOptions = {}) {
    this.#onHandlerError = options.onHandlerError;
    this.#usage = this.#entry("usage", []);
    this.#ping = this.#entry("ping", []);
    this.#status = this.#entry("status", []);
    this.#error = this.#entry("error", []);
    this.#retry = this.#entry("retry", []);
    this.#serverTool = this.#entry("server_tool", []);
    this.#text = this.#entry("text", []);
    this.#thinking = this.#entry("thinking", []);
    this.#toolUse = this.#entry("tool_use", []);
  }

  /**
   * Registers `handler` for `kind`, after the handlers already registered.
   * Blocks already open are not delivered to it. Returns an unsubscribe that
   * drops the handler and its scopes (no abort is delivered to it).
   */
  on<K extends BlockKind, S = undefined>(kind: K, handler: BlockHandler<K, S>): Unsubscribe;
  on<K extends MetaKind>(kind: K, handler: MetaHandler<K>): Unsubscribe;
  on(kind: Kind, handler: BlockHandler<BlockKind, unknown> | MetaHandler<MetaKind>): Unsubscribe {
    if (handler === null || typeof handler !== "object" || typeof handler.onEvent !== "function") {
      throw new TypeError(
        `Timeline.on("${String(kind)}"): the handler must be an object with an onEvent function`,
      );
    }
    const createScope = "createScope" in handler ? handler.createScope : undefined;
    if (createScope !== undefined && typeof createScope !== "function") {
      throw new TypeError(
        `Timeline.on("${String(kind)}"): createScope of handler "${handler.name}" must be a function`,
      );
    }
    const slot: Slot = {
      name: typeof handler.name === "string" && handler.name !== "" ? handler.name : "(anonymous handler)",
      kind,
      self: handler,
      fn: handler.onEvent,
      createScope,
      removed: false,
    };
    this.#setSlots(kind, [...this.#entryOf(kind).set.slots, slot]);
    return () => this.#remove(slot);
  }

  /** Dispatches one event synchronously to the handlers of its kind. */
  dispatch(event: Event): void {
    switch (event.type) {
      case "block_delta":
        this.#delta(event);
        return;
      case "block_start":
        this.#start(event);
        return;
      case "block_stop":
        this.#stop(event);
        return;
      case "block_abort":
        this.#abortEvent(event);
        return;
      case "usage":
        this.#usage.set.meta(event, this.#usage.fail);
        return;
      case "ping":
        this.#ping.set.meta(event, this.#ping.fail);
        return;
      case "status":
        this.#status.set.meta(event, this.#status.fail);
        return;
      case "error":
        this.#error.set.meta(event, this.#error.fail);
        return;
      case "retry":
        this.#retry.set.meta(event, this.#retry.fail);
        return;
      case "server_tool":
        this.#serverTool.set.meta(event, this.#serverTool.fail);
        return;
      default:
        // Unknown event types (a newer llm-client) are passed over, not fatal.
        return;
    }
  }

  /**
   * Ends the current stream: every open block is aborted (in the order the
   * blocks opened) with `reason`, delivered to each handler that still has a
   * scope for it, and all scopes are dropped.
   */
  end(reason: string = DEFAULT_END_REASON): void {
    const blocks = [...this.#open.values()];
    this.#open.clear();
    this.#byIndex.fill(undefined);
    for (const block of blocks) this.#deliverAbort(block, reason);
  }

  /** Indexes of the blocks open right now, in the order they opened. */
  openBlocks(): Array<{ index: number; block: BlockKind }> {
    return [...this.#open.values()].map((b) => ({ index: b.index, block: b.kind }));
  }

  /**
   * Dispatches every event of `stream`, then calls `end()`. When `signal`
   * aborts, stops reading (and closes the iterator), ends the open blocks
   * with a cancellation reason and resolves. If the stream throws, the open
   * blocks are aborted with the error message and the error is rethrown.
   */
  async consume(stream: AsyncIterable<Event>, signal?: AbortSignal): Promise<void> {
    const iterator = stream[Symbol.asyncIterator]();
    let reason: string = DEFAULT_END_REASON;
    try {
      if (signal === undefined) {
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          this.dispatch(next.value);
        }
      } else if (await this.#consumeUntilAbort(iterator, signal)) {
        reason = cancelReason(signal);
      }
    } catch (error) {
      reason = `the stream failed: ${errorMessage(error)}`;
      throw error;
    } finally {
      this.end(reason);
    }
  }

  // Returns true when stopped by the signal.
  async #consumeUntilAbort(iterator: AsyncIterator<Event>, signal: AbortSignal): Promise<boolean> {
    const ABORTED = Symbol("aborted");
    if (signal.aborted) {
      closeQuietly(iterator);
      return true;
    }
    // Each read waits for the event or the abort, whichever comes first. Not `Promise.race` with one
    // promise of the abort: every race adds a reaction to that promise, kept until it settles, so a
    // stream of 6,000 deltas held some 1.5 MB of them until its end (more garbage surviving each
    // scavenge, and a young generation that grew for it).
    let wake: ((value: typeof ABORTED) => void) | undefined;
    const onAbort = () => wake?.(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const pending = iterator.next();
        const next = await new Promise<IteratorResult<Event> | typeof ABORTED>((resolve, reject) => {
          // Asking for the next event may itself have aborted the signal (a stream that cancels as it is read).
          if (signal.aborted) return resolve(ABORTED);
          wake = resolve;
          pending.then(resolve, reject);
        });
        wake = undefined;
        if (next === ABORTED) {
          // The pending read may still settle (or fail) later; nobody waits for it.
          pending.catch(() => {});
          closeQuietly(iterator);
          return true;
        }
        if (next.done) return false;
        this.dispatch(next.value);
        if (signal.aborted) {
          closeQuietly(iterator);
          return true;
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  #entry(kind: Kind, slots: readonly Slot[]): KindEntry {
    const set = handlerSet(slots);
    const fail: Fail = (position, error) =>
      this.#report({ handler: set.slots[position]?.name ?? "(unknown)", kind, error });
    return { set, fail };
  }

  #entryOf(kind: Kind): KindEntry {
    switch (kind) {
      case "usage":
        return this.#usage;
      case "ping":
        return this.#ping;
      case "status":
        return this.#status;
      case "error":
        return this.#error;
      case "retry":
        return this.#retry;
      case "server_tool":
        return this.#serverTool;
      case "text":
        return this.#text;
      case "thinking":
        return this.#thinking;
      case "tool_use":
        return this.#toolUse;
      default:
        throw new TypeError(
          `Timeline.on: unknown kind "${String(kind)}"; expected one of usage, ping, status, error, retry, server_tool, text, thinking, tool_use`,
        );
    }
  }

  #setSlots(kind: Kind, slots: readonly Slot[]): void {
    const entry = this.#entry(kind, slots);
    switch (kind) {
      case "usage":
        this.#usage = entry;
        return;
      case "ping":
        this.#ping = entry;
        return;
      case "status":
        this.#status = entry;
        return;
      case "error":
        this.#error = entry;
        return;
      case "retry":
        this.#retry = entry;
        return;
      case "server_tool":
        this.#serverTool = entry;
        return;
      case "text":
        this.#text = entry;
        return;
      case "thinking":
        this.#thinking = entry;
        return;
      case "tool_use":
        this.#toolUse = entry;
        return;
    }
  }

  #remove(slot: Slot): void {
    if (slot.removed) return;
    slot.removed = true;
    const kind = slot.kind as Kind;
    this.#setSlots(
      kind,
      this.#entryOf(kind).set.slots.filter((s) => s !== slot),
    );
    for (const block of this.#open.values()) {
      const i = block.set.slots.indexOf(slot);
      if (i >= 0) block.scopes[i] = CLOSED;
    }
  }

  #blockSet(kind: BlockKind): HandlerSet {
    return (kind === "text" ? this.#text : kind === "thinking" ? this.#thinking : this.#toolUse).set;
  }

  #start(event: BlockStartEvent): void {
    const kind = event.block;
    if (kind !== "text" && kind !== "thinking" && kind !== "tool_use") return;
    const previous = this.#open.get(event.index);
    if (previous !== undefined) {
      this.#close(previous);
      this.#deliverAbort(
        previous,
        `a new block_start arrived for index ${event.index} while its ${previous.kind} block was open`,
      );
    }
    this.#openBlock(event.index, kind, event, false);
  }

  #openBlock(index: number, kind: BlockKind, start: BlockStartEvent, synthesized: boolean): OpenBlock {
    const set = this.#blockSet(kind);
    const slots = set.slots;
    const scopes: unknown[] = new Array(slots.length);
    const fail: Fail = (position, error) =>
      this.#report({ handler: slots[position]?.name ?? "(unknown)", kind, index, phase: "delta", error });
    const block: OpenBlock = { index, kind, set, scopes, fail };
    this.#open.set(index, block);
    if (isSmall(index)) this.#byIndex[index] = block;
    const phase = { phase: "start", index, start, synthesized } as const;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (slot.removed) {
        scopes[i] = CLOSED;
        continue;
      }
      try {
        const scope = slot.createScope === undefined ? undefined : slot.createScope.call(slot.self, start);
        scopes[i] = scope;
        slot.fn.call(slot.self, scope, phase);
      } catch (error) {
        scopes[i] = CLOSED;
        this.#report({ handler: slot.name, kind, index, phase: "start", error });
      }
    }
    return block;
  }

  #find(index: number): OpenBlock | undefined {
    return isSmall(index) ? this.#byIndex[index] : this.#open.get(index);
  }

  #delta(event: BlockDeltaEvent): void {
    const index = event.index;
    let block = this.#find(index);
    if (block === undefined) {
      const kind = event.delta === "text" ? "text" : event.delta === "thinking" ? "thinking" : "tool_use";
      if (event.delta !== "input_json" && kind === "tool_use") return; // unknown delta kind
      block = this.#openBlock(index, kind, { type: "block_start", index, block: kind }, true);
    }
    // One event object per delta, shared by the block's handlers. A call site
    // per kind keeps each one monomorphic (see fan-out.ts).
    const kind = block.kind;
    if (kind === "text") {
      block.set.scoped(block.scopes, { phase: "delta", index, text: event.text }, block.fail);
    } else if (kind === "tool_use") {
      block.set.scoped(block.scopes, { phase: "delta", index, inputJson: event.text }, block.fail);
    } else {
      block.set.scoped(block.scopes, { phase: "delta", index, text: event.text }, block.fail);
    }
  }

  #stop(event: BlockStopEvent): void {
    const index = event.index;
    let block = this.#find(index);
    if (block === undefined) {
      const kind = event.block;
      if (kind !== "text" && kind !== "thinking" && kind !== "tool_use") return;
      block = this.#openBlock(index, kind, { type: "block_start", index, block: kind }, true);
    }
    this.#close(block);
    const phase =
      block.kind === "thinking"
        ? { phase: "stop" as const, index, stop: event, replay: event.replay }
        : { phase: "stop" as const, index, stop: event };
    this.#deliverEnd(block, phase, "stop");
  }

  #abortEvent(event: BlockAbortEvent): void {
    const block = this.#find(event.index);
    if (block === undefined) return;
    this.#close(block);
    this.#deliverAbort(block, event.reason);
  }

  #close(block: OpenBlock): void {
    this.#open.delete(block.index);
    if (isSmall(block.index)) this.#byIndex[block.index] = undefined;
  }

  #deliverAbort(block: OpenBlock, reason: string): void {
    this.#deliverEnd(block, { phase: "abort", index: block.index, reason }, "abort");
  }

  // Delivers the final event of a block and drops every scope of it.
  #deliverEnd(block: OpenBlock, event: object, phase: BlockPhase): void {
    const slots = block.set.slots;
    const scopes = block.scopes;
    for (let i = 0; i < slots.length; i++) {
      const scope = scopes[i];
      if (scope === CLOSED) continue;
      scopes[i] = CLOSED;
      const slot = slots[i]!;
      try {
        slot.fn.call(slot.self, scope, event);
      } catch (error) {
        this.#report({ handler: slot.name, kind: block.kind, index: block.index, phase, error });
      }
    }
  }

  #report(error: HandlerError): void {
    const sink = this.#onHandlerError;
    if (sink === undefined) {
      this.handlerErrors.push(error);
      return;
    }
    try {
      sink(error);
    } catch (sinkError) {
      this.handlerErrors.push(error, { handler: "onHandlerError", kind: error.kind, error: sinkError });
    }
  }
}

function closeQuietly(iterator: AsyncIterator<Event>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(() => {});
  } catch {
    // A failing iterator.return() must not hide the cancellation.
  }
}

function cancelReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  const detail = r === undefined ? "" : errorMessage(r);
  return detail === "" ? "cancelled" : `cancelled: ${detail}`;
}
