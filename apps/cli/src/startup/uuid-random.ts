/**
 * uuid's source of random bytes in the bundle: bundle.ts points uuid's own
 * `rng.js` here. uuid reads the global `crypto.getRandomValues`, which
 * loads Node's WebCrypto, and `node:crypto` (the same generator by another
 * door) takes some 5 ms to load; print mode needs 16 bytes before its first
 * request (the session's id) and nothing else of either. The kernel's
 * generator is read directly instead, 256 bytes at a time; where there is
 * no `/dev/urandom` (Windows) the bytes come from `node:crypto`.
 */
import { closeSync, openSync, readSync } from "node:fs";

const pool = new Uint8Array(256);
let used = pool.length;

/** 16 random bytes, as uuid's `rng()` returns them (uuid copies them at once). */
export default function rng(): Uint8Array {
  if (used + 16 > pool.length) {
    fillRandom(pool);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}

/** Fills `bytes` from the kernel's generator (`device`), or from `node:crypto` when it cannot be read. */
export function fillRandom(bytes: Uint8Array, device = "/dev/urandom"): void {
  try {
    const fd = openSync(device, "r");
    try {
      for (let at = 0; at < bytes.length; ) {
        const read = readSync(fd, bytes, at, bytes.length - at, null);
        if (read === 0) throw new Error(`${device} ended`);
        at += read;
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    process.getBuiltinModule("node:crypto").randomFillSync(bytes);
  }
}
