/**
 * The client factory: a config, a model ref and the environment in, a
 * client out, with the key, base URL and headers where the config and the
 * provider registry say; and warnings delivered to the call that caused them.
 */
import { type Config, ConfigError, type ConfigInput, ConfigSchema } from "@yoi/manifest";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ClientWarning,
  createModelClient,
  modelEndpoint,
  PLACEHOLDER_API_KEY,
  userMessage,
} from "../src/index.ts";
import { type ScriptedServer, startScriptedServer } from "../src/testing/index.ts";
import { collect } from "./stream-helpers.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const config = (input: ConfigInput = {}): Config => ConfigSchema.parse(input);

describe("modelEndpoint", () => {
  it("reads the key the provider's apiKeyEnv names, and nothing for the provider's own API without one", () => {
    const withKey = modelEndpoint(config({ model: "anthropic/claude-haiku-4-5" }), {
      env: { ANTHROPIC_API_KEY: " sk-ant-x " },
    });
    expect(withKey).toMatchObject({
      baseURL: undefined,
      customServer: false,
      keyEnv: "ANTHROPIC_API_KEY",
      apiKey: "sk-ant-x",
    });
    expect(withKey.resolved).toMatchObject({ providerName: "anthropic", model: "claude-haiku-4-5" });
    const without = modelEndpoint(config({ model: "gemini/gemini-2.5-flash" }), { env: {} });
    expect(without.apiKey).toBeUndefined();
    expect(without.keyEnv).toBe("GEMINI_API_KEY");
  });

  it("gives a custom server without a key the placeholder", () => {
    const local = config({
      providers: { local: { kind: "openai-chat", baseURL: "http://127.0.0.1:11434/v1" } },
      model: "local/qwen3",
      models: { qwen3: { provider: "local", contextWindow: 32768, maxOutputTokens: 4096 } },
    });
    expect(modelEndpoint(local, { env: {} })).toMatchObject({
      customServer: true,
      keyEnv: undefined,
      apiKey: PLACEHOLDER_API_KEY,
    });
  });

  it("resolves another ref than the config's: a bare name, a provider kind no source declares", () => {
    const base = config({ model: "anthropic/claude-haiku-4-5" });
    expect(modelEndpoint(base, { ref: "gpt-5", env: {} }).resolved.providerName).toBe("openai");
    const kind = modelEndpoint(base, {
      ref: "openai-chat/llama3.1",
      env: { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" },
    });
    expect(kind).toMatchObject({
      baseURL: "http://127.0.0.1:8080/v1",
      customServer: true,
      keyEnv: "OPENAI_API_KEY",
      apiKey: PLACEHOLDER_API_KEY,
    });
    expect(() => modelEndpoint(base, { ref: "azure/gpt-5", env: {} })).toThrow(ConfigError);
    expect(() => modelEndpoint(config(), { env: {} })).toThrow(ConfigError);
  });
});

describe("createModelClient", () => {
  it("sends the model to the configured server with the configured headers", async () => {
    const server = await startScriptedServer({
      provider: "openai-chat",
      script: [{ type: "reply", text: "hi" }],
    });
    servers.push(server);
    const client = createModelClient(
      config({
        providers: { local: { kind: "openai-chat", baseURL: server.baseURL, headers: { "X-Team": "core" } } },
        model: "local/qwen3",
        models: { qwen3: { provider: "local", contextWindow: 32768, maxOutputTokens: 4096 } },
      }),
      { env: {} },
    );
    expect([client.provider, client.model]).toEqual(["openai-chat", "qwen3"]);
    const r = await collect(client.stream({ items: [userMessage("hello")] }));
    expect(r.text).toBe("hi");
    expect((server.requests[0] as { model: string }).model).toBe("qwen3");
  });
});

describe("warnings of one call", () => {
  it("reach the onWarning of the call that caused them, not of later calls", async () => {
    const server = await startScriptedServer({
      provider: "anthropic",
      script: [
        { type: "reply", text: "ok" },
        { type: "reply", text: "ok" },
      ],
    });
    servers.push(server);
    const heard: string[] = [];
    const client = createModelClient(
      config({ providers: { anthropic: { baseURL: server.baseURL } }, model: "anthropic/claude-haiku-4-5" }),
      { env: { ANTHROPIC_API_KEY: "k" } },
    );
    // A call whose result never arrived: the client repairs the history and says so.
    const broken = {
      items: [
        userMessage("go"),
        { type: "tool_call" as const, callId: "x", name: "read", arguments: "{}" },
        userMessage("again"),
      ],
    };
    const onWarning = (w: ClientWarning) => heard.push(`call: ${w.code}`);
    expect((await collect(client.stream(broken, { onWarning }))).status).toBe("completed");
    expect(heard).toEqual(["call: repaired_history"]);
    expect((await collect(client.stream(broken))).status).toBe("completed");
    expect(heard).toEqual(["call: repaired_history"]);
  });
});
