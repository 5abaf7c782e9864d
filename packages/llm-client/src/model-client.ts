/**
 * The one client factory: from a loaded config, a model ref and the
 * environment to an {@link LlmClient}. Which provider serves the ref, its
 * base URL and headers come from the config (a provider kind no source
 * declares gets its registry row's variables, see `withModel`), the key
 * from the variable the provider's `apiKeyEnv` names (else from the saved
 * credentials, `yoi setup`'s, for that variable), capabilities from
 * the effective catalog. Whoever makes requests hears of warnings per
 * call (`StreamOptions.onWarning`), so nothing here needs to know them.
 */
import {
  type Config,
  type Credentials,
  isCustomServer,
  type ResolvedModel,
  resolveModel,
  withModel,
} from "@yoi/manifest";
import { createClient } from "./client.ts";
import type { LlmClient } from "./request.ts";

/** Key sent to a custom server when no key is set (Ollama, llama.cpp and vLLM ignore it). */
export const PLACEHOLDER_API_KEY = "yoi-no-key";

/** Where a model's requests go and with which key. */
export interface ModelEndpoint {
  resolved: ResolvedModel;
  /** The provider's base URL, when one is set (else the SDK's default, the provider's own API). */
  baseURL: string | undefined;
  /** The base URL points at a server other than the provider's own API. */
  customServer: boolean;
  /** The variable the key is read from (for messages; never the key). */
  keyEnv: string | undefined;
  /** Where the key came from: the environment, or the saved credentials. */
  keySource: "env" | "credentials" | undefined;
  /**
   * The key: the variable's value, else {@link PLACEHOLDER_API_KEY} for a
   * custom server (which needs none), else undefined (the provider will
   * refuse the request: tell the user which variable to set).
   */
  apiKey: string | undefined;
}

export interface ModelClientOptions {
  /** `"<provider>/<model>"` or a bare model name the catalog knows. Default: `config.model`. */
  ref?: string;
  /** Where the key (and a provider kind's base URL) is read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Saved keys by variable name (`readCredentials`): used when the variable is not set. */
  credentials?: Credentials;
}

/**
 * Resolves `options.ref` (default `config.model`) against `config`.
 * Throws the manifest's `ConfigError` when no model is set or the ref
 * names no provider the config declares (or a provider kind).
 */
export function modelEndpoint(config: Config, options: ModelClientOptions = {}): ModelEndpoint {
  const env = options.env ?? process.env;
  const chosen =
    options.ref === undefined ? config : withModel({ config, sources: {} }, { ref: options.ref, env }).config;
  const resolved = resolveModel(chosen);
  const baseURL = resolved.provider.baseURL;
  const customServer = isCustomServer(resolved.kind, baseURL);
  const keyEnv = resolved.provider.apiKeyEnv;
  const fromEnv = keyEnv === undefined ? undefined : env[keyEnv]?.trim() || undefined;
  const saved = keyEnv === undefined ? undefined : options.credentials?.[keyEnv]?.trim() || undefined;
  const key = fromEnv ?? saved;
  return {
    resolved,
    baseURL,
    customServer,
    keyEnv,
    keySource: fromEnv !== undefined ? "env" : saved !== undefined ? "credentials" : undefined,
    apiKey: key ?? (customServer ? PLACEHOLDER_API_KEY : undefined),
  };
}

/**
 * A client for `options.ref` (default `config.model`): the provider's SDK
 * loads on its first request. Throws like {@link modelEndpoint}.
 */
export function createModelClient(config: Config, options: ModelClientOptions = {}): LlmClient {
  const { resolved, baseURL, apiKey } = modelEndpoint(config, options);
  const anywhere = resolved.info?.capabilities.systemMessagesAnywhere;
  return createClient({
    provider: resolved.kind,
    model: resolved.model,
    ...(apiKey ? { apiKey } : {}),
    ...(baseURL ? { baseURL } : {}),
    ...(resolved.provider.headers ? { headers: resolved.provider.headers } : {}),
    ...(Object.keys(config.retry).length > 0 ? { retry: config.retry } : {}),
    // A capability the catalog or config declares overrides the adapter's default.
    ...(anywhere === undefined ? {} : { systemMessagesAnywhere: anywhere }),
  });
}
