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

/**
 * The most specific reason an error carries, for a person to read. Network
 * failures come wrapped: a provider SDK's "Connection error." has fetch's
 * "fetch failed" as its `cause`, and that has what actually happened
 * ("connect ECONNREFUSED 127.0.0.1:8080", "getaddrinfo ENOTFOUND
 * api.example.com", a TLS alert, "bad port"). This is the message of the
 * deepest cause that has one, with its `code` when the message does not
 * name it; an AggregateError without a message (both addresses of
 * `localhost` refused) speaks through its first error. The error's own
 * message when nothing under it says more.
 */
export function rootCauseMessage(error: unknown): string {
  let reason = errorMessage(error).trim();
  let current: unknown = error;
  // Bounded: a cause chain may loop.
  for (let depth = 0; depth < 8; depth++) {
    const next = causeOf(current);
    if (next === undefined) break;
    const said = describeCause(next);
    if (said !== "") reason = said;
    current = next;
  }
  return reason;
}

/** The `cause` of an error, or the first of an AggregateError's errors when it has no message of its own. */
function causeOf(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return undefined;
  const { cause, errors, message } = error as { cause?: unknown; errors?: unknown; message?: unknown };
  if (cause !== undefined && cause !== null) return cause;
  if ((message === undefined || message === "") && Array.isArray(errors) && errors.length > 0)
    return errors[0];
  return undefined;
}

/** A cause's message (first line), with its code when the message leaves it out; "" when it says nothing. */
function describeCause(cause: unknown): string {
  if (typeof cause !== "object" || cause === null) return typeof cause === "string" ? cause.trim() : "";
  const { message, code } = cause as { message?: unknown; code?: unknown };
  const text = typeof message === "string" ? (message.trim().split("\n")[0] ?? "") : "";
  if (typeof code !== "string" || code === "" || text.includes(code)) return text;
  return text === "" ? code : `${text} (${code})`;
}
