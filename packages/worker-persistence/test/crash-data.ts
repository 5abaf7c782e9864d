/** Data shared by the crash child and the crash tests. */

/** Deterministic content for blob n, so the parent can check it byte for byte. */
export function blobText(n: number): string {
  // every 4th blob is large enough that a kill often lands inside its write
  const size = n % 4 === 0 ? 1_500_000 : 200 + (n % 7) * 1000;
  return `blob ${n} `.repeat(Math.ceil(size / 8)).slice(0, size);
}
