/**
 * The in-context view of a tool output
 * (docs/design/context-management.md#in-context-view): each line cut at
 * `maxLineLength` characters, the whole cut at `maxMessageBytes` UTF-8 bytes on
 * a character boundary, and, when anything was cut, a note at the end that says
 * how to read the rest by ref.
 */

/** Names of the tools that read a cached output back. */
export const READ_TOOL_NAME = "tool_output_cache";
export const GREP_TOOL_NAME = "tool_output_cache_grep";

export interface InContextView {
  /** The text the model sees. */
  text: string;
  /** Whether anything was cut (a line or the message). */
  truncated: boolean;
  /** Lines of the full output. */
  lineCount: number;
  /** UTF-8 bytes of the full output. */
  byteSize: number;
}

export interface ViewLimits {
  maxMessageBytes: number;
  maxLineLength: number;
}

/** Splits text into lines the way the cache tools number them (`\n`, a trailing `\r` dropped). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  // A trailing newline ends the last line; it does not start an empty one.
  if (lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.endsWith("\r")) lines[i] = line.slice(0, -1);
  }
  return lines;
}

/** Number of lines the cache tools see in `text`. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let count = 1;
  let from = 0;
  for (;;) {
    const at = text.indexOf("\n", from);
    if (at < 0) break;
    count++;
    from = at + 1;
  }
  return text.endsWith("\n") ? count - 1 : count;
}

/** Cuts `line` to at most `max` characters without splitting a surrogate pair. */
export function cutLine(line: string, max: number): string {
  if (line.length <= max) return line;
  let end = max;
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // high surrogate: keep the pair together
  return line.slice(0, end);
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, cut on a character boundary. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const buf = Buffer.from(text, "utf8");
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

/** The note appended to a cut view. */
export function truncationNote(
  refId: string,
  shown: { lines: number; lastLineComplete: boolean; linesCut: number },
  full: { lineCount: number; byteSize: number },
): string {
  const cutShort = shown.lines < full.lineCount || !shown.lastLineComplete;
  const parts: string[] = [];
  if (cutShort) {
    parts.push(
      `output truncated: showing ${shown.lines} of ${full.lineCount} lines (${full.byteSize} bytes in full)`,
    );
  }
  if (shown.linesCut > 0) {
    parts.push(`${shown.linesCut} long line${shown.linesCut === 1 ? "" : "s"} shortened`);
  }
  const grep = `${GREP_TOOL_NAME}({"ref_id":"${refId}","pattern":"..."})`;
  if (!cutShort) return `[${parts.join("; ")}. Full output: ref=${refId}; search it with ${grep}]`;
  // A partly shown last line is read again from its start.
  const next = shown.lastLineComplete ? shown.lines + 1 : Math.max(1, shown.lines);
  const read = `${READ_TOOL_NAME}({"ref_id":"${refId}","offset":${next}})`;
  return `[${parts.join("; ")}. Full output: ref=${refId}; read the rest with ${read} or search it with ${grep}]`;
}

/** Room kept for the note when sizing the body (the note itself is short; ids are 36 chars). */
const NOTE_RESERVE_BYTES = 512;

/**
 * Builds the in-context view of `full`. Linear in the size of `full`; stops
 * scanning once the byte budget is spent (line count and size still cover
 * the whole output).
 */
export function buildInContextView(full: string, refId: string, limits: ViewLimits): InContextView {
  const byteSize = Buffer.byteLength(full, "utf8");
  const lineCount = countLines(full);
  const anyLongLine = hasLongLine(full, limits.maxLineLength);
  if (byteSize <= limits.maxMessageBytes && !anyLongLine) {
    return { text: full, truncated: false, lineCount, byteSize };
  }
  const budget = Math.max(0, limits.maxMessageBytes - NOTE_RESERVE_BYTES);
  const out: string[] = [];
  let used = 0;
  let shownLines = 0;
  let linesCut = 0;
  let lastLineComplete = true;
  let from = 0;
  while (from < full.length) {
    let at = full.indexOf("\n", from);
    if (at < 0) at = full.length;
    let line = full.slice(from, at);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    from = at + 1;
    let cut = false;
    if (line.length > limits.maxLineLength) {
      const kept = cutLine(line, limits.maxLineLength);
      line = `${kept}… [+${line.length - kept.length} chars]`;
      cut = true;
    }
    const cost = Buffer.byteLength(line, "utf8") + 1;
    if (used + cost > budget) {
      // The first line alone is over budget: show a byte-cut part of it rather than nothing.
      if (shownLines === 0) {
        out.push(cutToBytes(line, budget));
        shownLines = 1;
        lastLineComplete = false;
      }
      break;
    }
    out.push(line);
    used += cost;
    shownLines++;
    if (cut) linesCut++;
  }
  const note = truncationNote(
    refId,
    { lines: shownLines, lastLineComplete, linesCut },
    { lineCount, byteSize },
  );
  const text = `${out.join("\n")}\n${note}`;
  return { text: cutToBytes(text, limits.maxMessageBytes), truncated: true, lineCount, byteSize };
}

function hasLongLine(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let from = 0;
  while (from < text.length) {
    let at = text.indexOf("\n", from);
    if (at < 0) at = text.length;
    if (at - from > max) {
      // A line of exactly max chars plus its "\r" is not long.
      if (!(at - from === max + 1 && text.charCodeAt(at - 1) === 13)) return true;
    }
    from = at + 1;
  }
  return false;
}
