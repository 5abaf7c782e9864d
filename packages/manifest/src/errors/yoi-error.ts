/**
 * The base of every error yoi's packages throw: a stable `code` to switch on
 * (messages are for people and may change), an optional `cause`, and a
 * marker that recognises the error even when two copies of a package are
 * installed side by side (a CLI bundle next to an embedder's own
 * `node_modules`), where `instanceof` says no.
 *
 * The marker is a property keyed by `Symbol.for(...)`: the global symbol
 * registry hands every copy the same symbol for the same string. Each class
 * names its key in a static `marker` (`Symbol.for("yoi.error.<Name>")`);
 * the constructor sets the key of the error's class and of every class above
 * it, so `ToolError.isInstance(e)` also holds for a subclass of ToolError.
 * Identify a yoi error with `LlmError.isInstance(error)`, never with
 * `instanceof` or by looking at a `code` field of an unknown value.
 */

export interface YoiErrorOptions {
  /** What led to this error (another error, a driver's failure); kept as `error.cause`. */
  cause?: unknown;
}

export class YoiError<Code extends string = string> extends Error {
  /** The key that marks instances of this class; each subclass declares its own. */
  static readonly marker: symbol = Symbol.for("yoi.error");

  override readonly name: string = "YoiError";
  /** What went wrong, as a stable string: callers switch on it, never on the message. */
  readonly code: Code;

  constructor(code: Code, message: string, options: YoiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // The key of this class and of each class above it, up to YoiError's own.
    for (let c: object | null = new.target; c !== null && c !== Error; c = Object.getPrototypeOf(c)) {
      if (Object.hasOwn(c, "marker"))
        Object.defineProperty(this, (c as typeof YoiError).marker, { value: true });
    }
  }

  /**
   * True for an instance of the class it is called on (`ScopeError.isInstance(e)`),
   * also one made by another copy of the package that threw it.
   */
  static isInstance<T>(this: { readonly marker: symbol; readonly prototype: T }, value: unknown): value is T {
    if (typeof value !== "object" || value === null) return false;
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class it is called on; its marker is the one to find.
    return (value as Record<symbol, unknown>)[this.marker] === true;
  }
}
