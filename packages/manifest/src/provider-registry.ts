/**
 * What yoi knows about each provider it has built in, one row each: the
 * config's built-in `providers`, the environment variables a user sets for
 * it, the model it picks when only its key is set, its own API's host, and
 * the SDK its adapter loads. The config loader, model-ref resolution, the
 * client factory (@yoi/llm-client) and the CLI's messages all read this
 * table; none keeps its own.
 */
import type { ProviderKind } from "./catalog.ts";

/** One built-in provider. */
export interface ProviderInfo {
  /** Its name in model refs (`"openai/gpt-5"`) and in the config's `providers`. */
  readonly name: string;
  /** The API the built-in provider speaks. */
  readonly kind: ProviderKind;
  /**
   * Every provider kind this provider's key and server serve. A model ref
   * whose provider part is a kind that no config declares
   * (`openai-chat/llama3.1`) gets a provider of that kind with the
   * variables of the row that lists it.
   */
  readonly kinds: readonly ProviderKind[];
  /** The environment variable that holds the API key. */
  readonly apiKeyEnv: string;
  /** The environment variable that points the provider at another server (read into `providers.<name>.baseURL`). */
  readonly baseURLEnv: string;
  /** The model id used when nothing names a model and only this provider's key is set. */
  readonly defaultModel: string;
  /** Host of the provider's own API: a base URL on any other host is a custom server (a proxy, a local model). */
  readonly officialHost: string;
  /** npm package of the SDK the provider's adapter loads. */
  readonly sdkPackage: string;
  /** What a key looks like, for messages (`export OPENAI_API_KEY=sk-...`). */
  readonly keyExample: string;
}

/** The built-in providers, in the order the config declares them. */
export const PROVIDER_REGISTRY: readonly ProviderInfo[] = Object.freeze([
  Object.freeze({
    name: "openai",
    kind: "openai-responses",
    kinds: Object.freeze(["openai-responses", "openai-chat"] as const),
    apiKeyEnv: "OPENAI_API_KEY",
    baseURLEnv: "OPENAI_BASE_URL",
    defaultModel: "gpt-5",
    officialHost: "api.openai.com",
    sdkPackage: "openai",
    keyExample: "sk-...",
  }),
  Object.freeze({
    name: "anthropic",
    kind: "anthropic",
    kinds: Object.freeze(["anthropic"] as const),
    apiKeyEnv: "ANTHROPIC_API_KEY",
    baseURLEnv: "ANTHROPIC_BASE_URL",
    defaultModel: "claude-opus-4-5",
    officialHost: "api.anthropic.com",
    sdkPackage: "@anthropic-ai/sdk",
    keyExample: "sk-ant-...",
  }),
  Object.freeze({
    name: "gemini",
    kind: "gemini",
    kinds: Object.freeze(["gemini"] as const),
    apiKeyEnv: "GEMINI_API_KEY",
    baseURLEnv: "GOOGLE_GEMINI_BASE_URL",
    defaultModel: "gemini-2.5-pro",
    officialHost: "generativelanguage.googleapis.com",
    sdkPackage: "@google/genai",
    keyExample: "AIza...",
  }),
] satisfies ProviderInfo[]);

/** The built-in provider of that name, if there is one. */
export function builtinProvider(name: string): ProviderInfo | undefined {
  return PROVIDER_REGISTRY.find((p) => p.name === name);
}

/** The row whose key and server serve a provider kind (every kind has one). */
export function providerOfKind(kind: ProviderKind): ProviderInfo {
  const row = PROVIDER_REGISTRY.find((p) => p.kinds.includes(kind));
  if (row === undefined) throw new TypeError(`no built-in provider serves the kind "${kind}"`);
  return row;
}

/**
 * Whether `baseURL` points at a server other than the provider kind's own
 * API (a proxy, Ollama, llama.cpp, vLLM). No base URL means the SDK's
 * default, the official API.
 */
export function isCustomServer(kind: ProviderKind, baseURL: string | undefined): boolean {
  if (baseURL === undefined) return false;
  let host: string;
  try {
    host = new URL(baseURL).hostname;
  } catch {
    return true;
  }
  return host !== providerOfKind(kind).officialHost;
}

/**
 * The config's built-in `providers` entries, a fresh object each call:
 * `{ openai: { kind: "openai-responses", apiKeyEnv: "OPENAI_API_KEY" }, ... }`.
 */
export function builtinProviderConfigs(): Record<string, { kind: ProviderKind; apiKeyEnv: string }> {
  return Object.fromEntries(PROVIDER_REGISTRY.map((p) => [p.name, { kind: p.kind, apiKeyEnv: p.apiKeyEnv }]));
}
