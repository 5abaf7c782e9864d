/**
 * The `inspect` tool (docs/design/tool-output-storage.md#inspect), registered
 * automatically when the worker has a BlobStore. Reads part of a stored output
 * back:
 * - no selector: meta information and the first part;
 * - `lines:20-50`: 1-based inclusive line range (text);
 * - `slice:3..8`: 0-based, end-exclusive index range (JSON arrays);
 * - `key:name`: one key (JSON objects).
 * Every error says what to do instead.
 */

import { errorMessage } from "@yoi/manifest/errors";
import * as z from "zod";
import { type BlobStore, BlobStoreError, type Content } from "./blob-store.ts";
import { contentKind, describeValue, splitLines } from "./summary.ts";
import { defineTool, type Tool, ToolError } from "./tool.ts";
import { byteLength, truncateUtf8 } from "./utf8.ts";

export const INSPECT_TOOL_NAME = "inspect";

/** Lines shown when no selector is given. */
const PREVIEW_LINES = 40;
/** Array entries shown when no selector is given. */
const PREVIEW_ENTRIES = 5;

/** The arguments `inspect` takes . */
export const inspectInput = z.object({
  blob_id: z.string().describe("The id from a [blob:<id>] marker in a tool result."),
  selector: z
    .string()
    .optional()
    .describe(
      "Omit for an overview. `lines:20-50` (1-based, inclusive) for text; `slice:3..8` (0-based, end exclusive) for JSON arrays; `key:name` for JSON objects.",
    ),
});

export interface InspectToolOptions {
  /** Cap of one answer in bytes; larger selections are cut with a note to narrow the range. */
  maxOutputBytes: number;
}

export function createInspectTool(store: BlobStore, options: InspectToolOptions): Tool<typeof inspectInput> {
  return defineTool({
    name: INSPECT_TOOL_NAME,
    description:
      "Read part of a large tool output that was stored instead of shown in full (its result starts with [blob:<id>]). " +
      "Without a selector you get its size and the first part. Selectors: `lines:20-50` (text, 1-based inclusive), " +
      "`slice:3..8` (JSON array, 0-based end-exclusive), `key:name` (JSON object).",
    inputSchema: inspectInput,
    storeLargeOutput: false,
    maxOutputBytes: options.maxOutputBytes,
    async execute({ blob_id, selector }) {
      const id = normalizeId(blob_id);
      const content = await load(store, id);
      const answer =
        selector === undefined || selector.trim() === ""
          ? overview(id, content)
          : select(id, content, selector.trim());
      return cap(answer, options.maxOutputBytes);
    },
  });
}

/** Accepts `[blob:<id>]` and `blob:<id>` too, since models copy the marker. */
function normalizeId(raw: string): string {
  let id = raw.trim();
  if (id.startsWith("[") && id.endsWith("]")) id = id.slice(1, -1);
  if (id.startsWith("blob:")) id = id.slice(5);
  return id.trim();
}

async function load(store: BlobStore, id: string): Promise<Content> {
  try {
    return await store.load(id);
  } catch (error) {
    if (BlobStoreError.isInstance(error) && error.code === "invalid_id") {
      throw new ToolError(
        `"${id}" is not a blob id. Blob ids are UUIDs shown in tool results as [blob:<id>]; copy the id from such a marker.`,
      );
    }
    if (BlobStoreError.isInstance(error) && error.code === "not_found") {
      throw new ToolError(
        `No stored output has id ${id}. Use an id from a [blob:<id>] marker in this conversation's tool results, or run the original tool again.`,
      );
    }
    const why = errorMessage(error);
    throw new ToolError(`Could not read blob ${id}: ${why}. Run the original tool again instead.`);
  }
}

function overview(id: string, content: Content): string {
  const kind = contentKind(content);
  if (content.kind === "text") {
    const lines = splitLines(content.text);
    const shown = lines.slice(0, PREVIEW_LINES);
    const more =
      lines.length > shown.length
        ? `\n(use selector lines:${shown.length + 1}-${Math.min(lines.length, shown.length + PREVIEW_LINES)} to read on; ${lines.length} lines in all)`
        : "";
    return `blob ${id}: text, ${lines.length} lines, ${byteLength(content.text)} bytes\n── lines 1-${shown.length} ──\n${shown.join("\n")}${more}`;
  }
  const value = content.value;
  if (Array.isArray(value)) {
    const shown = value.slice(0, PREVIEW_ENTRIES);
    const body = shown.map((entry, i) => `[${i}] ${JSON.stringify(entry) ?? "null"}`).join("\n");
    const more =
      value.length > shown.length
        ? `\n(use selector slice:${shown.length}..${Math.min(value.length, shown.length + 20)} to read on; ${value.length} entries in all)`
        : "";
    return `blob ${id}: json_array, ${value.length} entries\n── entries 0..${shown.length} ──\n${body}${more}`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    const keys = entries.map(([k, v]) => `${k}: ${describeValue(v)}`).join("\n");
    return `blob ${id}: json_object, ${entries.length} keys\n── keys ──\n${keys}\n(use selector key:<name> to read one value)`;
  }
  return `blob ${id}: ${kind}\n${JSON.stringify(value)}`;
}

function select(id: string, content: Content, selector: string): string {
  const kind = contentKind(content);
  const colon = selector.indexOf(":");
  const type = colon === -1 ? selector : selector.slice(0, colon);
  const arg = colon === -1 ? "" : selector.slice(colon + 1).trim();
  switch (type) {
    case "lines":
      if (content.kind !== "text") throw wrongKind(id, content, "lines");
      return selectLines(id, content.text, arg);
    case "slice":
      if (!Array.isArray(content.kind === "structured" ? content.value : undefined))
        throw wrongKind(id, content, "slice");
      return selectSlice(id, (content as { value: unknown[] }).value, arg);
    case "key":
      if (kind !== "json_object") throw wrongKind(id, content, "key");
      return selectKey(id, (content as { value: Record<string, unknown> }).value, arg);
    default:
      throw new ToolError(
        `Unknown selector "${selector}". Use lines:A-B for text (e.g. lines:1-40), slice:A..B for JSON arrays (e.g. slice:0..10), key:NAME for JSON objects, or omit the selector for an overview.`,
      );
  }
}

function wrongKind(id: string, content: Content, used: string): ToolError {
  const kind = contentKind(content);
  let instead: string;
  if (content.kind === "text") {
    const n = splitLines(content.text).length;
    instead = `it is text with ${n} lines; use lines:1-${Math.min(n, PREVIEW_LINES)}`;
  } else if (Array.isArray(content.value)) {
    instead = `it is a json_array with ${content.value.length} entries; use slice:0..${Math.min(content.value.length, 10)}`;
  } else if (kind === "json_object") {
    const keys = Object.keys(content.value as object);
    instead = `it is a json_object; use key:<name> with one of: ${listKeys(keys)}`;
  } else {
    instead = "it is a single JSON value; omit the selector";
  }
  return new ToolError(`Selector ${used}: does not apply to blob ${id}: ${instead}.`);
}

function selectLines(id: string, text: string, arg: string): string {
  const match = /^(\d+)\s*-\s*(\d+)$/.exec(arg) ?? /^(\d+)$/.exec(arg);
  const lines = splitLines(text);
  const n = lines.length;
  if (!match) {
    throw new ToolError(
      `Malformed selector "lines:${arg}". Write lines:A-B with 1-based inclusive line numbers, e.g. lines:1-${Math.min(n, PREVIEW_LINES)}.`,
    );
  }
  const start = Number(match[1]);
  const end = Number(match[2] ?? match[1]);
  if (start < 1 || end < start) {
    throw new ToolError(
      `Line range ${start}-${end} is invalid: lines are numbered from 1 and A must not exceed B (e.g. lines:1-${Math.min(n, PREVIEW_LINES)}).`,
    );
  }
  if (start > n) {
    throw new ToolError(
      `Line range ${start}-${end} is out of bounds: blob ${id} has ${n} lines. Use a range within 1-${n}.`,
    );
  }
  if (end > n) {
    throw new ToolError(
      `Line range ${start}-${end} is out of bounds: blob ${id} has ${n} lines. Use lines:${start}-${n}.`,
    );
  }
  return `blob ${id}: lines ${start}-${end} of ${n}\n${lines.slice(start - 1, end).join("\n")}`;
}

function selectSlice(id: string, value: unknown[], arg: string): string {
  const match = /^(\d+)\s*\.\.\s*(\d+)$/.exec(arg);
  const n = value.length;
  if (!match) {
    throw new ToolError(
      `Malformed selector "slice:${arg}". Write slice:A..B (0-based, B exclusive), e.g. slice:0..${Math.min(n, 10)}.`,
    );
  }
  const start = Number(match[1]);
  const end = Number(match[2]);
  if (end <= start) {
    throw new ToolError(
      `Slice ${start}..${end} is empty: B is exclusive and must be greater than A (e.g. slice:${start}..${Math.min(n, start + 10)}).`,
    );
  }
  if (start >= n || end > n) {
    throw new ToolError(
      `Slice ${start}..${end} is out of bounds: blob ${id} has ${n} entries (indices 0..${n}). Use a range within 0..${n}.`,
    );
  }
  const body = value
    .slice(start, end)
    .map((entry, i) => `[${start + i}] ${JSON.stringify(entry) ?? "null"}`)
    .join("\n");
  return `blob ${id}: entries ${start}..${end} of ${n}\n${body}`;
}

function selectKey(id: string, value: Record<string, unknown>, key: string): string {
  if (key === "")
    throw new ToolError(`Selector key: needs a name. Available keys: ${listKeys(Object.keys(value))}.`);
  if (!Object.hasOwn(value, key)) {
    throw new ToolError(`Blob ${id} has no key "${key}". Available keys: ${listKeys(Object.keys(value))}.`);
  }
  const v = value[key];
  return `blob ${id}: key ${key} (${describeValue(v)})\n${JSON.stringify(v, null, 2) ?? "null"}`;
}

function listKeys(keys: string[]): string {
  const MAX = 50;
  const shown = keys.slice(0, MAX).join(", ");
  return keys.length > MAX ? `${shown}, ... (${keys.length} in all)` : shown;
}

function cap(text: string, maxBytes: number): string {
  const total = byteLength(text);
  if (total <= maxBytes) return text;
  const note = `\n[...truncated at ${maxBytes} of ${total} bytes; select a smaller range to see the rest]`;
  return truncateUtf8(text, Math.max(0, maxBytes - byteLength(note))) + note;
}
