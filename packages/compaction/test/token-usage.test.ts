import { describe, expect, it } from "vitest";
import { tokenUsageFromUsage } from "../src/index.ts";

describe("tokenUsageFromUsage", () => {
  it("counts cached prompt tokens once: llm-client's inputTokens already includes them", () => {
    // A 100k-token prompt, 80k of it read from cache and 5k written to it, and a 2k answer.
    const usage = tokenUsageFromUsage({
      inputTokens: 100_000,
      cacheReadTokens: 80_000,
      cacheWriteTokens: 5_000,
      outputTokens: 2_000,
    });
    expect(usage).toEqual({
      inputTokens: 15_000,
      cacheReadTokens: 80_000,
      cacheCreationTokens: 5_000,
      outputTokens: 2_000,
      totalTokens: 102_000,
    });
    // total = input + cache creation + cache read + output = the real context size.
    expect(usage.totalTokens).toBe(
      usage.inputTokens + usage.cacheCreationTokens + usage.cacheReadTokens + usage.outputTokens,
    );
  });

  it("treats missing fields as zero", () => {
    expect(tokenUsageFromUsage(undefined).totalTokens).toBe(0);
    expect(tokenUsageFromUsage({ inputTokens: 10 })).toEqual({
      inputTokens: 10,
      outputTokens: 0,
      cacheCreationTokens: 0,
      cacheReadTokens: 0,
      totalTokens: 10,
    });
  });

  it("never goes negative when a provider reports cache numbers above input", () => {
    const usage = tokenUsageFromUsage({ inputTokens: 10, cacheReadTokens: 50, outputTokens: 1 });
    expect(usage.inputTokens).toBe(0);
    expect(usage.totalTokens).toBe(51);
  });
});
