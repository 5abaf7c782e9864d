/** UTF-8 byte helpers that never split a character. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`,
 * cut at a character boundary (never half a code point).
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  // Fast path: a string of n UTF-16 units is at most 3n bytes.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

/** Like `truncateUtf8` but appends `marker` (within the budget) when it cuts. */
export function capUtf8(text: string, maxBytes: number, marker = "…"): string {
  if (byteLength(text) <= maxBytes) return text;
  return truncateUtf8(text, maxBytes - byteLength(marker)) + marker;
}
