import { describe, expect, it } from "vitest";
import { findModel, PROVIDER_KINDS } from "./catalog.ts";
import { ConfigSchema } from "./config-schema.ts";
import { isCustomServer, PROVIDER_REGISTRY, providerOfKind } from "./provider-registry.ts";

describe("the provider registry", () => {
  it("serves every provider kind from exactly one row", () => {
    for (const kind of PROVIDER_KINDS)
      expect(
        PROVIDER_REGISTRY.filter((row) => row.kinds.includes(kind)),
        kind,
      ).toHaveLength(1);
    expect(providerOfKind("openai-chat").name).toBe("openai");
  });

  it("is what the config declares as its built-in providers", () => {
    expect(ConfigSchema.parse({}).providers).toEqual({
      openai: { kind: "openai-responses", apiKeyEnv: "OPENAI_API_KEY" },
      anthropic: { kind: "anthropic", apiKeyEnv: "ANTHROPIC_API_KEY" },
      gemini: { kind: "gemini", apiKeyEnv: "GEMINI_API_KEY" },
    });
  });

  it("names default models the catalog knows for the row's own kind", () => {
    for (const row of PROVIDER_REGISTRY)
      expect(findModel(row.kind, row.defaultModel), row.name).toBeDefined();
  });

  it("tells a custom server from the provider's own API", () => {
    expect(isCustomServer("anthropic", undefined)).toBe(false);
    expect(isCustomServer("anthropic", "https://api.anthropic.com")).toBe(false);
    expect(isCustomServer("openai-chat", "https://api.openai.com/v1")).toBe(false);
    expect(isCustomServer("openai-chat", "http://127.0.0.1:11434/v1")).toBe(true);
    expect(isCustomServer("gemini", "https://generativelanguage.googleapis.com")).toBe(false);
    expect(isCustomServer("anthropic", "https://api.openai.com")).toBe(true);
    expect(isCustomServer("anthropic", "not a url")).toBe(true);
  });
});
