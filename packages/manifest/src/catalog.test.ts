import { describe, expect, it } from "vitest";
import { findModel } from "./catalog.ts";
import { MODEL_CATALOG } from "./catalog-data.ts";
import { ConfigSchema } from "./config-schema.ts";
import { buildModelCatalog, resolveModel } from "./effective-catalog.ts";

describe("MODEL_CATALOG", () => {
  it("lists the current OpenAI, Anthropic and Gemini models", () => {
    const ids = MODEL_CATALOG.map((m) => m.id);
    for (const id of [
      "gpt-5.1",
      "gpt-5",
      "gpt-5-mini",
      "gpt-5-nano",
      "gpt-4.1",
      "gpt-4.1-mini",
      "gpt-4o",
      "gpt-4o-mini",
      "o3",
      "o4-mini",
      "claude-opus-4-5",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-opus-4-1",
      "claude-sonnet-4",
      "gemini-3-pro-preview",
      "gemini-2.5-pro",
      "gemini-2.5-flash",
      "gemini-2.5-flash-lite",
    ]) {
      expect(ids).toContain(id);
    }
  });

  it("has sane numbers and one entry per id", () => {
    expect(new Set(MODEL_CATALOG.map((m) => m.id)).size).toBe(MODEL_CATALOG.length);
    for (const m of MODEL_CATALOG) {
      expect(m.contextWindow, m.id).toBeGreaterThan(m.maxOutputTokens);
      if (m.maxInputTokens !== undefined)
        expect(m.maxInputTokens + m.maxOutputTokens, m.id).toBe(m.contextWindow);
      expect(m.providers.length, m.id).toBeGreaterThan(0);
    }
  });

  it("serves OpenAI models from both OpenAI APIs", () => {
    expect(findModel("openai-responses", "gpt-5")?.providers).toEqual(["openai-responses", "openai-chat"]);
    expect(findModel("openai-chat", "gpt-4o")?.id).toBe("gpt-4o");
  });

  it("records how each family controls reasoning", () => {
    expect(findModel("openai-responses", "o3")?.capabilities.reasoning).toBe("effort");
    expect(findModel("openai-chat", "gpt-4.1")?.capabilities.reasoning).toBe("none");
    expect(findModel("anthropic", "claude-sonnet-4-5")?.capabilities.reasoning).toBe("budget");
    expect(findModel("gemini", "gemini-2.5-flash")?.capabilities.reasoning).toBe("budget");
    expect(findModel("gemini", "gemini-3-pro-preview")?.capabilities.reasoning).toBe("effort");
  });

  it("is frozen", () => {
    const m = MODEL_CATALOG[0]!;
    expect(() => {
      (m as { contextWindow: number }).contextWindow = 1;
    }).toThrow(TypeError);
  });
});

describe("findModel", () => {
  it("finds exact ids and the providers' dated aliases", () => {
    expect(findModel("anthropic", "claude-sonnet-4-5-20250929")?.id).toBe("claude-sonnet-4-5");
    expect(findModel("anthropic", "claude-sonnet-4-20250514")?.id).toBe("claude-sonnet-4");
    expect(findModel("anthropic", "claude-sonnet-4-0")?.id).toBe("claude-sonnet-4");
    expect(findModel("openai-responses", "gpt-5-2025-08-07")?.id).toBe("gpt-5");
  });

  it("accepts snapshot suffixes it has not seen, by the longest known prefix", () => {
    expect(findModel("openai-chat", "gpt-5-mini-2026-01-01")?.id).toBe("gpt-5-mini");
    expect(findModel("openai-chat", "gpt-4o-mini-2030-07-18")?.id).toBe("gpt-4o-mini");
    expect(findModel("anthropic", "claude-haiku-4-5-20260101")?.id).toBe("claude-haiku-4-5");
    expect(findModel("anthropic", "claude-opus-4-5@20251101")?.id).toBe("claude-opus-4-5");
    expect(findModel("gemini", "gemini-2.5-flash-lite-preview-09-2025")?.id).toBe("gemini-2.5-flash-lite");
    expect(findModel("gemini", "gemini-2.5-pro-latest")?.id).toBe("gemini-2.5-pro");
    expect(findModel("gemini", "models/gemini-2.5-flash")?.id).toBe("gemini-2.5-flash");
  });

  it("does not pass a different model off as a known one", () => {
    expect(findModel("openai-responses", "gpt-5-pro")).toBeUndefined();
    expect(findModel("openai-responses", "gpt-5.1-codex")).toBeUndefined();
    expect(findModel("gemini", "gemini-2.5-flash-image")).toBeUndefined();
    expect(findModel("openai-responses", "gpt")).toBeUndefined();
  });

  it("only looks at models the provider kind serves", () => {
    expect(findModel("anthropic", "gpt-5")).toBeUndefined();
    expect(findModel("gemini", "claude-sonnet-4-5")).toBeUndefined();
  });
});

describe("buildModelCatalog", () => {
  const config = ConfigSchema.parse({
    providers: { local: { kind: "openai-chat", baseURL: "http://127.0.0.1:11434/v1" } },
    models: {
      "qwen3-coder": { provider: "local", contextWindow: 32_768, maxOutputTokens: 8_192 },
      "claude-sonnet-4-5": { provider: "anthropic", contextWindow: 1_000_000 },
      "gpt-5": { provider: "openai", capabilities: { parallelTools: false } },
    },
  });
  const catalog = buildModelCatalog(config);

  it("adds models the catalog does not know, with conservative capabilities", () => {
    const m = findModel("openai-chat", "qwen3-coder", catalog);
    expect(m).toMatchObject({ contextWindow: 32_768, maxOutputTokens: 8_192, providers: ["openai-chat"] });
    expect(m?.capabilities).toEqual({
      tools: true,
      parallelTools: false,
      reasoning: "none",
      vision: false,
      promptCaching: false,
    });
  });

  it("overrides a known model field by field, keeping the rest and its aliases", () => {
    const sonnet = findModel("anthropic", "claude-sonnet-4-5-20250929", catalog);
    expect(sonnet?.contextWindow).toBe(1_000_000);
    expect(sonnet?.maxOutputTokens).toBe(64_000);
    expect(sonnet?.capabilities.reasoning).toBe("budget");
    const gpt5 = findModel("openai-responses", "gpt-5", catalog);
    expect(gpt5?.capabilities.parallelTools).toBe(false);
    expect(gpt5?.capabilities.vision).toBe(true);
    expect(gpt5?.maxInputTokens).toBe(272_000);
  });

  it("overrides only for the named provider's kind and leaves MODEL_CATALOG alone", () => {
    expect(findModel("openai-chat", "gpt-5", catalog)?.capabilities.parallelTools).toBe(true);
    expect(findModel("anthropic", "claude-sonnet-4-5")?.contextWindow).toBe(200_000);
  });
});

describe("resolveModel", () => {
  it("resolves the default model to its provider settings and catalog entry", () => {
    const config = ConfigSchema.parse({ model: "anthropic/claude-sonnet-4-5-20250929" });
    const r = resolveModel(config);
    expect(r.providerName).toBe("anthropic");
    expect(r.kind).toBe("anthropic");
    expect(r.model).toBe("claude-sonnet-4-5-20250929");
    expect(r.info?.id).toBe("claude-sonnet-4-5");
  });

  it("keeps slashes in the model part", () => {
    const config = ConfigSchema.parse({ providers: { router: { kind: "openai-chat" } } });
    const r = resolveModel(config, "router/meta-llama/llama-3.3-70b");
    expect(r.model).toBe("meta-llama/llama-3.3-70b");
    expect(r.info).toBeUndefined();
  });

  it("says what to set when no model is configured", () => {
    expect(() => resolveModel(ConfigSchema.parse({}))).toThrow(
      /model: missing; expected a model as .*YOI_MODEL/,
    );
  });

  it("names the declared providers when the ref's provider is unknown", () => {
    expect(() => resolveModel(ConfigSchema.parse({}), "azure/gpt-5")).toThrow(
      /"openai", "anthropic", "gemini"\), found "azure\/gpt-5"/,
    );
  });
});

describe("findModel's kept answers", () => {
  const entry = (id: string) => ({
    ...MODEL_CATALOG.find((m) => m.id === "gpt-4.1")!,
    id,
    aliases: [],
  });

  it("answer the same for a frozen catalog, known and unknown models alike", () => {
    const catalog = buildModelCatalog(ConfigSchema.parse({}));
    expect(Object.isFrozen(catalog)).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect(findModel("openai-chat", "gpt-4.1-2025-04-14", catalog)?.id).toBe("gpt-4.1");
      expect(findModel("openai-chat", "no-such-model", catalog)).toBeUndefined();
      expect(findModel("anthropic", "gpt-4.1", catalog)).toBeUndefined();
    }
  });

  it("are not kept for a catalog that can still change", () => {
    const catalog = [entry("one")];
    expect(findModel("openai-chat", "two", catalog)).toBeUndefined();
    catalog.push(entry("two"));
    expect(findModel("openai-chat", "two", catalog)?.id).toBe("two");
  });
});
