/**
 * A code pack: the chunks one kind of run loaded (print, interactive, a
 * subcommand), each with its source and the V8 code cache taken after the
 * run, in one file the chunk loader reads with one call. Fifty small reads
 * (a source and a cache per chunk) cost more before the first request than
 * one read of the pack.
 *
 * Layout (big-endian):
 *   MAGIC, u32 entry count, then for each entry:
 *     u16 name length, name (ASCII),
 *     u32 size and f64 mtime (ms) of the chunk file the source was read from,
 *     u32 source offset, u32 source length, u32 cache offset, u32 cache length, u32 CRC-32 of the cache
 *   u32 length of the sources, u32 length of their shared part,
 *   u32 CRC-32 of everything before it (the index),
 *   the sources (ASCII, one after another), the caches.
 * The shared part holds the sources of the chunks the run that wrote the
 * pack loaded, in the order it loaded them (the next run of the kind most
 * likely loads the same): it is decoded a segment of about 1 MB at a time,
 * when a chunk in it is first loaded, and each chunk's source is a slice
 * of its segment, no copy per chunk (past about 1 MB Node keeps the text
 * outside the JavaScript heap, where the garbage collector does not move
 * it). The sources of chunks carried over from earlier runs (another
 * provider's SDK, say) follow, each decoded only if its chunk is loaded.
 * A packed source is used only while its chunk file still has that size and
 * mtime (an edited install reads the file again); a cache only when its CRC
 * matches (V8 then checks its own version, flags and the source's length).
 * A pack that does not parse to its last byte is not used at all.
 */
import { renameSync, writeFileSync } from "node:fs";

const MAGIC = Buffer.from("yoipack4\n");
const ENTRY_FIXED = 2 + 4 + 8 + 4 * 5;
/** Shared sources are decoded in pieces of about this many bytes (past some 1 MB Node keeps a string off the heap). */
const SEGMENT_BYTES = 1 << 20;

/** One chunk in a pack. */
export interface PackedChunk {
  /** Size and mtime of the chunk file when it was packed. */
  size: number;
  mtimeMs: number;
  /** The chunk's source. */
  source(): string;
  /** The V8 code cache, or undefined when its CRC does not match (checked when first asked for). */
  cache(): Buffer | undefined;
}

/** What a new pack holds for one chunk. */
export interface ChunkToPack {
  name: string;
  size: number;
  mtimeMs: number;
  source: string;
  cache: Buffer;
  /** Carried over from an earlier pack: not loaded by the run that writes this one. */
  carried?: boolean;
}

/** zlib's CRC-32, loaded on first use: bin.js holds this module, and `--version` should not pay for zlib. */
export function crc32(data: Uint8Array): number {
  return (process.getBuiltinModule("node:zlib") as typeof import("node:zlib")).crc32(data) >>> 0;
}

/** The chunks of a pack's bytes, or undefined when they are not a whole pack. */
export function parseCodePack(bytes: Buffer): Map<string, PackedChunk> | undefined {
  if (bytes.length < MAGIC.length + 4 || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const count = bytes.readUInt32BE(MAGIC.length);
  let at = MAGIC.length + 4;
  const index: { name: string; size: number; mtimeMs: number; fields: number[] }[] = [];
  for (let i = 0; i < count; i++) {
    if (at + ENTRY_FIXED > bytes.length) return undefined;
    const nameLength = bytes.readUInt16BE(at);
    if (at + ENTRY_FIXED + nameLength > bytes.length) return undefined;
    const name = bytes.toString("latin1", at + 2, at + 2 + nameLength);
    at += 2 + nameLength;
    const fields = [0, 1, 2, 3, 4].map((k) => bytes.readUInt32BE(at + 12 + 4 * k));
    index.push({ name, size: bytes.readUInt32BE(at), mtimeMs: bytes.readDoubleBE(at + 4), fields });
    at += ENTRY_FIXED - 2;
  }
  if (at + 12 > bytes.length) return undefined;
  if (crc32(bytes.subarray(0, at + 8)) !== bytes.readUInt32BE(at + 8)) return undefined;
  const sourcesAt = at + 12;
  const cachesAt = sourcesAt + bytes.readUInt32BE(at);
  const sharedEnd = sourcesAt + bytes.readUInt32BE(at + 4);
  if (cachesAt > bytes.length || sharedEnd > cachesAt) return undefined;
  let cachesEnd = cachesAt;
  for (const { fields } of index) {
    const [sourceAt, sourceLength, cacheAt, cacheLength] = fields as [number, number, number, number];
    if (sourcesAt + sourceAt + sourceLength > cachesAt) return undefined;
    cachesEnd = Math.max(cachesEnd, cachesAt + cacheAt + cacheLength);
  }
  if (cachesEnd !== bytes.length) return undefined;
  // The shared part in segments of whole chunks, in the order the writing run loaded them, each about
  // SEGMENT_BYTES and decoded when a chunk in it is first loaded: what start-up loads first comes first,
  // and what a session loads later (a Markdown renderer, say) is decoded only then.
  const segments: { start: number; end: number; text?: string }[] = [];
  const segmentOf = new Map<string, (typeof segments)[number]>();
  for (const { name, fields } of index) {
    const [sourceAt, sourceLength] = fields as [number, number];
    if (sourcesAt + sourceAt + sourceLength > sharedEnd) continue;
    let segment = segments.at(-1);
    if (segment === undefined || segment.end - segment.start >= SEGMENT_BYTES) {
      segment = { start: sourceAt, end: sourceAt };
      segments.push(segment);
    }
    segment.end = Math.max(segment.end, sourceAt + sourceLength);
    segmentOf.set(name, segment);
  }
  const chunks = new Map<string, PackedChunk>();
  for (const { name, size, mtimeMs, fields } of index) {
    const [sourceAt, sourceLength, cacheAt, cacheLength, crc] = fields as [
      number,
      number,
      number,
      number,
      number,
    ];
    const cache = bytes.subarray(cachesAt + cacheAt, cachesAt + cacheAt + cacheLength);
    chunks.set(name, {
      size,
      mtimeMs,
      source: () => {
        const segment = segmentOf.get(name);
        if (segment === undefined)
          return bytes.toString("latin1", sourcesAt + sourceAt, sourcesAt + sourceAt + sourceLength);
        segment.text ??= bytes.toString("latin1", sourcesAt + segment.start, sourcesAt + segment.end);
        return segment.text.slice(sourceAt - segment.start, sourceAt - segment.start + sourceLength);
      },
      cache: () => (crc32(cache) === crc ? cache : undefined),
    });
  }
  return chunks;
}

/** The bytes of a pack of `chunks` (the carried ones are put last). */
export function encodeCodePack(all: readonly ChunkToPack[]): Buffer {
  const chunks = [...all.filter((c) => !c.carried), ...all.filter((c) => c.carried)];
  const sources = chunks.map((c) => Buffer.from(c.source, "latin1"));
  const heads: Buffer[] = [];
  let sourceAt = 0;
  let cacheAt = 0;
  chunks.forEach((chunk, i) => {
    const name = Buffer.from(chunk.name, "latin1");
    const head = Buffer.alloc(ENTRY_FIXED + name.length);
    head.writeUInt16BE(name.length, 0);
    name.copy(head, 2);
    let at = 2 + name.length;
    head.writeUInt32BE(chunk.size, at);
    head.writeDoubleBE(chunk.mtimeMs, at + 4);
    at += 12;
    for (const value of [sourceAt, sources[i]!.length, cacheAt, chunk.cache.length, crc32(chunk.cache)]) {
      head.writeUInt32BE(value, at);
      at += 4;
    }
    sourceAt += sources[i]!.length;
    cacheAt += chunk.cache.length;
    heads.push(head);
  });
  const count = Buffer.alloc(4);
  count.writeUInt32BE(chunks.length);
  const lengths = Buffer.alloc(8);
  lengths.writeUInt32BE(sourceAt);
  lengths.writeUInt32BE(
    chunks.reduce((sum, c, i) => sum + (c.carried ? 0 : sources[i]!.length), 0),
    4,
  );
  const indexCrc = Buffer.alloc(4);
  indexCrc.writeUInt32BE(crc32(Buffer.concat([MAGIC, count, ...heads, lengths])));
  return Buffer.concat([
    MAGIC,
    count,
    ...heads,
    lengths,
    indexCrc,
    ...sources,
    ...chunks.map((c) => c.cache),
  ]);
}

/** Writes a pack of `chunks`, beside and renamed into place, so a reader never sees half of one. */
export function writeCodePack(file: string, chunks: readonly ChunkToPack[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, encodeCodePack(chunks), { mode: 0o600 });
  renameSync(temp, file);
}
