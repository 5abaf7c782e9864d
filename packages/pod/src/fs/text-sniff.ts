/**
 * Text vs binary by sniffing the first bytes of a file, the way git and
 * ripgrep do: NUL bytes, invalid UTF-8, and UTF-16/32 byte order marks mean
 * "not UTF-8 text". A UTF-8 BOM is text (and is stripped by readers).
 */

/** Bytes a reader sniffs before deciding. */
export const SNIFF_BYTES = 8192;

export type Classification =
  | { kind: "text" /** A UTF-8 byte order mark starts the file (3 bytes to skip). */; bom: boolean }
  | {
      kind: "binary" /** Why, as a phrase that completes "<path> ..." (e.g. "is a PNG image"). */;
      reason: string;
      /**
       * What gave it away: a UTF-16/32 byte order mark, a known file format's
       * magic number, a NUL byte, or (only that) a sequence that is not UTF-8.
       */
      cause: "bom" | "magic" | "nul" | "utf8";
    };

const MAGIC: ReadonlyArray<{ bytes: readonly number[]; what: string }> = [
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], what: "a PNG image" },
  { bytes: [0xff, 0xd8, 0xff], what: "a JPEG image" },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: "a GIF image" },
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: "a PDF document" },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: "a ZIP archive" },
  { bytes: [0x1f, 0x8b], what: "a gzip archive" },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: "an ELF executable" },
  { bytes: [0x00, 0x61, 0x73, 0x6d], what: "a WebAssembly module" },
];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/**
 * Classifies the first bytes of a file. `atEof` says whether `bytes` is the
 * whole file: only then is a multi-byte character cut at the end an error
 * (otherwise the cut is the sniff boundary, not the file's).
 */
export function classifyBytes(bytes: Uint8Array, atEof: boolean): Classification {
  if (startsWith(bytes, [0xff, 0xfe, 0x00, 0x00]))
    return { kind: "binary", reason: "is UTF-32LE text (BOM); only UTF-8 is read", cause: "bom" };
  if (startsWith(bytes, [0x00, 0x00, 0xfe, 0xff]))
    return { kind: "binary", reason: "is UTF-32BE text (BOM); only UTF-8 is read", cause: "bom" };
  if (startsWith(bytes, [0xff, 0xfe]))
    return { kind: "binary", reason: "is UTF-16LE text (BOM); only UTF-8 is read", cause: "bom" };
  if (startsWith(bytes, [0xfe, 0xff]))
    return { kind: "binary", reason: "is UTF-16BE text (BOM); only UTF-8 is read", cause: "bom" };
  for (const magic of MAGIC) {
    if (startsWith(bytes, magic.bytes))
      return { kind: "binary", reason: `is ${magic.what} (binary)`, cause: "magic" };
  }
  if (bytes.indexOf(0) !== -1)
    return { kind: "binary", reason: "is binary (contains NUL bytes)", cause: "nul" };
  const bom = startsWith(bytes, [0xef, 0xbb, 0xbf]);
  if (!isValidUtf8(bytes, atEof)) return { kind: "binary", reason: "is not valid UTF-8 text", cause: "utf8" };
  return { kind: "text", bom };
}

/** Whether `bytes` is valid UTF-8; with `atEof` false a character cut at the end is allowed. */
export function isValidUtf8(bytes: Uint8Array, atEof: boolean): boolean {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  try {
    // stream: true holds back an incomplete trailing sequence instead of failing on it.
    decoder.decode(bytes, { stream: true });
    if (atEof) decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/**
 * The largest cut `<= max` that does not split a UTF-8 character of `bytes`
 * (which must hold at least the bytes up to `max`, ideally a few more).
 */
export function utf8Boundary(bytes: Uint8Array, max: number): number {
  if (max >= bytes.length) return bytes.length;
  let cut = max;
  // Step back over continuation bytes (10xxxxxx): the cut must land on a lead byte.
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return cut;
}
