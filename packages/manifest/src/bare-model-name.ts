/**
 * A bare model name (`gpt-5`, `claude-sonnet-4-5`) as people type it, made
 * into the `"<provider>/<model>"` ref the config speaks: a config `models`
 * entry's provider when it names one, else the first declared provider
 * whose kind serves that model in the effective catalog.
 */
import { findModel } from "./catalog.ts";
import type { Config } from "./config-schema.ts";
import { buildModelCatalog } from "./effective-catalog.ts";

/** The ref a bare name means, or undefined when no declared provider serves a model of that name. A ref with a `/` is returned as is. */
export function qualifyModelRef(
  config: Pick<Config, "providers" | "models">,
  name: string,
): string | undefined {
  if (name.includes("/")) return name;
  const providers = Object.entries(config.providers);
  const declared = Object.hasOwn(config.models, name) ? config.models[name]?.provider : undefined;
  if (declared !== undefined) {
    if (Object.hasOwn(config.providers, declared)) return `${declared}/${name}`;
    const ofKind = providers.find(([, p]) => p.kind === declared);
    if (ofKind) return `${ofKind[0]}/${name}`;
  }
  const catalog = buildModelCatalog(config);
  for (const [providerName, provider] of providers) {
    if (findModel(provider.kind, name, catalog)) return `${providerName}/${name}`;
  }
  return undefined;
}
