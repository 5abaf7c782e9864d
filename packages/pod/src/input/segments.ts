/**
 * Submit input as segments (docs/design/file-refs.md): plain text and
 * `@path` file refs.
 *
 * Syntax:
 * - `@src/a.ts` — a ref runs to the next whitespace; trailing sentence
 *   punctuation (`.,;:!?`), quotes and unbalanced closing brackets are not
 *   part of it (`see @src/a.ts.` refers to `src/a.ts`);
 * - `@"path with spaces"` — quoted, `\"` and `\\` escape inside;
 * - `\@` — a literal `@`;
 * - an `@` glued to a preceding word is text (`a@b.com`, `user@host`).
 */

export interface TextSegment {
  type: "text";
  text: string;
}

export interface FileRefSegment {
  type: "file_ref";
  /** The path as the user wrote it (quotes and escapes removed). */
  path: string;
}

export type Segment = TextSegment | FileRefSegment;

/** Characters after which an `@` may start a ref (besides the start of input). */
const REF_MAY_FOLLOW = /[\s([{<"'`]/;
const TRAILING_PUNCT = /[.,;:!?"'`]/;
const CLOSERS: Record<string, string> = { ")": "(", "]": "[", "}": "{", ">": "<" };

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n++;
  return n;
}

/** Strips what ends a sentence rather than a path. */
function trimRef(raw: string): string {
  let path = raw;
  for (;;) {
    const last = path.at(-1);
    if (last === undefined) return path;
    if (TRAILING_PUNCT.test(last)) {
      path = path.slice(0, -1);
      continue;
    }
    const opener = CLOSERS[last];
    if (opener !== undefined && count(path, last) > count(path, opener)) {
      path = path.slice(0, -1);
      continue;
    }
    return path;
  }
}

/** Parses submit input into Text and FileRef segments (adjacent text merged). */
export function parseSegments(input: string): Segment[] {
  const out: Segment[] = [];
  let text = "";
  const flushText = () => {
    if (text !== "") out.push({ type: "text", text });
    text = "";
  };
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch === "\\" && input[i + 1] === "@") {
      text += "@";
      i += 2;
      continue;
    }
    if (ch !== "@" || (i > 0 && !REF_MAY_FOLLOW.test(input[i - 1]!))) {
      text += ch;
      i += 1;
      continue;
    }
    if (input[i + 1] === '"') {
      let j = i + 2;
      let path = "";
      let closed = false;
      while (j < input.length) {
        const c = input[j]!;
        if (c === "\\" && (input[j + 1] === '"' || input[j + 1] === "\\")) {
          path += input[j + 1];
          j += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          break;
        }
        path += c;
        j += 1;
      }
      if (closed && path !== "") {
        flushText();
        out.push({ type: "file_ref", path });
        i = j + 1;
        continue;
      }
      text += ch;
      i += 1;
      continue;
    }
    let j = i + 1;
    while (j < input.length && !/\s/.test(input[j]!)) j++;
    const path = trimRef(input.slice(i + 1, j));
    if (path === "") {
      text += ch;
      i += 1;
      continue;
    }
    flushText();
    out.push({ type: "file_ref", path });
    i += 1 + path.length;
  }
  flushText();
  return out;
}

/** The placeholder a FileRef becomes in the user message. */
export function fileRefPlaceholder(path: string): string {
  return `[unresolved file ref: ${path}]`;
}

/**
 * The user message text of a submit: text as written, each FileRef as its
 * `[unresolved file ref: <path>]` placeholder (resolved bodies follow as
 * separate system messages).
 */
export function flattenSegments(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) out += s.type === "text" ? s.text : fileRefPlaceholder(s.path);
  return out;
}

/** The FileRef paths of `segments` in order of appearance. */
export function fileRefs(segments: readonly Segment[]): string[] {
  return segments.flatMap((s) => (s.type === "file_ref" ? [s.path] : []));
}
