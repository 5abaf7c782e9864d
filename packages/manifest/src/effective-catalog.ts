import { findModel, type ModelCapabilities, type ModelInfo, type ProviderKind } from "./catalog.ts";
import { MODEL_CATALOG } from "./catalog-data.ts";
import { ConfigError, makeIssue } from "./config-error.ts";
import { type Config, type ProviderConfig, parseModelRef, providerKindOf } from "./config-schema.ts";

/** Capabilities of a config-declared model the catalog does not know: tools only, nothing assumed. */
export const UNKNOWN_MODEL_CAPABILITIES: Readonly<ModelCapabilities> = Object.freeze({
  tools: true,
  parallelTools: false,
  reasoning: "none",
  vision: false,
  promptCaching: false,
});

/**
 * The effective model catalog: the config's `models` entries first (so they
 * win in {@link findModel}), then `base`. An entry for a model the catalog
 * knows inherits the missing numbers and capabilities from it; it overrides
 * the model only for the kind of the provider it names.
 */
export function buildModelCatalog(
  config: Pick<Config, "models" | "providers">,
  base: readonly ModelInfo[] = MODEL_CATALOG,
): readonly ModelInfo[] {
  const declared: ModelInfo[] = [];
  for (const [id, entry] of Object.entries(config.models)) {
    const kind = providerKindOf(config, entry.provider);
    if (!kind) continue; // checkReferences reports it; a loaded Config never has one.
    const known = findModel(kind, id, base);
    const contextWindow = entry.contextWindow ?? known?.contextWindow;
    const maxOutputTokens = entry.maxOutputTokens ?? known?.maxOutputTokens;
    if (contextWindow === undefined || maxOutputTokens === undefined) continue;
    const info: ModelInfo = {
      id,
      providers: [kind],
      contextWindow,
      maxOutputTokens,
      capabilities: { ...(known?.capabilities ?? UNKNOWN_MODEL_CAPABILITIES), ...entry.capabilities },
    };
    const maxInputTokens =
      entry.maxInputTokens ?? (entry.contextWindow === undefined ? known?.maxInputTokens : undefined);
    if (maxInputTokens !== undefined) info.maxInputTokens = maxInputTokens;
    const aliases = entry.aliases ?? known?.aliases;
    if (aliases) info.aliases = [...aliases];
    const pricing = entry.pricing ?? known?.pricing;
    if (pricing) info.pricing = { ...pricing };
    declared.push(info);
  }
  return Object.freeze([...declared, ...base]);
}

/** A model ref resolved against a config. */
export interface ResolvedModel {
  /** Key of `providers`. */
  providerName: string;
  provider: ProviderConfig;
  kind: ProviderKind;
  /** Model id as the provider's API names it. */
  model: string;
  /** Catalog entry, or `undefined` for a model neither the catalog nor the config knows. */
  info: ModelInfo | undefined;
}

/**
 * Resolve `"<provider>/<model>"` (default: `config.model`) to its provider
 * settings and catalog entry. Throws a {@link ConfigError} when no model is
 * configured or the provider is not declared.
 */
export function resolveModel(config: Config, ref: string | undefined = config.model): ResolvedModel {
  if (ref === undefined) {
    throw new ConfigError([
      makeIssue({
        code: "missing_value",
        file: "config",
        path: ["model"],
        expected:
          'a model as "<provider>/<model>": set "model" in ~/.yoi/config.jsonc or .yoi/config.jsonc, or YOI_MODEL (e.g. "anthropic/claude-sonnet-4-5", "openai/gpt-5")',
      }),
    ]);
  }
  const parsed = parseModelRef(ref);
  const provider =
    parsed && Object.hasOwn(config.providers, parsed.provider)
      ? config.providers[parsed.provider]
      : undefined;
  if (!parsed || !provider) {
    const names = Object.keys(config.providers)
      .map((n) => `"${n}"`)
      .join(", ");
    throw new ConfigError([
      makeIssue({
        code: "invalid_value",
        file: "config",
        path: ["model"],
        found: JSON.stringify(ref),
        expected: `"<provider>/<model>" with a provider declared in \`providers\` (${names})`,
      }),
    ]);
  }
  const catalog = buildModelCatalog(config);
  return {
    providerName: parsed.provider,
    provider,
    kind: provider.kind,
    model: parsed.model,
    info: findModel(provider.kind, parsed.model, catalog),
  };
}
