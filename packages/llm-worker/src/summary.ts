/**
 * The auto-summaries of Stored content
 * (docs/design/tool-output-storage.md#summaries):
 *
 * ```
 * [blob:<id>] text | {N} lines        [blob:<id>] json_array | {N} entries     [blob:<id>] json_object | {N} keys
 * ── head ──                          ── schema ──                             ── keys ──
 * {first 5 lines}                     {keys of the first element: type}        {key: type/size}
 * ── tail ──                          ── head ──
 * {last 3 lines}                      {first 2 entries}
 * ```
 *
 * capped at `maxBytes` (400) without splitting a character. A section with
 * nothing in it (the tail of a short text, the head of an empty array) is
 * left out. When the parts
 * do not fit, long lines are shortened (with `…`) so that every section stays
 * visible; the header line with the blob id always survives.
 */
import type { Content } from "./blob-store.ts";
import { byteLength, capUtf8, truncateUtf8 } from "./utf8.ts";

export interface SummaryLimits {
  maxBytes: number;
  headLines: number;
  tailLines: number;
}

/** Splits text into lines; a final newline does not start an extra line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Number of lines as `splitLines` counts them, without allocating them. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 1;
  let i = text.indexOf("\n");
  while (i !== -1) {
    n++;
    i = text.indexOf("\n", i + 1);
  }
  return text.endsWith("\n") ? n - 1 : n;
}

export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** `array(3 entries)`, `object(4 keys)`, `string(12 bytes)`, `number`, ... */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `array(${value.length} entries)`;
  if (value !== null && typeof value === "object") return `object(${Object.keys(value).length} keys)`;
  if (typeof value === "string") return `string(${byteLength(value)} bytes)`;
  return jsonType(value);
}

/** The kind label of stored content. */
export function contentKind(content: Content): "text" | "json_array" | "json_object" | "json_value" {
  if (content.kind === "text") return "text";
  if (Array.isArray(content.value)) return "json_array";
  if (content.value !== null && typeof content.value === "object") return "json_object";
  return "json_value";
}

export function summarize(id: string, content: Content, limits: SummaryLimits): string {
  const header = `[blob:${id}] `;
  if (content.kind === "text") {
    const lines = splitLines(content.text);
    const head = lines.slice(0, limits.headLines);
    const tailCount = Math.max(0, Math.min(limits.tailLines, lines.length - head.length));
    const tail = tailCount === 0 ? [] : lines.slice(lines.length - tailCount);
    // Lines already in the head are not repeated in the tail; a tail left
    // empty is not shown (`fit` drops empty sections).
    const sections: Section[] = [
      { title: "head", lines: head },
      { title: "tail", lines: tail },
    ];
    return fit(`${header}text | ${lines.length} lines`, sections, limits.maxBytes);
  }
  const value = content.value;
  if (Array.isArray(value)) {
    const first = value[0];
    const schema =
      value.length === 0
        ? ["(empty)"]
        : first !== null && typeof first === "object" && !Array.isArray(first)
          ? Object.entries(first).map(([k, v]) => `${k}: ${jsonType(v)}`)
          : [jsonType(first)];
    const head = value.slice(0, 2).map((entry) => JSON.stringify(entry) ?? "null");
    return fit(
      `${header}json_array | ${value.length} entries`,
      [
        { title: "schema", lines: schema },
        { title: "head", lines: head },
      ],
      limits.maxBytes,
    );
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    return fit(
      `${header}json_object | ${entries.length} keys`,
      [{ title: "keys", lines: entries.map(([k, v]) => `${k}: ${describeValue(v)}`) }],
      limits.maxBytes,
    );
  }
  // A bare JSON scalar (not one of the three formats, but storable): show it.
  return fit(
    `${header}json_value | ${jsonType(value)}`,
    [{ title: "value", lines: [JSON.stringify(value) ?? "null"] }],
    limits.maxBytes,
  );
}

interface Section {
  title: string;
  lines: string[];
}

/**
 * Joins header and sections within `maxBytes`. Budget is shared by
 * water-filling: short lines keep their length, long lines share the rest
 * equally. When there are too many lines for every one to keep a dozen
 * bytes, the whole rendering is cut at `maxBytes` (on a character boundary)
 * instead; the header's count still says how much there is. A section with
 * no lines is left out: an empty `── tail ──` only suggests something is missing.
 */
function fit(header: string, allSections: Section[], maxBytes: number): string {
  const sections = allSections.filter((s) => s.lines.length > 0);
  const render = (secs: Section[]): string => {
    let out = header;
    for (const s of secs) {
      out += `\n── ${s.title} ──`;
      for (const line of s.lines) out += `\n${line}`;
    }
    return out;
  };
  const full = render(sections);
  if (byteLength(full) <= maxBytes) return full;

  // Fixed cost: header, section titles, one newline per line.
  let fixed = byteLength(header);
  let lineCount = 0;
  for (const s of sections) {
    fixed += byteLength(`\n── ${s.title} ──`);
    fixed += s.lines.length;
    lineCount += s.lines.length;
  }
  const budget = maxBytes - fixed;
  const MIN_LINE = 12;
  if (lineCount === 0 || budget < lineCount * MIN_LINE) {
    // Too many lines for the budget: keep the structure, shorten hard.
    return capUtf8(full, maxBytes);
  }
  const lengths = sections.flatMap((s) => s.lines.map((l) => byteLength(l)));
  const cap = waterFill(lengths, budget);
  let k = 0;
  const shortened = sections.map((s) => ({
    title: s.title,
    lines: s.lines.map((line) => {
      const c = cap[k++]!;
      return byteLength(line) <= c ? line : capUtf8(line, c);
    }),
  }));
  // capUtf8 may leave a few bytes unused; the final guard never exceeds the cap.
  return truncateUtf8(render(shortened), maxBytes);
}

/** Per-item caps: items under the fair share keep their size; the rest share what is left. */
function waterFill(lengths: number[], budget: number): number[] {
  const order = lengths.map((len, i) => ({ len, i })).sort((a, b) => a.len - b.len);
  const caps = new Array<number>(lengths.length).fill(0);
  let remaining = budget;
  let left = lengths.length;
  for (const { len, i } of order) {
    const share = Math.floor(remaining / left);
    const c = Math.min(len, share);
    caps[i] = c;
    remaining -= c;
    left--;
  }
  return caps;
}
