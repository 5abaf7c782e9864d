/**
 * Tool output (docs/design/tool-output-storage.md#inline-and-stored): Inline
 * text, or Stored (a summary in history plus the full Content in the
 * BlobStore).
 */
import type { ImagePart } from "@yoi/llm-client";
import type { Content } from "./blob-store.ts";

/** A small result that enters history as is. */
export interface InlineOutput {
  kind: "inline";
  text: string;
  /** Mark the result as an error the model should act on. Default false. */
  isError?: boolean;
  /** Images that go with the text (ToolResultItem.images); not counted against the byte cap. */
  images?: ImagePart[];
}

/**
 * A large result: only the summary enters history; the content goes to the
 * BlobStore and the `inspect` tool reads it back.
 *
 * - `summary` omitted: the worker generates the summary
 *   (`[blob:<id>] text | N lines` ...).
 * - `summary` given: the worker prefixes it with `[blob:<id>] ` so the model
 *   can always find the id.
 * - Without a BlobStore the content is sent inline (text, or JSON for
 *   structured content), subject to the per-tool byte cap.
 */
export interface StoredOutput {
  kind: "stored";
  summary?: string;
  content: Content;
  isError?: boolean;
}

export type ToolOutput = InlineOutput | StoredOutput;

/** An Inline output. */
export function inlineOutput(
  text: string,
  options: { isError?: boolean; images?: ImagePart[] } = {},
): InlineOutput {
  const out: InlineOutput = { kind: "inline", text };
  if (options.isError) out.isError = true;
  if (options.images?.length) out.images = options.images;
  return out;
}

/** A Stored output of text content (summary generated unless given). */
export function storedText(text: string, summary?: string): StoredOutput {
  const out: StoredOutput = { kind: "stored", content: { kind: "text", text } };
  if (summary !== undefined) out.summary = summary;
  return out;
}

/** A Stored output of structured JSON content (an array or an object; summary generated unless given). */
export function storedJson(value: unknown, summary?: string): StoredOutput {
  const out: StoredOutput = { kind: "stored", content: { kind: "structured", value } };
  if (summary !== undefined) out.summary = summary;
  return out;
}

/** Whether a value returned by a tool is a ToolOutput (as opposed to a plain string). */
export function isToolOutput(value: unknown): value is ToolOutput {
  if (typeof value !== "object" || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  if (kind === "inline") return typeof (value as { text?: unknown }).text === "string";
  if (kind === "stored") return typeof (value as { content?: unknown }).content === "object";
  return false;
}
