import { ConfigSchema } from "@yoi/manifest";
import { describe, expect, it, vi } from "vitest";
import type * as z from "zod";
import {
  CompactionError,
  compactionConfigSchema,
  DEFAULT_RETAIN_PROMPT,
  DEFAULT_SUMMARY_PROMPT,
  resolveCompactionConfig,
  resolveToolOutputCacheConfig,
  toolOutputCacheConfigSchema,
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

  it("has the same field names as the manifest's toolOutputCache section", () => {
    const manifest = ConfigSchema.parse({}).toolOutputCache;
    expect(Object.keys(manifest).sort()).toEqual(
      Object.keys(toolOutputCacheConfigSchema.unwrap().shape).sort(),
    );
    // A manifest-parsed section is accepted as is.
    expect(resolveToolOutputCacheConfig(manifest)).toEqual(manifest);
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

  it("has the same field names as the manifest's compaction section and accepts it", () => {
    const manifest = ConfigSchema.parse({}).compaction;
    expect(Object.keys(manifest).sort()).toEqual(Object.keys(compactionConfigSchema.unwrap().shape).sort());
    const resolved = resolveCompactionConfig(manifest);
    expect(resolved.thresholdRatio).toBe(0.8);
    expect(resolved.retainLastTurns).toBe(1);
  });
});

describe("configs that restate the defaults", () => {
  const cases: [string, () => unknown, z.ZodType, Record<string, unknown>][] = [
    ["toolOutputCache", resolveToolOutputCacheConfig as () => unknown, toolOutputCacheConfigSchema, {}],
    ["compaction", resolveCompactionConfig as () => unknown, compactionConfigSchema, {}],
  ];
  const defaultsOf = (schema: z.ZodType) => schema.parse({}) as Record<string, unknown>;

  it.each(cases)(
    "%s: resolve gives what the schema gives, for the defaults and for every field restated",
    (_, resolve, schema) => {
      const defaults = defaultsOf(schema);
      const inputs: unknown[] = [undefined, {}, defaults, structuredClone(defaults)];
      for (const [key, value] of Object.entries(defaults))
        inputs.push({ [key]: value }, { [key]: undefined });
      for (const input of inputs)
        expect((resolve as (i: unknown) => unknown)(input), JSON.stringify(input)).toStrictEqual(
          schema.parse(input ?? {}),
        );
      // The schema gives the defaults back unchanged: what lets resolve skip it for them.
      expect(schema.parse(defaults)).toStrictEqual(defaults);
    },
  );

  it.each(cases)("%s: anything else still goes through the schema", (section, resolve, schema) => {
    const defaults = defaultsOf(schema);
    const changed = Object.entries(defaults).map(([key, value]) => ({
      [key]:
        typeof value === "boolean"
          ? !value
          : typeof value === "number"
            ? value / 2 + 1
            : Array.isArray(value)
              ? ["x"]
              : value === null
                ? "a/b"
                : "other",
    }));
    for (const input of changed) {
      const result = schema.safeParse(input);
      if (result.success) expect((resolve as (i: unknown) => unknown)(input)).toStrictEqual(result.data);
      else expect(() => (resolve as (i: unknown) => unknown)(input)).toThrow(section);
    }
    for (const bad of [{ nope: 1 }, { ...defaults, nope: undefined }, "text", ["x"], null, 5]) {
      const result = schema.safeParse(bad);
      expect(result.success, JSON.stringify(bad)).toBe(false);
      expect(() => (resolve as (i: unknown) => unknown)(bad)).toThrow(section);
    }
  });

  it("gives each caller its own object", () => {
    const first = resolveCompactionConfig();
    first.summaryDirectives.push("changed");
    first.enabled = false;
    expect(resolveCompactionConfig()).toStrictEqual(compactionConfigSchema.parse({}));
  });

  it("builds no schema for them (a fresh module)", async () => {
    vi.resetModules();
    const fresh = await import("../src/config.ts");
    const built = (schema: z.ZodLazy) =>
      (schema._zod.def as { _cachedInner?: unknown })._cachedInner !== undefined;
    fresh.resolveCompactionConfig(compactionConfigSchema.parse({}));
    fresh.resolveToolOutputCacheConfig({ enabled: true });
    expect(built(fresh.compactionConfigSchema)).toBe(false);
    expect(built(fresh.toolOutputCacheConfigSchema)).toBe(false);
    fresh.resolveCompactionConfig({ retainLastTurns: 3 });
    expect(built(fresh.compactionConfigSchema)).toBe(true);
  });
});
