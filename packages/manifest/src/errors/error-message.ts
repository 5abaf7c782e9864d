/**
 * The message of anything thrown, for a person to read: an `Error`'s
 * `message`; the `message` of an error-like object (an error from another
 * realm, a library that rejects with a plain object); otherwise the value's
 * string form. The one place for `error instanceof Error ? error.message :
 * String(error)`: `pnpm check` rejects that idiom written inline.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string") return message;
  }
  try {
    return String(error);
  } catch {
    // An object without a usable toString (Object.create(null)): a message must not throw.
    return Object.prototype.toString.call(error);
  }
}
