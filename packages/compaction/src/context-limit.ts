/**
 * The context limit compaction measures against
 * (docs/design/context-management.md#the-strict-context-limit): from the model
 * catalog, strictly. An unknown model is an error that says how to declare it,
 * not a guess.
 */
import { isProviderKind, type ProviderName } from "@yoi/llm-client";
import { findModel, MODEL_CATALOG, type ModelInfo } from "@yoi/manifest";
import { CompactionError } from "./errors.ts";

export interface ModelLimits {
  /** The model's context window (input + output), in tokens. */
  contextWindow: number;
  /** Most prompt tokens: `maxInputTokens` when the catalog has one, else the window. */
  contextLimit: number;
  maxOutputTokens: number;
}

/**
 * Looks a model up in `catalog` (default: the built-in one; pass the
 * effective catalog of a config, `buildModelCatalog(config)`, so `models`
 * entries count). Throws `CompactionError("unknown_model")` when absent.
 */
export function resolveModelLimits(
  provider: ProviderName,
  model: string,
  catalog: readonly ModelInfo[] = MODEL_CATALOG,
): ModelLimits {
  // The catalog holds built-in providers only: an outside adapter's models are declared nowhere.
  const info = isProviderKind(provider) ? findModel(provider, model, catalog) : undefined;
  if (info === undefined) {
    throw new CompactionError(
      "unknown_model",
      `Unknown model "${model}" (${provider}): its context window is not in the model catalog, so compaction cannot tell when the context is full. ` +
        `Declare it in .yoi/config.jsonc under "models", e.g. "models": { "${model}": { "provider": "${provider}", "contextWindow": 128000, "maxOutputTokens": 8192 } }, ` +
        "or pass contextWindow to createContextPolicy.",
    );
  }
  return limitsOf(info);
}

export function limitsOf(info: ModelInfo): ModelLimits {
  return {
    contextWindow: info.contextWindow,
    contextLimit: info.maxInputTokens ?? info.contextWindow,
    maxOutputTokens: info.maxOutputTokens,
  };
}
