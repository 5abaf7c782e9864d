/**
 * The catalog lookup the client uses to decide what a model can take.
 * One place, so the rest of the package sees only `ModelCapabilities`.
 */
import { findModel, type ModelCapabilities, PROVIDER_KINDS } from "@yoi/manifest";
import type { ProviderKind, ProviderName } from "./item.ts";

/**
 * Capabilities of `model` as served by `provider`, or undefined for a model
 * the catalog does not know (every model of an outside adapter's provider).
 */
export function findModelCapabilities(provider: ProviderName, model: string): ModelCapabilities | undefined {
  if (!isProviderKind(provider)) return undefined;
  return findModel(provider, model)?.capabilities;
}

/** Whether `name` is a built-in provider (narrows a {@link ProviderName} for exhaustive handling). */
export function isProviderKind(name: ProviderName): name is ProviderKind {
  return (PROVIDER_KINDS as readonly string[]).includes(name);
}
