/** Data shared by the crash child and the crash tests. */
import type { SessionRecordInput } from "../src/index.ts";

/** Deterministic content for blob n, so the parent can check it byte for byte. */
export function blobText(n: number): string {
  // every 4th blob is large enough that a kill often lands inside its write
  const size = n % 4 === 0 ? 1_500_000 : 200 + (n % 7) * 1000;
  return `blob ${n} `.repeat(Math.ceil(size / 8)).slice(0, size);
}

/** Deterministic record for a seq: mostly items (some 1-2 MB, so kills land inside writes), plus turn ends. */
export function recordFor(seq: number, index: number): SessionRecordInput {
  if (seq % 10 === 9) return { type: "turn_end", turn: seq, stopReason: "end_turn" };
  if (seq % 10 === 5)
    return { type: "usage", model: "test-model", usage: { inputTokens: seq, outputTokens: 1 } };
  const size = seq % 6 === 0 ? 1_000_000 + (seq % 3) * 500_000 : 100 + (seq % 13) * 300;
  return {
    type: "item",
    index,
    reason: "tool_result",
    item: {
      type: "tool_result",
      callId: `call_${seq}`,
      name: "read",
      output: outputFor(seq, size),
      isError: false,
    },
  };
}

export function outputFor(seq: number, size: number): string {
  return `out ${seq} "q" \\ \n 日本 `.repeat(Math.ceil(size / 20)).slice(0, size);
}
