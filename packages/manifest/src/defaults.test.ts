import { describe, expect, it } from "vitest";
import { ConfigSchema } from "./config-schema.ts";
import {
  COMPACTION_DEFAULTS,
  estimateTokens,
  INLINE_THRESHOLD_BYTES,
  SUMMARY_HEAD_LINES,
  SUMMARY_MAX_BYTES,
  SUMMARY_TAIL_LINES,
  TOOL_OUTPUT_CACHE_DEFAULTS,
  TOOL_OUTPUT_MAX_BYTES,
  toolOutputCacheBudgetTokens,
} from "./defaults.ts";

describe("named defaults", () => {
  it("has the numbers of the designs", () => {
    expect(TOOL_OUTPUT_MAX_BYTES).toBe(16 * 1024);
    expect(INLINE_THRESHOLD_BYTES).toBe(800);
    expect(SUMMARY_MAX_BYTES).toBe(400);
    expect(SUMMARY_HEAD_LINES).toBe(5);
    expect(SUMMARY_TAIL_LINES).toBe(3);
    expect(TOOL_OUTPUT_CACHE_DEFAULTS.maxMessageBytes).toBe(50 * 1024);
    expect(TOOL_OUTPUT_CACHE_DEFAULTS.maxLineLength).toBe(2000);
    expect(COMPACTION_DEFAULTS.thresholdRatio).toBe(0.8);
    expect(COMPACTION_DEFAULTS.retainLastTurns).toBe(1);
    expect(COMPACTION_DEFAULTS.summaryPrompt).toContain("<summary></summary>");
    expect(COMPACTION_DEFAULTS.retainPrompt).toContain("<retain></retain>");
  });

  it("fills every section of an empty config from the named constants", () => {
    const config = ConfigSchema.parse({});
    expect(config.model).toBeUndefined();
    expect(config.worker).toEqual({
      maxTokens: 8192,
      maxTurns: 50,
      toolTimeoutMs: 120_000,
      maxToolCallsPerResponse: 200,
      toolConcurrency: 10,
      maxResponseBytes: 16 * 1024 * 1024,
      maxToolArgumentBytes: 4 * 1024 * 1024,
      maxMcpResultBytes: 8 * 1024 * 1024,
    });
    expect(config.toolOutput).toEqual({
      maxBytes: 16_384,
      inlineThresholdBytes: 800,
      summaryMaxBytes: 400,
      headLines: 5,
      tailLines: 3,
    });
    expect(config.toolOutputCache).toEqual({
      enabled: true,
      contextBudgetTokens: null,
      maxMessageBytes: 51_200,
      maxLineLength: 2000,
      deleteUnreferencedRefs: false,
      storedView: "summary",
    });
    expect(config.compaction).toEqual({
      enabled: true,
      auto: true,
      thresholdRatio: 0.8,
      model: null,
      summaryPrompt: COMPACTION_DEFAULTS.summaryPrompt,
      summaryDirectives: [],
      retainPrompt: COMPACTION_DEFAULTS.retainPrompt,
      retainDirectives: [],
      retainLastTurns: 1,
    });
    expect(Object.keys(config.providers)).toEqual(["openai", "anthropic", "gemini"]);
    expect(config.providers.anthropic).toEqual({ kind: "anthropic", apiKeyEnv: "ANTHROPIC_API_KEY" });
    expect(config.permissions.rules).toEqual([]);
    expect(config.scope).toEqual({});
  });

  it("keys the section defaults as the sections: each is what an empty section parses to", () => {
    const config = ConfigSchema.parse({});
    expect(config.compaction).toMatchObject(COMPACTION_DEFAULTS);
    expect(config.toolOutputCache).toMatchObject(TOOL_OUTPUT_CACHE_DEFAULTS);
  });

  it("holds no per-tool permission defaults: the pod owns its tools', the config only overrides them", () => {
    const { permissions } = ConfigSchema.parse({});
    expect(permissions).toEqual({ mode: "default", rules: [], default: {} });
  });

  it("does not share default objects between parses", () => {
    const a = ConfigSchema.parse({});
    a.providers.openai!.apiKeyEnv = "CHANGED";
    a.permissions.default.bash = "allow";
    a.permissions.rules.push({ tool: "bash", action: "allow" });
    a.compaction.summaryDirectives.push("changed");
    a.models.x = { provider: "openai", contextWindow: 1, maxOutputTokens: 1 };
    const b = ConfigSchema.parse({});
    expect(b.providers.openai!.apiKeyEnv).toBe("OPENAI_API_KEY");
    expect(b.permissions).toEqual({ mode: "default", rules: [], default: {} });
    expect(b.compaction.summaryDirectives).toEqual([]);
    expect(b.models).toEqual({});
  });
});

describe("tool output cache budget clamp", () => {
  it.each([
    [8_192, 20_000], // 2,048 raised to the floor
    [80_000, 20_000], // exactly the floor
    [128_000, 32_000], // inside the range
    [200_000, 50_000],
    [240_000, 60_000], // exactly the ceiling
    [400_000, 60_000], // cut to the ceiling
    [1_048_576, 60_000],
  ])("window %i -> %i tokens", (window, budget) => {
    expect(toolOutputCacheBudgetTokens(window)).toBe(budget);
  });

  it("estimates tokens as UTF-8 bytes / 4, rounded up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
    expect(estimateTokens("日本")).toBe(2); // 6 bytes
  });
});
