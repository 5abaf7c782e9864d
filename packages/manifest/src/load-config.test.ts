import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConfigDirs, makeConfigDirs } from "./__tests__/config-dirs.ts";
import { ConfigLayerSchema, ConfigSchema } from "./config-schema.ts";
import { buildModelCatalog } from "./effective-catalog.ts";
import { ENV_VARIABLES } from "./env-layer.ts";
import { formatConfig } from "./format-config.ts";
import { loadConfig } from "./load-config.ts";
import { schemaAt } from "./schema-walk.ts";

let dirs: ConfigDirs;
beforeEach(() => {
  dirs = makeConfigDirs();
});
afterEach(() => dirs.cleanup());

const load = (options: Parameters<typeof loadConfig>[0] = {}) =>
  loadConfig({ homeDir: dirs.home, cwd: dirs.cwd, env: {}, ...options });

describe("loadConfig: sources and precedence", () => {
  it("returns the defaults, every leaf marked as such, when nothing is configured", async () => {
    const { config, sources, files } = await load();
    expect(config).toEqual(ConfigSchema.parse({}));
    expect(files).toEqual([]);
    expect(sources["worker.maxTurns"]).toBe("default");
    expect(sources["compaction.thresholdRatio"]).toBe("default");
    expect(sources["permissions.default"]).toBe("default");
    expect(Object.values(sources).every((s) => s === "default")).toBe(true);
  });

  it("merges defaults < user < project < env < overrides and says where each value came from", async () => {
    dirs.writeUser(`{
      "model": "anthropic/claude-sonnet-4-5",
      "worker": { "maxTurns": 10, "maxTokens": 1000, "toolTimeoutMs": 5000 },
      "compaction": { "retainLastTurns": 3 },
    }`);
    dirs.writeProject(`{
      "worker": { "maxTurns": 20, "maxTokens": 2000 },
    }`);
    const { config, sources, files } = await load({
      env: { YOI_MAX_TURNS: "30", YOI_COMPACTION_ENABLED: "false" },
      overrides: { worker: { maxTurns: 40 } },
    });
    expect(files).toEqual([dirs.userFile, dirs.projectFile]);
    expect(config.model).toBe("anthropic/claude-sonnet-4-5");
    expect(config.worker).toMatchObject({ maxTurns: 40, maxTokens: 2000, toolTimeoutMs: 5000 });
    expect(config.compaction.enabled).toBe(false);
    expect(config.compaction.retainLastTurns).toBe(3);
    expect(config.compaction.auto).toBe(true);
    expect(sources).toMatchObject({
      model: dirs.userFile,
      "worker.toolTimeoutMs": dirs.userFile,
      "worker.maxTokens": dirs.projectFile,
      "worker.maxTurns": "override",
      "compaction.enabled": "env:YOI_COMPACTION_ENABLED",
      "compaction.retainLastTurns": dirs.userFile,
      "compaction.auto": "default",
    });
  });

  it("adds permission rules across sources instead of replacing them", async () => {
    dirs.writeUser(`{ "permissions": { "rules": [
      { "tool": "bash", "match": "rm *", "action": "deny" },
      { "tool": "bash", "match": "git *", "action": "allow" },
    ] } }`);
    dirs.writeProject(`{ "permissions": { "rules": [{ "tool": "write_file", "action": "allow" }] } }`);
    const { config, sources } = await load();
    expect(config.permissions.rules).toEqual([
      { tool: "bash", match: "rm *", action: "deny" },
      { tool: "bash", match: "git *", action: "allow" },
      { tool: "write_file", action: "allow" },
    ]);
    expect(sources["permissions.rules[0]"]).toBe(dirs.userFile);
    expect(sources["permissions.rules[2]"]).toBe(dirs.projectFile);
  });

  it("keeps the user's rules when a project file sets an empty list", async () => {
    dirs.writeUser(`{ "permissions": { "default": { "bash": "allow" }, "rules": [
      { "tool": "bash", "match": "rm *", "action": "deny" },
    ] } }`);
    dirs.writeProject(`{ "permissions": { "rules": [] } }`);
    const { config, sources } = await load();
    expect(config.permissions.rules).toEqual([{ tool: "bash", match: "rm *", action: "deny" }]);
    expect(sources["permissions.rules[0]"]).toBe(dirs.userFile);
  });

  it("merges records key by key: a built-in provider keeps its kind when a file sets its base URL", async () => {
    dirs.writeUser(`{ "providers": { "openai": { "baseURL": "http://127.0.0.1:8080/v1" } } }`);
    dirs.writeProject(`{
      "providers": { "local": { "kind": "openai-chat", "baseURL": "http://127.0.0.1:11434/v1" } },
      "model": "local/qwen3-coder",
      "models": { "qwen3-coder": { "provider": "local", "contextWindow": 32768, "maxOutputTokens": 8192 } },
    }`);
    const { config, sources } = await load();
    expect(config.providers.openai).toEqual({
      kind: "openai-responses",
      apiKeyEnv: "OPENAI_API_KEY",
      baseURL: "http://127.0.0.1:8080/v1",
    });
    expect(config.providers.anthropic?.kind).toBe("anthropic");
    expect(sources["providers.openai.kind"]).toBe("default");
    expect(sources["providers.openai.baseURL"]).toBe(dirs.userFile);
    expect(sources["providers.local.kind"]).toBe(dirs.projectFile);
    expect(sources.models).toBeUndefined();
    expect(sources["models.qwen3-coder.contextWindow"]).toBe(dirs.projectFile);
    expect(buildModelCatalog(config)[0]).toMatchObject({ id: "qwen3-coder", providers: ["openai-chat"] });
  });

  it("lets a model ref name a provider that another file declares", async () => {
    dirs.writeUser(`{ "providers": { "work": { "kind": "anthropic", "apiKeyEnv": "WORK_ANTHROPIC_KEY" } } }`);
    dirs.writeProject(`{ "model": "work/claude-opus-4-5" }`);
    const { config } = await load();
    expect(config.model).toBe("work/claude-opus-4-5");
  });

  it("reads JSONC: comments, trailing commas, a byte-order mark", async () => {
    dirs.writeProject(`\uFEFF// project settings
{
  /* block comment */
  "model": "openai/gpt-5", // line comment
  "compaction": {
    "summaryDirectives": ["keep file paths",],
  },
}
`);
    const { config } = await load();
    expect(config.model).toBe("openai/gpt-5");
    expect(config.compaction.summaryDirectives).toEqual(["keep file paths"]);
  });

  it("reads config.json when there is no config.jsonc", async () => {
    const { writeFileSync, rmSync } = await import("node:fs");
    rmSync(dirs.projectFile, { force: true });
    writeFileSync(dirs.projectFile.replace(/\.jsonc$/, ".json"), `{ "worker": { "maxTurns": 3 } }`);
    const { config, files } = await load();
    expect(config.worker.maxTurns).toBe(3);
    expect(files).toEqual([dirs.projectFile.replace(/\.jsonc$/, ".json")]);
  });

  it("reads the user file once when the working directory is the home directory", async () => {
    dirs.writeUser(`{ "worker": { "maxTurns": 9 } }`);
    const { files, sources } = await loadConfig({ homeDir: dirs.home, cwd: dirs.home, env: {} });
    expect(files).toEqual([dirs.userFile]);
    expect(sources["worker.maxTurns"]).toBe(dirs.userFile);
  });

  it("makes scope and session paths absolute: ~ is home, relative is the project directory", async () => {
    dirs.writeProject(`{
      "scope": { "root": ".", "readRoots": ["../shared", "~/notes", "/opt/docs"] },
      "session": { "dir": "~/.yoi/sessions" },
    }`);
    const { config } = await load();
    expect(config.scope.root).toBe(dirs.cwd);
    expect(config.scope.readRoots).toEqual([
      dirs.cwd.replace(/\/project$/, "/shared"),
      `${dirs.home}/notes`,
      "/opt/docs",
    ]);
    expect(config.session.dir).toBe(`${dirs.home}/.yoi/sessions`);
  });

  it("drops the editor-only $schema key", async () => {
    dirs.writeProject(`{ "$schema": "../node_modules/@yoi/manifest/schema/config.schema.json" }`);
    const { config } = await load();
    expect(config).not.toHaveProperty("$schema");
  });
});

describe("loadConfig: environment", () => {
  it("maps the named variables with their types", async () => {
    const { config, sources } = await load({
      env: {
        YOI_MODEL: "gemini/gemini-2.5-pro",
        YOI_MAX_TURNS: "12",
        YOI_MAX_TOKENS: "2048",
        YOI_TEMPERATURE: "0.2",
        YOI_REASONING_EFFORT: "high",
        YOI_REASONING_BUDGET_TOKENS: "4000",
        YOI_COMPACTION_ENABLED: "false",
        YOI_COMPACTION_AUTO: "off",
        YOI_COMPACTION_THRESHOLD_RATIO: "0.7",
        YOI_COMPACTION_MODEL: "null",
        YOI_TOOL_OUTPUT_CACHE_BUDGET_TOKENS: "30000",
        YOI_TOOL_OUTPUT_CACHE_ENABLED: "0",
        YOI_SESSION_DIR: "~/sessions",
        YOI_UNRELATED_SETTING: "whatever",
        HOME: "/elsewhere",
      },
    });
    expect(config.model).toBe("gemini/gemini-2.5-pro");
    expect(config.worker).toMatchObject({ maxTurns: 12, maxTokens: 2048, temperature: 0.2 });
    expect(config.worker.reasoning).toEqual({ effort: "high", budgetTokens: 4000 });
    expect(config.compaction).toMatchObject({
      enabled: false,
      auto: false,
      thresholdRatio: 0.7,
      model: null,
    });
    expect(config.toolOutputCache).toMatchObject({ enabled: false, contextBudgetTokens: 30_000 });
    expect(config.session.dir).toBe(`${dirs.home}/sessions`);
    expect(sources["worker.reasoning.effort"]).toBe("env:YOI_REASONING_EFFORT");
    expect(sources["toolOutputCache.contextBudgetTokens"]).toBe("env:YOI_TOOL_OUTPUT_CACHE_BUDGET_TOKENS");
  });

  it("sets any field with the YOI_CONFIG__ path form, JSON for arrays and objects", async () => {
    const { config, sources } = await load({
      env: {
        YOI_CONFIG__worker__maxTurns: "10",
        YOI_CONFIG__providers__local__kind: "openai-chat",
        YOI_CONFIG__providers__local__baseURL: "http://127.0.0.1:11434/v1",
        YOI_CONFIG__permissions__rules: '[{"tool":"bash","match":"npm test","action":"allow"}]',
        YOI_CONFIG__compaction__summaryPrompt: "42",
      },
    });
    expect(config.worker.maxTurns).toBe(10);
    expect(config.providers.local).toEqual({ kind: "openai-chat", baseURL: "http://127.0.0.1:11434/v1" });
    expect(config.permissions.rules).toEqual([{ tool: "bash", match: "npm test", action: "allow" }]);
    // A string field stays a string even when it looks like a number.
    expect(config.compaction.summaryPrompt).toBe("42");
    expect(sources["providers.local.baseURL"]).toBe("env:YOI_CONFIG__providers__local__baseURL");
    expect(sources["permissions.rules[0]"]).toBe("env:YOI_CONFIG__permissions__rules");
  });

  it("converts a variable below a union by the option that has the field (sandbox: true, false or an object)", async () => {
    const { config, sources } = await load({ env: { YOI_CONFIG__sandbox__network: "true" } });
    expect(config.sandbox).toEqual({ enabled: true, network: true });
    expect(sources["sandbox.network"]).toBe("env:YOI_CONFIG__sandbox__network");
  });

  it("reads the built-in providers' own base-URL variables, over YOI_CONFIG__ ones", async () => {
    const { config, sources } = await load({
      env: {
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9/",
        OPENAI_BASE_URL: " ",
        YOI_CONFIG__providers__anthropic__baseURL: "http://127.0.0.1:8/",
        YOI_CONFIG__providers__gemini__baseURL: "http://127.0.0.1:7/",
      },
    });
    expect(config.providers.anthropic?.baseURL).toBe("http://127.0.0.1:9/");
    expect(sources["providers.anthropic.baseURL"]).toBe("env:ANTHROPIC_BASE_URL");
    expect(config.providers.openai?.baseURL).toBeUndefined();
    expect(sources["providers.gemini.baseURL"]).toBe("env:YOI_CONFIG__providers__gemini__baseURL");
    const error = await load({ env: { GOOGLE_GEMINI_BASE_URL: "ftp://x" } }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'env:GOOGLE_GEMINI_BASE_URL: providers.gemini.baseURL: expected an http(s) URL, like "http://localhost:11434/v1", found "ftp://x"',
    );
  });

  it("treats an empty variable as unset", async () => {
    dirs.writeUser(`{ "model": "openai/gpt-5" }`);
    const { config, sources } = await load({ env: { YOI_MODEL: "" } });
    expect(config.model).toBe("openai/gpt-5");
    expect(sources.model).toBe(dirs.userFile);
  });

  it("documents only variables whose paths exist in the schema", () => {
    for (const v of ENV_VARIABLES) {
      expect(v.name).toMatch(/^YOI_[A-Z_]+$/);
      expect(schemaAt(ConfigLayerSchema, v.path.split(".")), v.name).toBeDefined();
    }
  });
});

describe("formatConfig", () => {
  it("prints each value with its source, home shown as ~, credentials redacted", async () => {
    dirs.writeUser(`{
      "providers": { "proxy": { "kind": "anthropic", "headers": { "Authorization": "Bearer sk-secret", "X-Team": "core" } } },
      "worker": { "maxTurns": 10 },
    }`);
    const loaded = await load({ env: { YOI_MODEL: "proxy/claude-haiku-4-5" } });
    const text = formatConfig(loaded, { home: dirs.home });
    const line = (path: string) => text.split("\n").find((l) => l.startsWith(`${path} `));
    expect(line("worker.maxTurns")).toMatch(/^worker\.maxTurns\s+10\s+~\/\.yoi\/config\.jsonc$/);
    expect(line("model")).toMatch(/"proxy\/claude-haiku-4-5"\s+env:YOI_MODEL$/);
    expect(line("worker.maxTokens")).toMatch(/8192\s+default$/);
    expect(line("providers.proxy.headers.X-Team")).toMatch(/"core"/);
    expect(line("providers.proxy.headers.Authorization")).toMatch(/<redacted>/);
    expect(text).not.toContain("sk-secret");
  });

  it("fits a width: long values are cut further, never under 12 columns", async () => {
    const loaded = await load();
    const whole = formatConfig(loaded, { home: dirs.home }).split("\n");
    expect(Math.max(...whole.map((l) => l.length))).toBeGreaterThan(90);
    const fitted = formatConfig(loaded, { home: dirs.home, width: 80 }).split("\n");
    for (const l of fitted) expect(l.length, l).toBeLessThanOrEqual(79);
    expect(fitted.find((l) => l.startsWith("compaction.summaryPrompt "))).toMatch(
      /"Your context .*\.\.\. {2}default$/,
    );
    // The rows stay the same, each value only cut.
    expect(fitted.map((l) => l.split(" ")[0])).toEqual(whole.map((l) => l.split(" ")[0]));
  });
});

describe("examples/config.jsonc", () => {
  it("is a valid config with the values it documents", async () => {
    const { readFileSync } = await import("node:fs");
    dirs.writeProject(readFileSync(new URL("../examples/config.jsonc", import.meta.url), "utf8"));
    const { config } = await load();
    expect(config.model).toBe("anthropic/claude-sonnet-4-5");
    expect(config.providers.local?.kind).toBe("openai-chat");
    expect(config.permissions.rules).toHaveLength(3);
    expect(config.scope.readRoots).toEqual([`${dirs.home}/notes`]);
    expect(buildModelCatalog(config)[0]?.id).toBe("qwen3-coder");
  });
});
