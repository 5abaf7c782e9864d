/**
 * The hot path: delivering one event to the handlers of a kind, with a plain
 * loop. The worker registers one to three handlers per kind; at those counts
 * a loop costs the same as the unrolled, generated functions this file used
 * to build with `new Function` (bench/dispatch.bench.ts measures 1, 3 and 10
 * handlers per kind), and no program text is generated at run time.
 */

// Scope slot value of a handler that has no scope for a block (it threw, or unsubscribed).
export const CLOSED: unique symbol = Symbol("closed");

/** A type-erased handler registration. `fn.call(self, ...)` keeps `this` for class-based handlers. */
export interface Slot {
  readonly name: string;
  readonly kind: string;
  readonly self: object;
  // biome-ignore lint/suspicious/noExplicitAny: type-erased storage; the public `on` overloads keep handlers typed.
  readonly fn: (...args: any[]) => void;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  readonly createScope: ((start: any) => unknown) | undefined;
  removed: boolean;
}

/** Called with the position of a handler that threw, and what it threw. */
export type Fail = (position: number, error: unknown) => void;

/** Delivers a meta event to every slot, in order, skipping removed ones. */
export type MetaFanOut = (event: object, fail: Fail) => void;

/**
 * Delivers a block event to every slot that has a scope (`scopes[i] !== CLOSED`),
 * in order; a slot that throws gets its scope closed, then `fail` is called.
 */
export type ScopedFanOut = (scopes: unknown[], event: object, fail: Fail) => void;

/** The handlers of one kind with their fan-out functions; replaced, never mutated. */
export interface HandlerSet {
  readonly slots: readonly Slot[];
  readonly meta: MetaFanOut;
  readonly scoped: ScopedFanOut;
}

/** Builds the handler set for `slots`. */
export function handlerSet(slots: readonly Slot[]): HandlerSet {
  return {
    slots,
    meta: (event, fail) => metaLoop(slots, event, fail),
    scoped: (scopes, event, fail) => scopedLoop(slots, scopes, event, fail),
  };
}

function metaLoop(slots: readonly Slot[], event: object, fail: Fail): void {
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    if (slot.removed) continue;
    try {
      slot.fn.call(slot.self, event);
    } catch (error) {
      fail(i, error);
    }
  }
}

function scopedLoop(slots: readonly Slot[], scopes: unknown[], event: object, fail: Fail): void {
  for (let i = 0; i < slots.length; i++) {
    const scope = scopes[i];
    if (scope === CLOSED) continue;
    const slot = slots[i]!;
    try {
      slot.fn.call(slot.self, scope, event);
    } catch (error) {
      scopes[i] = CLOSED;
      fail(i, error);
    }
  }
}
