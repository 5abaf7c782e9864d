/**
 * Small, valid images of each format, built here byte by byte (no binary
 * fixtures): a PNG through zlib, a baseline JPEG of one flat 8×8 block, the
 * classic one-pixel GIF and a one-pixel lossless WebP.
 */
import { randomBytes } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** An RGB PNG of `width`×`height` red pixels, or of noise (which does not compress). */
export function png(width: number, height: number, options: { noise?: boolean } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0).fill(Buffer.from([255, 0, 0]))]);
  const raw = options.noise
    ? Buffer.concat(
        Array.from({ length: height }, () => {
          const r = randomBytes(width * 3 + 1);
          r[0] = 0;
          return r;
        }),
      )
    : Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A baseline JPEG: one grey 8×8 block (DC 0, then end of block). */
export function jpeg(): Buffer {
  const huffman = (tableClass: number) => [
    0xff,
    0xc4,
    0x00,
    0x14,
    tableClass,
    0x01,
    ...Array(15).fill(0),
    0x00,
  ];
  return Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xdb,
    0x00,
    0x43,
    0x00,
    ...Array(64).fill(1),
    0xff,
    0xc0,
    0x00,
    0x0b,
    0x08,
    0x00,
    0x08,
    0x00,
    0x08,
    0x01,
    0x01,
    0x11,
    0x00,
    ...huffman(0x00),
    ...huffman(0x10),
    0xff,
    0xda,
    0x00,
    0x08,
    0x01,
    0x01,
    0x00,
    0x00,
    0x3f,
    0x00,
    0x3f,
    0xff,
    0xd9,
  ]);
}

/** A 1×1 GIF. */
export function gif(): Buffer {
  return Buffer.from(
    "47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b",
    "hex",
  );
}

/** A 1×1 lossless WebP. */
export function webp(): Buffer {
  return Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
}
