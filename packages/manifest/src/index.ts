export * from "./defaults.ts";
export type { ModelCapabilities, ModelInfo, ProviderKind } from "./catalog.ts";
