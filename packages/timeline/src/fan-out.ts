/**
 * The hot path: delivering one event to the handlers of a kind.
 *
 * A loop over an array of handlers makes one call site see every handler
 * function, so V8 can neither predict nor inline any of them; that alone cost
 * about 2x against a hand-written switch. So for each handler set the
 * Timeline builds a small unrolled function with one call site per handler
 * (each stays monomorphic and inlinable). The generated source contains only
 * numbers; handlers are passed in as arguments, never as text. Where code
 * generation is disallowed (`--disallow-code-generation-from-strings`, CSP)
 * or a kind has very many handlers, the plain loop is used instead, with the
 * same behaviour.
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

// Beyond this many handlers of one kind the unrolled function is not worth its size.
const MAX_UNROLLED = 32;

let codegen = true;

/** Builds the handler set for `slots`. */
export function handlerSet(slots: readonly Slot[]): HandlerSet {
  const unrolled = codegen && slots.length > 0 && slots.length <= MAX_UNROLLED ? compile(slots) : undefined;
  return {
    slots,
    meta: unrolled?.meta ?? ((event, fail) => metaLoop(slots, event, fail)),
    scoped: unrolled?.scoped ?? ((scopes, event, fail) => scopedLoop(slots, scopes, event, fail)),
  };
}

/** Turns code generation off (for tests of the fallback, or hosts that forbid it). */
export function setFanOutCodegen(enabled: boolean): void {
  codegen = enabled;
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

function compile(slots: readonly Slot[]): { meta: MetaFanOut; scoped: ScopedFanOut } | undefined {
  const params: string[] = ["CLOSED"];
  const args: unknown[] = [CLOSED];
  let meta = "";
  let scoped = "";
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    params.push(`s${i}`, `f${i}`, `o${i}`);
    args.push(slot, slot.fn, slot.self);
    meta += `if (!s${i}.removed) { try { f${i}.call(o${i}, event); } catch (e) { fail(${i}, e); } }\n`;
    scoped +=
      `scope = scopes[${i}];\n` +
      `if (scope !== CLOSED) { try { f${i}.call(o${i}, scope, event); } ` +
      `catch (e) { scopes[${i}] = CLOSED; fail(${i}, e); } }\n`;
  }
  const source =
    `"use strict";\n` +
    `return {\n` +
    `  meta: function metaFanOut(event, fail) {\n${meta}},\n` +
    `  scoped: function scopedFanOut(scopes, event, fail) {\nlet scope;\n${scoped}},\n` +
    `};`;
  try {
    // biome-ignore lint/complexity/noBannedTypes: Function is the code-generation entry point here.
    const factory = new Function(...params, source) as Function;
    return factory(...args) as { meta: MetaFanOut; scoped: ScopedFanOut };
  } catch {
    // Code generation from strings is disallowed in this host: use the loops from now on.
    codegen = false;
    return undefined;
  }
}
