/**
 * Text from outside yoi (the model, tools, MCP servers, files, session
 * logs, config files) on its way to a terminal. A terminal acts on control
 * characters and escape sequences: it can clear the screen, move the
 * cursor over a question the user is about to answer, set the window
 * title, put text on the clipboard (OSC 52) or print links that say one
 * thing and open another (OSC 8). `sanitize` makes every such character
 * visible instead: C0 controls other than newline and tab as their Unicode
 * control pictures (`ESC [2J` becomes `␛[2J`), DEL as `␡`, C1 controls as
 * `␛` and their 7-bit equivalent (U+009B CSI becomes `␛[`), and the
 * bidirectional overrides and isolates that can reorder what a line
 * appears to say as `⟨U+202E⟩`. A carriage return before a newline (CRLF)
 * is dropped; one alone is shown as `␍`.
 *
 * The mapping is per character, so text that arrives in pieces (streamed
 * deltas) comes out the same as when sanitised whole, and an escape
 * sequence split across two pieces can never be rejoined.
 *
 * Order: sanitise what came from outside first, then apply yoi's own
 * styling. `guardStyled` is the second line at the places that write to
 * the terminal: it lets SGR sequences (colours, bold, dim) through and
 * shows everything else, so text that skipped `sanitize` can at most be
 * coloured, never move the cursor or talk to the terminal.
 */

/** Characters a terminal could act on, plus a carriage return before a newline (dropped). */
const UNSAFE = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
/** The same without the CRLF case, to test cheaply whether anything needs doing. */
const ANY_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

function visible(char: string): string {
  if (char === "\r\n") return "\n";
  const code = char.charCodeAt(0);
  // C0: the Control Pictures block has one per code, in order (␀ U+2400 … ␟ U+241F).
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421"; // ␡
  // C1: shown as the ESC sequence it stands for (0x9B CSI = ESC [).
  if (code <= 0x9f) return `\u241b${String.fromCharCode(code - 0x40)}`;
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * `text` with every control character and escape sequence made visible (see
 * the module comment); newline and tab are kept. Text that needs nothing is
 * returned as it is.
 */
export function sanitize(text: string): string {
  if (!ANY_UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, visible);
}

/** `sanitize`, for a place that shows one line (a table cell, a title): newlines and tabs become spaces. */
export function sanitizeLine(text: string): string {
  return sanitize(text).replace(/[ \t]*\n[ \t]*|\t/g, " ");
}

/**
 * A copy of `value` with `sanitize` applied to every string in it (plain
 * objects and arrays, walked; anything else — an AbortSignal, a class
 * instance — kept as it is). Parts that needed nothing are shared, not
 * copied; a value that needed nothing is returned itself.
 */
export function sanitizeDeep<T>(value: T): T {
  return walk(value, 0) as T;
}

/** Deeper than any event yoi shows: beyond it values are kept (and `guardStyled` still stands). */
const MAX_DEPTH = 64;

function walk(value: unknown, depth: number): unknown {
  if (typeof value === "string") return sanitize(value);
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], depth + 1);
      if (next !== value[i]) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = walk(item, depth + 1);
    if (next !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = next;
    }
  }
  return copy ?? value;
}

/**
 * An SGR sequence (colour and attributes) or an erase to the end of the
 * line (which paints a code block's background to the edge): the only
 * escapes yoi's own styling writes. Matched here before the characters
 * `sanitize` makes visible, so one pass keeps the first and shows the rest.
 */
const SGR_OR_UNSAFE = /\x1b\[[0-9;]*m|\x1b\[K|\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * For text about to be written to the terminal that may hold yoi's own
 * styling: SGR sequences pass, every other control character or escape
 * sequence is made visible as `sanitize` would.
 */
export function guardStyled(text: string): string {
  if (!ANY_UNSAFE.test(text)) return text;
  // One replace over the text: styled text has an escape every few words, and cutting it at each
  // (the text between sanitised on its own) cost more than the rest of writing a rendered answer.
  return text.replace(SGR_OR_UNSAFE, keepStyle);
}

/** A match of {@link SGR_OR_UNSAFE}: a styling escape (two characters or more, from ESC) kept, anything else made visible. */
function keepStyle(match: string): string {
  return match.length > 1 && match.charCodeAt(0) === 0x1b ? match : visible(match);
}

/** Characters JSON.stringify leaves raw that a terminal would act on (DEL, C1) or reorder text by. */
const JSON_UNSAFE = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `JSON.stringify(value)` with the characters it leaves raw that a terminal
 * acts on (DEL, the C1 controls) and the bidirectional controls written as
 * `\uXXXX` escapes: the same JSON value, safe to print. (JSON.stringify
 * already escapes the C0 controls, ESC included.)
 */
export function jsonLine(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
