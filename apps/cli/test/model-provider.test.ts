/**
 * Which provider a `--model` (or the config's model) resolves to: a ref
 * whose provider is a provider kind (`openai-chat/llama3.1`) gets a
 * provider of that kind unless some source declares one by that name, in
 * which case the declared one is used as written. The CLI skips its first
 * config load when nothing but the defaults can declare providers; these
 * cases hold it to the same answers as with that load.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applySessionFlags, loadCliConfig, loadProjectConfig } from "../src/session-setup.ts";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function world(projectConfig?: string): { homeDir: string; cwd: string } {
  const root = mkdtempSync(path.join(tmpdir(), "yoi-model-provider-"));
  roots.push(root);
  const homeDir = path.join(root, "home");
  const cwd = path.join(root, "project");
  mkdirSync(homeDir, { recursive: true });
  mkdirSync(path.join(cwd, ".yoi"), { recursive: true });
  if (projectConfig !== undefined) writeFileSync(path.join(cwd, ".yoi", "config.jsonc"), projectConfig);
  return { homeDir, cwd };
}

describe("the provider of a kind-named model ref", () => {
  it("is made of that kind, keyed and based as the kind's usual variables say, when nothing declares it", async () => {
    const cli = await loadCliConfig(
      { model: "openai-chat/llama3.1", baseURL: "http://127.0.0.1:11434/v1" },
      { ...world(), env: {} },
    );
    expect(cli.config.model).toBe("openai-chat/llama3.1");
    expect(cli.config.providers["openai-chat"]).toEqual({
      kind: "openai-chat",
      apiKeyEnv: "OPENAI_API_KEY",
      baseURL: "http://127.0.0.1:11434/v1",
    });
    expect(cli.sources["providers.openai-chat.kind"]).toBe("flag:--model");
    expect(cli.sources["providers.openai-chat.baseURL"]).toBe("flag:--base-url");
  });

  it("is the one a config file declares, as written", async () => {
    const cli = await loadCliConfig(
      { model: "openai-chat/llama3.1" },
      {
        ...world(
          `{ "providers": { "openai-chat": { "kind": "openai-chat", "baseURL": "http://127.0.0.1:1111/v1", "apiKeyEnv": "LOCAL_KEY" } } }`,
        ),
        env: {},
      },
    );
    expect(cli.config.providers["openai-chat"]).toEqual({
      kind: "openai-chat",
      baseURL: "http://127.0.0.1:1111/v1",
      apiKeyEnv: "LOCAL_KEY",
    });
  });

  it("is the one a YOI_CONFIG__providers variable declares", async () => {
    const cli = await loadCliConfig(
      { model: "openai-chat/llama3.1" },
      {
        ...world(),
        env: {
          "YOI_CONFIG__providers__openai-chat__kind": "openai-chat",
          "YOI_CONFIG__providers__openai-chat__apiKeyEnv": "LOCAL_KEY",
        },
      },
    );
    expect(cli.config.providers["openai-chat"]).toEqual({ kind: "openai-chat", apiKeyEnv: "LOCAL_KEY" });
  });

  it("is made the same for YOI_MODEL", async () => {
    const cli = await loadCliConfig({}, { ...world(), env: { YOI_MODEL: "openai-chat/qwen3" } });
    expect(cli.config.model).toBe("openai-chat/qwen3");
    expect(cli.config.providers["openai-chat"]).toMatchObject({
      kind: "openai-chat",
      apiKeyEnv: "OPENAI_API_KEY",
    });
    expect(cli.sources.model).toBe("env:YOI_MODEL");
  });

  it("is the built-in one for anthropic/..., with --base-url on it", async () => {
    const cli = await loadCliConfig(
      { model: "anthropic/claude-haiku-4-5", baseURL: "http://127.0.0.1:9/" },
      { ...world(), env: {} },
    );
    expect(cli.config.providers.anthropic).toMatchObject({
      kind: "anthropic",
      baseURL: "http://127.0.0.1:9/",
    });
    expect(cli.sources.model).toBe("flag:--model");
  });

  it("is chosen on the config as loaded, without reading the files again", async () => {
    const dirs = world(
      `{ "providers": { "local": { "kind": "openai-chat", "baseURL": "http://127.0.0.1:1111/v1" } }, "models": { "qwen3": { "provider": "local", "contextWindow": 32768, "maxOutputTokens": 4096 } } }`,
    );
    const base = await loadProjectConfig({}, { ...dirs, env: {} });
    rmSync(path.join(dirs.cwd, ".yoi"), { recursive: true });
    const cli = await applySessionFlags(base, { model: "qwen3" }, {});
    expect(cli.config.model).toBe("local/qwen3");
    expect(cli.sources.model).toBe("flag:--model");
    expect(base.config.model).toBeUndefined();
  });
});
