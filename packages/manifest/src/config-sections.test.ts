import { describe, expect, it, vi } from "vitest";
import type * as z from "zod";
import { CONFIG_DEFAULTS } from "./config-defaults.generated.ts";
import { ConfigLayerSchema, ConfigSchema, parseConfigSections, parseMergedConfig } from "./config-schema.ts";
import { mergeLayer } from "./merge-layers.ts";

/*
 * Start-up parses a config section by section (only what some source sets);
 * these tests hold that parse equal to the whole schemas' parse.
 */

/** Layers as a file, the env or flags may give them: valid, invalid, and both in one. */
const cases: [string, Record<string, unknown>][] = [
  ["empty", {}],
  ["model", { model: "anthropic/claude-haiku-4-5" }],
  ["model not a string", { model: 5 }],
  ["model without a provider", { model: "gpt-5" }],
  ["worker typo", { worker: { maxTurns: "ten" } }],
  ["unknown keys among good ones", { bogus: 1, worker: {}, zzz: true, model: "openai/gpt-5" }],
  [
    "a local provider and its model",
    {
      providers: { local: { kind: "openai-chat", baseURL: "http://127.0.0.1:8080/v1" } },
      model: "local/m",
      models: { m: { provider: "local", contextWindow: 1000, maxOutputTokens: 100 } },
    },
  ],
  ["a built-in provider's base URL", { providers: { anthropic: { baseURL: "http://127.0.0.1:9/" } } }],
  ["an ftp base URL", { providers: { local: { kind: "openai-chat", baseURL: "ftp://x" } } }],
  ["a provider without a kind", { providers: { local: { baseURL: "http://x/v1" } } }],
  ["a provider name with a space", { providers: { "my local": { kind: "openai-chat" } } }],
  [
    "permissions",
    {
      permissions: { mode: "plan", rules: [{ tool: "bash", match: "git *", action: "deny" }] },
    },
  ],
  ["a bad rule", { permissions: { rules: [{ tool: "bash", action: "maybe" }], mode: "yolo" } }],
  ["sandbox object", { sandbox: { network: true } }],
  ["sandbox string", { sandbox: "on" }],
  ["mcp and hooks", { mcpServers: { fs: { command: "npx" } }, hooks: { Stop: [{ command: "true" }] } }],
  ["a bad hook event", { hooks: { Finish: [{ command: "true" }] } }],
  ["task depth too deep", { task: { maxDepth: 9 } }],
  ["compaction model of an unknown provider", { compaction: { model: "nope/x", thresholdRatio: 0.5 } }],
  ["a model of an unknown provider", { model: "unknown/x" }],
  ["a new model without its window", { models: { "my-model": { provider: "anthropic" } } }],
  ["an empty scope root", { scope: { root: "" }, session: { dir: "/tmp/s" } }],
  ["editor schema", { $schema: "./schema.json", toolOutput: { maxBytes: 100 } }],
  [
    "problems in several sections",
    {
      toolOutputCache: { storedView: "bad", maxLineLength: 1 },
      worker: { temperature: 3, reasoning: { effort: "max" } },
      compaction: { enabled: "yes" },
      nope: 1,
    },
  ],
  [
    "pricing and capabilities",
    {
      models: {
        x: {
          provider: "openai",
          contextWindow: 10,
          maxOutputTokens: 5,
          pricing: { input: 1, output: 2 },
          capabilities: { vision: true },
        },
      },
    },
  ],
];

/** What the messages are made of: the code, where, what was expected, the unknown keys. */
function shapeOf(issues: readonly z.core.$ZodIssue[]) {
  return issues.map((i) => ({
    code: i.code,
    path: i.path,
    message: i.code === "unrecognized_keys" ? undefined : i.message,
    keys: i.code === "unrecognized_keys" ? i.keys : undefined,
  }));
}

describe("config sections", () => {
  it("config-defaults.generated.ts is current (run `pnpm --filter @yoi/manifest gen:schema`)", () => {
    expect(CONFIG_DEFAULTS).toStrictEqual(ConfigLayerSchema.parse({}));
  });

  it("each section's default parses to itself, so a section no source sets need not be parsed", () => {
    const shape: Record<string, z.ZodType> = ConfigLayerSchema.shape;
    for (const [key, value] of Object.entries(CONFIG_DEFAULTS))
      expect(shape[key]!.parse(structuredClone(value)), key).toStrictEqual(value);
  });

  it.each(cases)("a layer, section by section, is checked as the layer schema checks it: %s", (_, layer) => {
    const whole = ConfigLayerSchema.safeParse(layer);
    const { issues } = parseConfigSections(layer, new Set(Object.keys(layer)));
    expect(shapeOf(issues)).toStrictEqual(whole.success ? [] : shapeOf(whole.error.issues));
  });

  it.each(cases)(
    "the merged config, section by section, parses as ConfigSchema parses it: %s",
    (_, layer) => {
      if (!ConfigLayerSchema.safeParse(layer).success) return; // load-config merges only valid layers
      const merged = structuredClone(CONFIG_DEFAULTS) as Record<string, unknown>;
      mergeLayer(merged, layer, "test", new Map());
      const whole = ConfigSchema.safeParse(merged);
      const sectionwise = parseMergedConfig(merged, new Set(Object.keys(layer)));
      expect(sectionwise.success).toBe(whole.success);
      if (whole.success && sectionwise.success) {
        expect(sectionwise.data).toStrictEqual(whole.data);
        // The same order of keys, as `yoi config` prints them.
        expect(JSON.stringify(sectionwise.data)).toBe(JSON.stringify(whole.data));
      }
      if (!whole.success && !sectionwise.success)
        expect(shapeOf(sectionwise.issues)).toStrictEqual(shapeOf(whole.error.issues));
    },
  );

  it("builds only the schemas of the sections a layer sets", async () => {
    vi.resetModules();
    const fresh = await import("./config-schema.ts");
    const built = (key: string) => {
      // `.default/.prefault/.optional` around a z.lazy, which keeps the schema it built in its def.
      const wrapper = (fresh.ConfigLayerSchema.shape as Record<string, z.ZodType>)[key]!;
      const lazy = (wrapper._zod.def as unknown as { innerType: z.ZodLazy }).innerType;
      return (lazy._zod.def as { _cachedInner?: unknown })._cachedInner !== undefined;
    };
    expect(fresh.parseConfigSections({ model: "anthropic/x" }, new Set(["model"])).issues).toStrictEqual([]);
    expect(built("model")).toBe(true);
    for (const key of [
      "providers",
      "models",
      "worker",
      "compaction",
      "permissions",
      "mcpServers",
      "hooks",
      "task",
    ])
      expect(built(key), key).toBe(false);
  });
});
