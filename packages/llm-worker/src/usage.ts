import type { Usage } from "@yoi/llm-client";

const FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
] as const;

/** Field-wise sum; a field stays absent when neither side reported it. */
export function sumUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {};
  for (const field of FIELDS) {
    const x = a[field];
    const y = b[field];
    if (x !== undefined || y !== undefined) out[field] = (x ?? 0) + (y ?? 0);
  }
  return out;
}
