import { describe, expect, it } from "vitest";
import rng, { fillRandom } from "../src/startup/uuid-random.ts";

describe("uuid's random bytes in the bundle", () => {
  it("hands out 16 fresh bytes per call, refilling its pool from the kernel", () => {
    const seen = new Set<string>();
    // More calls than one pool of 256 bytes holds.
    for (let i = 0; i < 40; i++) {
      const bytes = rng();
      expect(bytes).toHaveLength(16);
      seen.add(Buffer.from(bytes).toString("hex"));
    }
    expect(seen.size).toBe(40);
  });

  it("falls back to node:crypto where the kernel's device cannot be read", () => {
    const bytes = new Uint8Array(64);
    fillRandom(bytes, "/nonexistent/urandom");
    expect(bytes.some((b) => b !== 0)).toBe(true);
    // An empty device is not mistaken for random bytes.
    const more = new Uint8Array(64);
    fillRandom(more, "/dev/null");
    expect(more.some((b) => b !== 0)).toBe(true);
  });
});
