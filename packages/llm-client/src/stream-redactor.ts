/**
 * {@link redactSecrets} for text that arrives in pieces (streamed
 * `text_delta`s). Redacting each piece alone misses a key split over two
 * deltas, so a {@link StreamRedactor} holds back the end of what it was given
 * while that end could still be the start of a secret, and releases it
 * (redacted) once the next piece or the end of the block proves otherwise.
 *
 * What is held back: the longest tail that is a proper prefix of a
 * registered secret (at most the longest secret's length - 1 characters),
 * and a trailing token that a key pattern of `redactSecrets` could still
 * grow into (`sk-...`, `Bearer ...`, `x-api-key: ...`, `scheme://user:pw@`,
 * `?key=...`; in practice the last unfinished word). Never more than
 * {@link STREAM_HOLDBACK_LIMIT} characters for the patterns: a key longer
 * than that is released masked, and the rest of its run (up to a space or a
 * quote) is dropped rather than shown.
 * Text without secrets comes out unchanged, at most one delta late.
 */
import { REDACTED, redactSecrets, registeredSecrets } from "./redact.ts";

/** Most characters held back for the key patterns (registered secrets may need more: their length - 1). */
export const STREAM_HOLDBACK_LIMIT = 256;

/**
 * Tails (anchored at the end) that a pattern of `redactSecrets` could still
 * complete or extend. A match's start is where holding back begins.
 */
const OPEN_TAILS: RegExp[] = [
  // A word in progress: a prefix of `sk-`, `AIza`, `Bearer`, `authorization`, a URL scheme, ...
  /\b[A-Za-z][\w+.-]*$/,
  // A key after its head (the key characters go on until something else arrives).
  /\b(?:sk-ant-|sk-|pk-|rk-|AIza)[A-Za-z0-9_*.-]*$/,
  /\bBearer(?:\s+[A-Za-z0-9._~+/=-]*)?$/i,
  /\b(?:x-api-key|x-goog-api-key|api[_-]?key|authorization)["']?\s*(?:[:=]\s*["']?[^\s"',}&<]*)?$/i,
  // `scheme://` up to the `@` that makes the part before it credentials.
  /\b[a-z][a-z0-9+.-]*:(?:\/(?:\/[^\s/?#@"'<>]*)?)?$/i,
  // A query parameter whose name or value is not finished.
  /[?&;][\w-]*(?:=[^&#\s"'<>]*)?$/,
];

/** Redacts a stream of text pieces; see the module comment. */
export class StreamRedactor {
  #held = "";
  /** A key longer than the holdback was masked; the rest of its run is dropped. */
  #masking = false;

  /** Characters currently held back (not yet returned). */
  get pending(): number {
    return this.#held.length;
  }

  /** Takes the next piece; returns the redacted text that is safe to show now (may be empty). */
  push(piece: string): string {
    let text = this.#held + piece;
    if (this.#masking) {
      const run = KEY_RUN.exec(text)?.[0].length ?? 0;
      text = text.slice(run);
      if (text === "") {
        this.#held = "";
        return "";
      }
      this.#masking = false;
    }
    const floor = text.length - STREAM_HOLDBACK_LIMIT;
    if (floor > 0 && WHOLE_RUN.test(text.slice(floor - 1))) {
      // A run of key characters reached the holdback limit: release it whole, redacted,
      // and if it was a key, drop the rest of its run rather than show it after the mask.
      const shown = redactSecrets(text);
      this.#held = "";
      this.#masking = shown.endsWith(REDACTED);
      return shown;
    }
    const cut = safeCut(text, Math.max(0, floor));
    this.#held = text.slice(cut);
    return cut === 0 ? "" : redactSecrets(text.slice(0, cut));
  }

  /** The end of the block: returns everything held back, redacted. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    this.#masking = false;
    return rest === "" ? "" : redactSecrets(rest);
  }

  /** Drops what is held back (the text it belongs to was discarded). */
  reset(): void {
    this.#held = "";
    this.#masking = false;
  }
}

/** The characters a key or credential can go on with. */
const KEY_RUN = /^[^\s"'<>]*/;
const WHOLE_RUN = /^[^\s"'<>]*$/;

/** Where `text` may be cut: everything before the index cannot be part of a secret that continues after it. */
function safeCut(text: string, floor: number): number {
  let cut = text.length;
  const secrets = registeredSecrets();
  const longest = secrets[0]?.length ?? 0;
  // Earliest tail that is a proper prefix of a registered secret.
  for (let i = Math.max(0, text.length - (longest - 1)); i < text.length; i++) {
    const tail = text.slice(i);
    if (secrets.some((s) => s.length > tail.length && s.startsWith(tail))) {
      cut = i;
      break;
    }
  }
  const window = text.slice(floor);
  for (const pattern of OPEN_TAILS) {
    const match = pattern.exec(window);
    if (match) cut = Math.min(cut, floor + match.index);
  }
  return cut;
}
