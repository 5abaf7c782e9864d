/**
 * Model clients from the config: a model ref (`provider/model`, default
 * `config.model`) resolved through the providers, its key from the
 * provider's `apiKeyEnv`. The one place the pod creates clients.
 */
import { createClient, type LlmClient } from "@yoi/llm-client";
import { type Config, resolveModel } from "@yoi/manifest";

/** A client for `ref` (default `config.model`), its key from the provider's `apiKeyEnv`. */
export function clientFromConfig(
  config: Config,
  options: {
    ref?: string;
    env?: Readonly<Record<string, string | undefined>>;
    onWarning?: Parameters<typeof createClient>[0]["onWarning"];
  } = {},
): LlmClient {
  const resolved = resolveModel(config, options.ref);
  const env = options.env ?? process.env;
  const keyVar = resolved.provider.apiKeyEnv;
  const apiKey = keyVar === undefined ? undefined : env[keyVar];
  const anywhere = resolved.info?.capabilities.systemMessagesAnywhere;
  return createClient({
    provider: resolved.kind,
    model: resolved.model,
    ...(apiKey ? { apiKey } : {}),
    ...(resolved.provider.baseURL ? { baseURL: resolved.provider.baseURL } : {}),
    ...(resolved.provider.headers ? { headers: resolved.provider.headers } : {}),
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    // The catalog/config capability, when declared, overrides the adapter's default.
    ...(anywhere === undefined ? {} : { systemMessagesAnywhere: anywhere }),
  });
}
