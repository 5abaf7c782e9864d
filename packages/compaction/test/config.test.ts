import { ConfigSchema } from "@yoi/manifest";
import { describe, expect, it } from "vitest";
import {
  CompactionError,
  DEFAULT_RETAIN_PROMPT,
  DEFAULT_SUMMARY_PROMPT,
  resolveCompactionConfig,
  resolveToolOutputCacheConfig,
} from "../src/index.ts";

function errorOf(fn: () => unknown): CompactionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CompactionError);
    return error as CompactionError;
  }
  throw new Error("expected a CompactionError");
}

describe("ToolOutputCacheConfig", () => {
  it("applies the defaults", () => {
    expect(resolveToolOutputCacheConfig()).toEqual({
      enabled: true,
      contextBudgetTokens: null,
      maxMessageBytes: 50 * 1024,
      maxLineLength: 2000,
      deleteUnreferencedRefs: false,
      storedView: "summary",
    });
  });

  it("keeps given values", () => {
    expect(
      resolveToolOutputCacheConfig({ enabled: false, contextBudgetTokens: 30_000, maxLineLength: 500 }),
    ).toEqual({
      enabled: false,
      contextBudgetTokens: 30_000,
      maxMessageBytes: 50 * 1024,
      maxLineLength: 500,
      deleteUnreferencedRefs: false,
      storedView: "summary",
    });
  });

  it("rejects bad values naming the field and the fix", () => {
    const err = errorOf(() => resolveToolOutputCacheConfig({ maxMessageBytes: 10 }));
    expect(err.code).toBe("invalid_config");
    expect(err.message).toContain("toolOutputCache.maxMessageBytes");
    expect(err.message).toContain(".yoi/config.jsonc");
    expect(errorOf(() => resolveToolOutputCacheConfig({ contextBudgetTokens: -5 })).message).toContain(
      "contextBudgetTokens",
    );
  });

  it("rejects unknown keys (a typo is not silently ignored)", () => {
    const err = errorOf(() => resolveToolOutputCacheConfig({ maxMessageByte: 100 } as never));
    expect(err.message).toContain("maxMessageByte");
  });

  it("is the manifest's toolOutputCache section: its defaults, and a parsed section accepted as is", () => {
    const manifest = ConfigSchema.parse({}).toolOutputCache;
    expect(resolveToolOutputCacheConfig()).toStrictEqual(manifest);
    const set = ConfigSchema.parse({
      toolOutputCache: { storedView: "view", maxLineLength: 80 },
    }).toolOutputCache;
    expect(resolveToolOutputCacheConfig(set)).toStrictEqual(set);
  });
});

describe("CompactionConfig", () => {
  it("applies the defaults", () => {
    expect(resolveCompactionConfig()).toEqual({
      enabled: true,
      auto: true,
      thresholdRatio: 0.8,
      model: null,
      summaryPrompt: DEFAULT_SUMMARY_PROMPT,
      summaryDirectives: [],
      retainPrompt: DEFAULT_RETAIN_PROMPT,
      retainDirectives: [],
      retainLastTurns: 1,
    });
    expect(DEFAULT_SUMMARY_PROMPT).toContain("<summary>");
    expect(DEFAULT_RETAIN_PROMPT).toContain("<retain>");
  });

  it("null retainPrompt turns the retain section off", () => {
    expect(resolveCompactionConfig({ retainPrompt: null }).retainPrompt).toBeNull();
  });

  it.each([
    [{ thresholdRatio: 0 }, "thresholdRatio"],
    [{ thresholdRatio: 1.5 }, "thresholdRatio"],
    [{ retainLastTurns: -1 }, "retainLastTurns"],
    [{ retainLastTurns: 1.5 }, "retainLastTurns"],
    [{ summaryPrompt: "  " }, "summaryPrompt"],
    [{ model: "" }, "model"],
    [{ summaryDirectives: "keep paths" }, "summaryDirectives"],
  ])("rejects %j", (input, field) => {
    const err = errorOf(() => resolveCompactionConfig(input as never));
    expect(err.code).toBe("invalid_config");
    expect(err.message).toContain(`compaction.${field}`);
  });

  it("is the manifest's compaction section: its defaults, and a parsed section accepted as is", () => {
    const manifest = ConfigSchema.parse({}).compaction;
    expect(resolveCompactionConfig()).toStrictEqual(manifest);
    const set = ConfigSchema.parse({
      compaction: { retainLastTurns: 3, summaryDirectives: ["keep paths"] },
    }).compaction;
    expect(resolveCompactionConfig(set)).toStrictEqual(set);
  });
});

describe("resolved configs", () => {
  it("give each caller its own object", () => {
    const first = resolveCompactionConfig();
    first.summaryDirectives.push("changed");
    first.enabled = false;
    expect(resolveCompactionConfig()).toStrictEqual(ConfigSchema.parse({}).compaction);
  });

  it.each([
    ["text", "an object"],
    [null, "an object"],
    [{ nope: 1 }, "unknown key nope"],
  ])("reject %j as a whole: %s", (input, expected) => {
    for (const resolve of [resolveCompactionConfig, resolveToolOutputCacheConfig])
      expect(errorOf(() => resolve(input as never)).message).toContain(expected);
  });
});
