/**
 * Turns what a tool returned into what enters history: auto-promotion of large
 * strings to Stored (docs/design/tool-output-storage.md), storing content in
 * the BlobStore, the summary with its `[blob:<id>]` prefix, and the per-tool
 * byte cap with a visible truncation note. Without a BlobStore results stay
 * whole unless `maxBytesWithoutStore` asks for a cap.
 */
import type { ImagePart, OutputRef } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import { type BlobStore, BlobStoreError, type Content } from "./blob-store.ts";
import { countLines, summarize } from "./summary.ts";
import type { ToolReturn } from "./tool.ts";
import { byteLength, truncateUtf8 } from "./utf8.ts";

export interface OutputLimits {
  inlineThresholdBytes: number;
  summaryMaxBytes: number;
  summaryHeadLines: number;
  summaryTailLines: number;
  /** Cap of an inline result when a BlobStore is set. */
  maxBytes: number;
  /**
   * Cap of every result when no BlobStore is set; undefined keeps results
   * whole (without a store everything stays Inline).
   */
  maxBytesWithoutStore?: number | undefined;
}

export interface ProcessedOutput {
  /** What the model sees. */
  output: string;
  isError: boolean;
  /** The complete output text before summary or cap (for ContextPolicy.prepareToolResult). */
  full: string;
  outputRef?: OutputRef;
  /** Images of an inline output, passed through. */
  images?: ImagePart[];
}

export interface ProcessOptions {
  limits: OutputLimits;
  blobStore: BlobStore | undefined;
  /** False for tools whose strings must never be promoted (inspect). */
  storeLargeOutput: boolean;
  isError?: boolean;
}

/** The truncation note appended to a capped inline output. */
export function truncationNote(totalBytes: number, hasStore: boolean): string {
  return hasStore
    ? `\n[...truncated, ${totalBytes} bytes total]`
    : `\n[...truncated, ${totalBytes} bytes total; the rest was not kept — ask for a narrower result]`;
}

/** Caps `text` at `maxBytes` (note included), never splitting a character. */
export function capInline(text: string, maxBytes: number, hasStore: boolean): string {
  const total = byteLength(text);
  if (total <= maxBytes) return text;
  const note = truncationNote(total, hasStore);
  return truncateUtf8(text, Math.max(0, maxBytes - byteLength(note))) + note;
}

/** Parses a string that is a JSON array or object; undefined for anything else. */
export function parseJsonContainer(text: string): unknown[] | Record<string, unknown> | undefined {
  const trimmed = text.trim();
  const first = trimmed[0];
  const last = trimmed[trimmed.length - 1];
  if (!((first === "[" && last === "]") || (first === "{" && last === "}"))) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    if (value !== null && typeof value === "object") return value as unknown[] | Record<string, unknown>;
  } catch {
    // Not JSON after all: it stays text.
  }
  return undefined;
}

/** The text form of content: the text itself, or pretty JSON. */
export function contentText(content: Content): string {
  return content.kind === "text" ? content.text : (JSON.stringify(content.value, null, 2) ?? "null");
}

export async function processToolReturn(
  returned: ToolReturn,
  options: ProcessOptions,
): Promise<ProcessedOutput> {
  const { limits, blobStore } = options;
  const hasStore = blobStore !== undefined;
  // With a store an inline result is capped (the rest is one `inspect` away
  // for Stored output); without one nothing is capped unless asked for.
  const cap = hasStore ? limits.maxBytes : limits.maxBytesWithoutStore;
  const inline = (text: string) => (cap === undefined ? text : capInline(text, cap, hasStore));
  if (typeof returned === "string") {
    const isError = options.isError ?? false;
    if (blobStore && options.storeLargeOutput && byteLength(returned) > limits.inlineThresholdBytes) {
      const json = parseJsonContainer(returned);
      const content: Content =
        json === undefined ? { kind: "text", text: returned } : { kind: "structured", value: json };
      return store(blobStore, content, undefined, returned, isError, limits);
    }
    return { output: inline(returned), isError, full: returned };
  }
  const isError = returned.isError ?? options.isError ?? false;
  if (returned.kind === "inline") {
    return {
      output: inline(returned.text),
      isError,
      full: returned.text,
      ...(returned.images?.length ? { images: returned.images } : {}),
    };
  }
  const full = contentText(returned.content);
  if (!blobStore) return { output: inline(full), isError, full };
  return store(blobStore, returned.content, returned.summary, full, isError, limits);
}

async function store(
  blobStore: BlobStore,
  content: Content,
  givenSummary: string | undefined,
  full: string,
  isError: boolean,
  limits: OutputLimits,
): Promise<ProcessedOutput> {
  let id: string;
  try {
    id = await blobStore.store(content);
  } catch (error) {
    // A store that cannot write (a full disk) ends the run: going on would show work as done that is not recorded.
    if (BlobStoreError.isInstance(error)) throw error;
    throw new BlobStoreError("io", `the tool output could not be stored: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const summary =
    givenSummary === undefined
      ? summarize(id, content, {
          maxBytes: limits.summaryMaxBytes,
          headLines: limits.summaryHeadLines,
          tailLines: limits.summaryTailLines,
        })
      : capInline(`[blob:${id}] ${givenSummary}`, limits.maxBytes, true);
  const outputRef: OutputRef = { id, byteSize: byteLength(full) };
  if (content.kind === "text") outputRef.lineCount = countLines(content.text);
  return { output: summary, isError, full, outputRef };
}
