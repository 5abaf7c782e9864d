/**
 * The base of every error yoi's packages throw: a stable `code` to switch on
 * (messages are for people and may change), an optional `cause`, and a
 * marker that recognises the error even when two copies of a package are
 * installed side by side (a CLI bundle next to an embedder's own
 * `node_modules`), where `instanceof` says no.
 *
 * The marker is a property keyed by `Symbol.for(...)`: the global symbol
 * registry hands every copy the same symbol for the same string. Each class
 * has its own key (`yoi.error.<Name>`) and a static `isInstance` that looks
 * for it; a subclass's instances carry its ancestors' keys too, because
 * every class's field initialiser runs. Identify a yoi error with
 * `LlmError.isInstance(error)`, never with `instanceof` or by looking at a
 * `code` field of an unknown value.
 */

const YOI_ERROR = Symbol.for("yoi.error");

export interface YoiErrorOptions {
  /** What led to this error (another error, a driver's failure); kept as `error.cause`. */
  cause?: unknown;
}

export class YoiError<Code extends string = string> extends Error {
  override readonly name: string = "YoiError";
  /** What went wrong, as a stable string: callers switch on it, never on the message. */
  readonly code: Code;
  readonly [YOI_ERROR] = true;

  constructor(code: Code, message: string, options: YoiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }

  /** True for any yoi error, also one made by another copy of the package that threw it. */
  static isInstance(value: unknown): value is YoiError {
    return YoiError.hasMarker(value, YOI_ERROR);
  }

  /** Whether `value` carries `marker` (for the `isInstance` of each subclass). */
  protected static hasMarker(value: unknown, marker: symbol): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
