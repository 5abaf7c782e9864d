/**
 * Bounded input: a prompt (with its `@file` attachments) that cannot fit the
 * model's context window is refused before anything is sent, and stdin is
 * read only up to what the largest window could hold, so a 50 MB pipe costs
 * a few MB of memory, not gigabytes.
 */
import { BYTES_PER_TOKEN_ESTIMATE, estimateTokens, MODEL_CATALOG } from "@yoi/manifest";
import { classifyBytes } from "@yoi/pod";
import { groupDigits } from "./format-number.ts";

/** Tokens of the largest window any catalog model has (and at least 2M): stdin is never read past this. */
const LARGEST_WINDOW_TOKENS = Math.max(2_000_000, ...MODEL_CATALOG.map((m) => m.contextWindow));

/** Bytes of stdin read at most; one more means "too large for any model". */
export const STDIN_LIMIT_BYTES = LARGEST_WINDOW_TOKENS * BYTES_PER_TOKEN_ESTIMATE;

/** What stdin held, read up to {@link STDIN_LIMIT_BYTES}. */
export interface BoundedText {
  text: string;
  /** Bytes read (at most the limit + one chunk). */
  bytes: number;
  /** More was there than the limit: `text` is incomplete and must not be sent. */
  overflow: boolean;
  /**
   * Surely not text (an image, an archive, NUL bytes, UTF-16), as a phrase
   * that completes "the input on stdin ..."; `text` is then empty.
   */
  binary?: { reason: string; cause: "bom" | "magic" | "nul" };
}

/** Reads a stream to its end or to `limit` bytes, whichever comes first (then stops reading). */
export async function readBounded(
  stream: NodeJS.ReadableStream & { destroy?: () => void },
  limit = STDIN_LIMIT_BYTES,
): Promise<BoundedText> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    if (bytes > limit) {
      stream.destroy?.();
      return { text: "", bytes, overflow: true };
    }
    chunks.push(buffer);
  }
  const all = Buffer.concat(chunks);
  // Sniffed as attached files are. A stray byte that is not UTF-8 (a log line in Latin-1) is let through,
  // decoded as U+FFFD, as before; a file format, NUL bytes or UTF-16/32 are surely not a prompt.
  const kind = classifyBytes(all, true);
  if (kind.kind === "binary" && kind.cause !== "utf8")
    return { text: "", bytes, overflow: false, binary: { reason: kind.reason, cause: kind.cause } };
  return { text: all.toString("utf8"), bytes, overflow: false };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The refusal for input of `bytes` (prompt plus attached files) against a
 * window of `window` tokens, or undefined when it may fit. `atLeast`: the
 * size is a lower bound (stdin was cut off).
 */
export function inputTooLarge(
  bytes: number,
  window: number,
  model: string,
  options: { atLeast?: boolean; what?: string } = {},
): string | undefined {
  if (window <= 0) return undefined;
  const tokens = Math.ceil(bytes / BYTES_PER_TOKEN_ESTIMATE);
  if (tokens <= window) return undefined;
  const size = `${options.atLeast ? "more than " : ""}${megabytes(bytes)} (about ${groupDigits(tokens)} tokens)`;
  return `${options.what ?? "the input"} is ${size}, more than ${model}'s context window of ${groupDigits(window)} tokens; nothing was sent. Send a smaller part, or let the model read the file with read_file instead of attaching it`;
}

/** Estimated tokens of a text, for callers that add up several parts. */
export { estimateTokens };
