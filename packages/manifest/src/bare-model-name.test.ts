import { describe, expect, it } from "vitest";
import { qualifyModelRef } from "./bare-model-name.ts";
import { ConfigSchema } from "./config-schema.ts";
import { buildModelCatalog } from "./effective-catalog.ts";

describe("bare model names", () => {
  const config = ConfigSchema.parse({});

  it("resolve through the catalog to the first provider that serves them", () => {
    expect(qualifyModelRef(config, "gpt-5")).toBe("openai/gpt-5");
    expect(qualifyModelRef(config, "claude-haiku-4-5")).toBe("anthropic/claude-haiku-4-5");
    expect(qualifyModelRef(config, "claude-sonnet-4-5-20250929")).toBe(
      "anthropic/claude-sonnet-4-5-20250929",
    );
    expect(qualifyModelRef(config, "gemini-2.5-pro")).toBe("gemini/gemini-2.5-pro");
  });

  it("leave refs alone and refuse names nobody serves", () => {
    expect(qualifyModelRef(config, "anthropic/claude-opus-4-5")).toBe("anthropic/claude-opus-4-5");
    expect(qualifyModelRef(config, "llama3.1")).toBeUndefined();
  });

  it("follow a config models entry's provider (a name or a kind)", () => {
    const local = ConfigSchema.parse({
      providers: { ollama: { kind: "openai-chat", baseURL: "http://127.0.0.1:11434/v1" } },
      models: {
        "llama3.1": { provider: "ollama", contextWindow: 128000, maxOutputTokens: 4096 },
        qwen3: { provider: "openai-chat", contextWindow: 32000, maxOutputTokens: 4096 },
      },
    });
    expect(qualifyModelRef(local, "llama3.1")).toBe("ollama/llama3.1");
    expect(qualifyModelRef(local, "qwen3")).toBe("ollama/qwen3");
  });
});

describe("prices in the catalog", () => {
  it("come with the built-in models and a config entry overrides them", () => {
    const base = buildModelCatalog(ConfigSchema.parse({}));
    expect(base.find((m) => m.id === "claude-sonnet-4-5")?.pricing).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    const custom = buildModelCatalog(
      ConfigSchema.parse({
        models: { "claude-sonnet-4-5": { provider: "anthropic", pricing: { input: 1, output: 2 } } },
      }),
    );
    expect(custom.find((m) => m.id === "claude-sonnet-4-5")?.pricing).toEqual({ input: 1, output: 2 });
  });

  it("refuse a negative price with a message that says what is expected", () => {
    const result = ConfigSchema.safeParse({
      models: { "gpt-5": { provider: "openai", pricing: { input: -1, output: 10 } } },
    });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain("a price in US dollars per million tokens");
  });
});
