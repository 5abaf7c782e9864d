/**
 * A code pack: the chunks one kind of run loaded (print, interactive, a
 * subcommand), each with its source and the V8 code cache taken after the
 * run, in one file the chunk loader reads with one call. Fifty small reads
 * (a source and a cache per chunk) cost some 2.5 ms before the first request;
 * one read of the pack, about half a millisecond.
 *
 * Layout: `MAGIC`, then one entry after another:
 *   u16 name length, name (ASCII)
 *   u32 size and f64 mtime (ms) of the chunk file the source was read from
 *   u32 source length, u32 cache length, u32 CRC-32 of the cache
 *   source (ASCII), cache
 * A packed source is used only while its chunk file still has that size and
 * mtime (an edited install reads the file again); a cache only when its CRC
 * matches (V8 then checks its own version, flags and the source's length).
 * A pack that does not parse to its last byte is not used at all.
 */
import { renameSync, writeFileSync } from "node:fs";

const MAGIC = Buffer.from("yoipack1\n");
const FIXED_BYTES = 2 + 4 + 8 + 4 + 4 + 4;

/** One chunk in a pack. */
export interface PackedChunk {
  /** Size and mtime of the chunk file when it was packed. */
  size: number;
  mtimeMs: number;
  /** The chunk's source (decoded when asked for). */
  source(): string;
  /** The V8 code cache, or undefined when its CRC does not match. */
  cache: Buffer | undefined;
  /** The entry's bytes as they are in the pack, to carry it into the next pack unchanged. */
  raw: Buffer;
}

/** What a new pack holds for one chunk. */
export interface ChunkToPack {
  name: string;
  size: number;
  mtimeMs: number;
  source: string;
  cache: Buffer;
}

/** zlib's CRC-32, loaded on first use: bin.js holds this module, and `--version` should not pay for zlib. */
export function crc32(data: Uint8Array): number {
  return (process.getBuiltinModule("node:zlib") as typeof import("node:zlib")).crc32(data) >>> 0;
}

/** The chunks of a pack's bytes, or undefined when they are not a whole pack. */
export function parseCodePack(bytes: Buffer): Map<string, PackedChunk> | undefined {
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const chunks = new Map<string, PackedChunk>();
  let at = MAGIC.length;
  while (at < bytes.length) {
    if (at + FIXED_BYTES > bytes.length) return undefined;
    const start = at;
    const nameLength = bytes.readUInt16BE(at);
    at += 2;
    const name = bytes.toString("latin1", at, at + nameLength);
    at += nameLength;
    if (at + FIXED_BYTES - 2 > bytes.length) return undefined; // the rest of the fixed fields
    const size = bytes.readUInt32BE(at);
    const mtimeMs = bytes.readDoubleBE(at + 4);
    const sourceLength = bytes.readUInt32BE(at + 12);
    const cacheLength = bytes.readUInt32BE(at + 16);
    const crc = bytes.readUInt32BE(at + 20);
    at += 24;
    const sourceAt = at;
    const cacheAt = sourceAt + sourceLength;
    at = cacheAt + cacheLength;
    if (at > bytes.length) return undefined;
    const cache = bytes.subarray(cacheAt, at);
    chunks.set(name, {
      size,
      mtimeMs,
      source: () => bytes.toString("latin1", sourceAt, cacheAt),
      cache: crc32(cache) === crc ? cache : undefined,
      raw: bytes.subarray(start, at),
    });
  }
  return chunks;
}

/** The bytes of one entry. */
export function packEntry(chunk: ChunkToPack): Buffer {
  const name = Buffer.from(chunk.name, "latin1");
  const source = Buffer.from(chunk.source, "latin1");
  const head = Buffer.alloc(2 + name.length + 24);
  head.writeUInt16BE(name.length, 0);
  name.copy(head, 2);
  let at = 2 + name.length;
  head.writeUInt32BE(chunk.size, at);
  head.writeDoubleBE(chunk.mtimeMs, at + 4);
  head.writeUInt32BE(source.length, at + 12);
  head.writeUInt32BE(chunk.cache.length, at + 16);
  head.writeUInt32BE(crc32(chunk.cache), at + 20);
  at += 24;
  return Buffer.concat([head, source, chunk.cache]);
}

/** Writes a pack of `entries` (from {@link packEntry} or carried over raw), beside and renamed into place. */
export function writeCodePack(file: string, entries: readonly Buffer[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, Buffer.concat([MAGIC, ...entries]), { mode: 0o600 });
  renameSync(temp, file);
}
