/**
 * The catalog lookup the client uses to decide what a model can take.
 * One place, so the rest of the package sees only `ModelCapabilities`.
 */
import { findModel, type ModelCapabilities } from "@yoi/manifest";
import type { ProviderKind } from "./item.ts";

/** Capabilities of `model` as served by `provider`, or undefined for a model the catalog does not know. */
export function findModelCapabilities(provider: ProviderKind, model: string): ModelCapabilities | undefined {
  return findModel(provider, model)?.capabilities;
}
