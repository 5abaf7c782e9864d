/**
 * The message of anything thrown: an `Error`'s message, otherwise its
 * string form. The one place for `error instanceof Error ? ... : String(error)`.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
