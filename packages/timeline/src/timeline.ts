import type {
  BlockAbortEvent,
  BlockDeltaEvent,
  BlockKind,
  BlockStartEvent,
  BlockStopEvent,
  Event,
} from "@yoi/llm-client";
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

// Scope slot value of a handler that has no scope for a block (it threw, or unsubscribed).
const CLOSED: unique symbol = Symbol("closed");

// Type-erased registration. `fn.call(self, ...)` keeps `this` for class-based handlers.
interface Slot {
  readonly name: string;
  readonly kind: Kind;
  readonly self: object;
  // biome-ignore lint/suspicious/noExplicitAny: type-erased storage; the public `on` overloads keep handlers typed.
  readonly fn: (...args: any[]) => void;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  readonly createScope: ((start: any) => unknown) | undefined;
  removed: boolean;
}

interface OpenBlock {
  readonly index: number;
  readonly kind: BlockKind;
  /** The kind's handlers when the block started (arrays are copy-on-write, so this is a stable snapshot). */
  readonly slots: readonly Slot[];
  /** Scope per slot, or CLOSED. */
  readonly scopes: unknown[];
}

const EMPTY: readonly Slot[] = [];

/**
 * Receives the flat llm-client Event stream and dispatches it to handlers
 * (seed 002).
 *
 * Contract:
 * - Handlers of a kind are called in registration order; a handler never
 *   changes what later handlers receive (events are shared, read-only).
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
  // Per-kind handler arrays, replaced (never mutated) on registration changes.
  #usage: readonly Slot[] = EMPTY;
  #ping: readonly Slot[] = EMPTY;
  #status: readonly Slot[] = EMPTY;
  #error: readonly Slot[] = EMPTY;
  #text: readonly Slot[] = EMPTY;
  #thinking: readonly Slot[] = EMPTY;
  #toolUse: readonly Slot[] = EMPTY;
  readonly #open = new Map<number, OpenBlock>();
  // The block of the previous delta: consecutive deltas usually hit the same block.
  #last: OpenBlock | undefined;

  constructor(options: TimelineOptions = {}) {
    this.#onHandlerError = options.onHandlerError;
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
    this.#setSlots(kind, [...this.#slots(kind), slot]);
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
        this.#meta(this.#usage, event);
        return;
      case "ping":
        this.#meta(this.#ping, event);
        return;
      case "status":
        this.#meta(this.#status, event);
        return;
      case "error":
        this.#meta(this.#error, event);
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
    this.#last = undefined;
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
      reason = `the stream failed: ${error instanceof Error ? error.message : String(error)}`;
      throw error;
    } finally {
      this.end(reason);
    }
  }

  // Returns true when stopped by the signal.
  async #consumeUntilAbort(iterator: AsyncIterator<Event>, signal: AbortSignal): Promise<boolean> {
    const ABORTED = Symbol("aborted");
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<typeof ABORTED>((resolve) => {
      onAbort = () => resolve(ABORTED);
    });
    if (signal.aborted) {
      closeQuietly(iterator);
      return true;
    }
    signal.addEventListener("abort", onAbort!, { once: true });
    try {
      for (;;) {
        const pending = iterator.next();
        const next = await Promise.race([pending, aborted]);
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
      signal.removeEventListener("abort", onAbort!);
    }
  }

  #slots(kind: Kind): readonly Slot[] {
    switch (kind) {
      case "usage":
        return this.#usage;
      case "ping":
        return this.#ping;
      case "status":
        return this.#status;
      case "error":
        return this.#error;
      case "text":
        return this.#text;
      case "thinking":
        return this.#thinking;
      case "tool_use":
        return this.#toolUse;
      default:
        throw new TypeError(
          `Timeline.on: unknown kind "${String(kind)}"; expected one of usage, ping, status, error, text, thinking, tool_use`,
        );
    }
  }

  #setSlots(kind: Kind, slots: readonly Slot[]): void {
    switch (kind) {
      case "usage":
        this.#usage = slots;
        return;
      case "ping":
        this.#ping = slots;
        return;
      case "status":
        this.#status = slots;
        return;
      case "error":
        this.#error = slots;
        return;
      case "text":
        this.#text = slots;
        return;
      case "thinking":
        this.#thinking = slots;
        return;
      case "tool_use":
        this.#toolUse = slots;
        return;
    }
  }

  #remove(slot: Slot): void {
    if (slot.removed) return;
    slot.removed = true;
    this.#setSlots(
      slot.kind,
      this.#slots(slot.kind).filter((s) => s !== slot),
    );
    for (const block of this.#open.values()) {
      const i = block.slots.indexOf(slot);
      if (i >= 0) block.scopes[i] = CLOSED;
    }
  }

  #meta(slots: readonly Slot[], event: Event): void {
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      // Skips a handler unsubscribed earlier in this same dispatch.
      if (slot.removed) continue;
      try {
        slot.fn.call(slot.self, event);
      } catch (error) {
        this.#report({ handler: slot.name, kind: slot.kind, error });
      }
    }
  }

  #blockSlots(kind: BlockKind): readonly Slot[] {
    return kind === "text" ? this.#text : kind === "thinking" ? this.#thinking : this.#toolUse;
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
    this.#open1(event.index, kind, event, false);
  }

  #open1(index: number, kind: BlockKind, start: BlockStartEvent, synthesized: boolean): OpenBlock {
    const slots = this.#blockSlots(kind);
    const scopes: unknown[] = new Array(slots.length);
    const block: OpenBlock = { index, kind, slots, scopes };
    this.#open.set(index, block);
    this.#last = block;
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
    const last = this.#last;
    if (last !== undefined && last.index === index) return last;
    const block = this.#open.get(index);
    if (block !== undefined) this.#last = block;
    return block;
  }

  #delta(event: BlockDeltaEvent): void {
    const index = event.index;
    let block = this.#find(index);
    if (block === undefined) {
      const kind = event.delta === "text" ? "text" : event.delta === "thinking" ? "thinking" : "tool_use";
      if (event.delta !== "input_json" && kind === "tool_use") return; // unknown delta kind
      block = this.#open1(index, kind, { type: "block_start", index, block: kind }, true);
    }
    // One event object per delta, shared by all handlers of the block.
    const phase =
      block.kind === "tool_use"
        ? { phase: "delta" as const, index, inputJson: event.text }
        : { phase: "delta" as const, index, text: event.text };
    const slots = block.slots;
    const scopes = block.scopes;
    for (let i = 0; i < slots.length; i++) {
      const scope = scopes[i];
      if (scope === CLOSED) continue;
      const slot = slots[i]!;
      try {
        slot.fn.call(slot.self, scope, phase);
      } catch (error) {
        scopes[i] = CLOSED;
        this.#report({ handler: slot.name, kind: block.kind, index, phase: "delta", error });
      }
    }
  }

  #stop(event: BlockStopEvent): void {
    const index = event.index;
    let block = this.#find(index);
    if (block === undefined) {
      const kind = event.block;
      if (kind !== "text" && kind !== "thinking" && kind !== "tool_use") return;
      block = this.#open1(index, kind, { type: "block_start", index, block: kind }, true);
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
    if (this.#last === block) this.#last = undefined;
  }

  #deliverAbort(block: OpenBlock, reason: string): void {
    this.#deliverEnd(block, { phase: "abort", index: block.index, reason }, "abort");
  }

  // Delivers the final event of a block and drops every scope of it.
  #deliverEnd(block: OpenBlock, event: object, phase: BlockPhase): void {
    const slots = block.slots;
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
  const detail = r instanceof Error ? r.message : typeof r === "string" ? r : "";
  return detail === "" ? "cancelled" : `cancelled: ${detail}`;
}
