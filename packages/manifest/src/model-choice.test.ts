import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConfigDirs, makeConfigDirs } from "./__tests__/config-dirs.ts";
import { ConfigError } from "./config-error.ts";
import { loadConfig } from "./load-config.ts";
import { withModel } from "./model-choice.ts";

let dirs: ConfigDirs;
beforeEach(() => {
  dirs = makeConfigDirs();
});
afterEach(() => dirs.cleanup());

const load = () => loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {} });

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("withModel: the model chosen on a loaded config", () => {
  it("sets a ref and names its source, leaving the loaded config as it was", async () => {
    const loaded = await load();
    const chosen = withModel(loaded, { ref: "anthropic/claude-haiku-4-5", source: "flag:--model" });
    expect(chosen.config.model).toBe("anthropic/claude-haiku-4-5");
    expect(chosen.sources.model).toBe("flag:--model");
    expect(loaded.config.model).toBeUndefined();
    expect(chosen.files).toBe(loaded.files);
  });

  it("qualifies a bare name through the catalog and the config's models", async () => {
    dirs.writeUser(`{
      "providers": { "local": { "kind": "openai-chat", "baseURL": "http://127.0.0.1:11434/v1" } },
      "models": { "qwen3": { "provider": "local", "contextWindow": 32768, "maxOutputTokens": 4096 } },
    }`);
    const loaded = await load();
    expect(withModel(loaded, { ref: "claude-sonnet-4-5" }).config.model).toBe("anthropic/claude-sonnet-4-5");
    expect(withModel(loaded, { ref: "gpt-5" }).config.model).toBe("openai/gpt-5");
    expect(withModel(loaded, { ref: "qwen3" }).config.model).toBe("local/qwen3");
    const error = errorOf(() => withModel(loaded, { ref: "nonesuch-1", source: "env:YOI_MODEL" }));
    expect(error.file).toBe("env:YOI_MODEL");
    expect(error.message).toContain('unknown model "nonesuch-1"');
    expect(error.message).toContain('write it as "<provider>/<model>"');
  });

  it("makes a provider of a kind no source declares, with its registry row's variables", async () => {
    const loaded = await load();
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" };
    const chosen = withModel(loaded, { ref: "openai-chat/llama3.1", source: "flag:--model", env });
    expect(chosen.config.providers["openai-chat"]).toEqual({
      kind: "openai-chat",
      apiKeyEnv: "OPENAI_API_KEY",
      baseURL: "http://127.0.0.1:8080/v1",
    });
    expect(chosen.sources["providers.openai-chat.kind"]).toBe("flag:--model");
    expect(chosen.sources["providers.openai-chat.apiKeyEnv"]).toBe("flag:--model");
    expect(chosen.sources["providers.openai-chat.baseURL"]).toBe("env:OPENAI_BASE_URL");
    const gemini = withModel(loaded, { ref: "gemini/gemini-2.5-flash", env: {} });
    expect(gemini.config.providers).toEqual(loaded.config.providers);
  });

  it("uses a declared provider of a kind's name as written", async () => {
    dirs.writeUser(
      `{ "providers": { "openai-chat": { "kind": "openai-chat", "baseURL": "http://127.0.0.1:1111/v1", "apiKeyEnv": "LOCAL_KEY" } } }`,
    );
    const chosen = withModel(await load(), {
      ref: "openai-chat/llama3.1",
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    expect(chosen.config.providers["openai-chat"]).toEqual({
      kind: "openai-chat",
      baseURL: "http://127.0.0.1:1111/v1",
      apiKeyEnv: "LOCAL_KEY",
    });
  });

  it("sets a base URL on the chosen model's provider, the config's own model when no ref is given", async () => {
    dirs.writeUser(`{ "model": "anthropic/claude-haiku-4-5" }`);
    const chosen = withModel(await load(), {
      baseURL: "http://127.0.0.1:9/",
      baseURLSource: "flag:--base-url",
    });
    expect(chosen.config.providers.anthropic).toEqual({
      kind: "anthropic",
      apiKeyEnv: "ANTHROPIC_API_KEY",
      baseURL: "http://127.0.0.1:9/",
    });
    expect(chosen.sources["providers.anthropic.baseURL"]).toBe("flag:--base-url");
    expect(chosen.sources.model).toBe("override");
    const bad = errorOf(() => withModel(chosen, { baseURL: "ftp://x", baseURLSource: "flag:--base-url" }));
    expect(bad.message).toBe(
      '--base-url: providers.anthropic.baseURL: expected an http(s) URL, like "http://localhost:11434/v1", found "ftp://x"',
    );
  });

  it("refuses a provider nobody declared that is not a kind, as the config check does", async () => {
    const loaded = await load();
    const undeclared = errorOf(() => withModel(loaded, { ref: "azure/gpt-5", source: "flag:--model" }));
    expect(undeclared.message).toBe(
      '--model: expected a provider declared in `providers` ("openai", "anthropic", "gemini") before the "/", found "azure/gpt-5"',
    );
    // A slash command is named as typed too, without the field it sets.
    expect(errorOf(() => withModel(loaded, { ref: "azure/gpt-5", source: "/model" })).message).toBe(
      '/model: expected a provider declared in `providers` ("openai", "anthropic", "gemini") before the "/", found "azure/gpt-5"',
    );
    expect(errorOf(() => withModel(loaded, { ref: "anthropic/" })).message).toContain(
      'expected a model as "<provider>/<model>"',
    );
    expect(withModel(loaded, {})).toBe(loaded);
    expect(errorOf(() => withModel(loaded, { baseURL: "http://127.0.0.1:9/" })).path).toBe("model");
  });
});
