import type { ModelCapabilities, ModelInfo, ModelPricing } from "./catalog.ts";

/*
 * Numbers are as published by the providers in their model documentation
 * (OpenAI models pages, Anthropic "Models overview", Google "Gemini models"),
 * as of late 2025. Context windows that a provider offers only behind a beta
 * header (Anthropic's 1M window for Sonnet 4 / 4.5) are not used here: a
 * config `models` entry can raise them.
 */

/**
 * List prices in US dollars per million tokens, as the providers publish
 * them for standard (not batch, not priority) requests: input, output,
 * cached input read, and (Anthropic) cache write at the 5-minute TTL.
 * Gemini Pro models are priced at their tier for prompts up to 200k tokens.
 * A config `models.<id>.pricing` overrides them.
 */
function usd(input: number, output: number, cacheRead?: number, cacheWrite?: number): ModelPricing {
  return {
    input,
    output,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
  };
}

const OPENAI = ["openai-responses", "openai-chat"] as ModelInfo["providers"];

/** OpenAI reasoning models: effort-controlled reasoning, tools, images, automatic prompt caching. */
const OPENAI_REASONING: ModelCapabilities = {
  tools: true,
  parallelTools: true,
  reasoning: "effort",
  vision: true,
  promptCaching: true,
  webSearch: true,
};
/** OpenAI GPT-4.x chat models: no reasoning control. */
const OPENAI_CHAT: ModelCapabilities = { ...OPENAI_REASONING, reasoning: "none" };
/** Anthropic Claude 4.x: extended thinking with `budget_tokens`, `cache_control` breakpoints. */
const CLAUDE: ModelCapabilities = {
  tools: true,
  parallelTools: true,
  reasoning: "budget",
  vision: true,
  promptCaching: true,
  webSearch: true,
};
/** Gemini 2.5: `thinkingBudget`; implicit and explicit context caching. */
const GEMINI_25: ModelCapabilities = {
  tools: true,
  parallelTools: true,
  reasoning: "budget",
  vision: true,
  promptCaching: true,
  webSearch: true,
};

/**
 * The built-in model catalog: current OpenAI, Anthropic and Gemini models with
 * context window, max output tokens and capabilities, as published by the
 * providers. `id` is the name users write; `aliases` are the other ids the API
 * accepts for the same model (dated snapshots). Config `models` entries extend
 * or override it (see `buildModelCatalog`).
 */
export const MODEL_CATALOG: readonly ModelInfo[] = deepFreeze([
  // OpenAI. gpt-5 family: 400k window of which 272k input, 128k output.
  {
    id: "gpt-5.1",
    pricing: usd(1.25, 10, 0.125),
    aliases: ["gpt-5.1-2025-11-13"],
    providers: OPENAI,
    contextWindow: 400_000,
    maxInputTokens: 272_000,
    maxOutputTokens: 128_000,
    capabilities: OPENAI_REASONING,
  },
  {
    id: "gpt-5",
    pricing: usd(1.25, 10, 0.125),
    aliases: ["gpt-5-2025-08-07"],
    providers: OPENAI,
    contextWindow: 400_000,
    maxInputTokens: 272_000,
    maxOutputTokens: 128_000,
    capabilities: OPENAI_REASONING,
  },
  {
    id: "gpt-5-mini",
    pricing: usd(0.25, 2, 0.025),
    aliases: ["gpt-5-mini-2025-08-07"],
    providers: OPENAI,
    contextWindow: 400_000,
    maxInputTokens: 272_000,
    maxOutputTokens: 128_000,
    capabilities: OPENAI_REASONING,
  },
  {
    id: "gpt-5-nano",
    pricing: usd(0.05, 0.4, 0.005),
    aliases: ["gpt-5-nano-2025-08-07"],
    providers: OPENAI,
    contextWindow: 400_000,
    maxInputTokens: 272_000,
    maxOutputTokens: 128_000,
    capabilities: OPENAI_REASONING,
  },
  {
    id: "gpt-4.1",
    pricing: usd(2, 8, 0.5),
    aliases: ["gpt-4.1-2025-04-14"],
    providers: OPENAI,
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    capabilities: OPENAI_CHAT,
  },
  {
    id: "gpt-4.1-mini",
    pricing: usd(0.4, 1.6, 0.1),
    aliases: ["gpt-4.1-mini-2025-04-14"],
    providers: OPENAI,
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    capabilities: OPENAI_CHAT,
  },
  {
    id: "gpt-4o",
    pricing: usd(2.5, 10, 1.25),
    aliases: ["gpt-4o-2024-08-06", "gpt-4o-2024-11-20"],
    providers: OPENAI,
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: OPENAI_CHAT,
  },
  {
    id: "gpt-4o-mini",
    pricing: usd(0.15, 0.6, 0.075),
    aliases: ["gpt-4o-mini-2024-07-18"],
    providers: OPENAI,
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: OPENAI_CHAT,
  },
  {
    id: "o3",
    pricing: usd(2, 8, 0.5),
    aliases: ["o3-2025-04-16"],
    providers: OPENAI,
    contextWindow: 200_000,
    maxOutputTokens: 100_000,
    capabilities: OPENAI_REASONING,
  },
  {
    id: "o4-mini",
    pricing: usd(1.1, 4.4, 0.275),
    aliases: ["o4-mini-2025-04-16"],
    providers: OPENAI,
    contextWindow: 200_000,
    maxOutputTokens: 100_000,
    capabilities: OPENAI_REASONING,
  },

  // Anthropic. The undated ids are the API's aliases for the dated snapshots.
  {
    id: "claude-opus-4-5",
    pricing: usd(5, 25, 0.5, 6.25),
    aliases: ["claude-opus-4-5-20251101"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: CLAUDE,
  },
  {
    id: "claude-sonnet-4-5",
    pricing: usd(3, 15, 0.3, 3.75),
    aliases: ["claude-sonnet-4-5-20250929"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: CLAUDE,
  },
  {
    id: "claude-haiku-4-5",
    pricing: usd(1, 5, 0.1, 1.25),
    aliases: ["claude-haiku-4-5-20251001"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: CLAUDE,
  },
  {
    id: "claude-opus-4-1",
    pricing: usd(15, 75, 1.5, 18.75),
    aliases: ["claude-opus-4-1-20250805"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    capabilities: CLAUDE,
  },
  {
    // The API's alias is `claude-sonnet-4-0`; `claude-sonnet-4` is accepted here as people write it.
    id: "claude-sonnet-4",
    pricing: usd(3, 15, 0.3, 3.75),
    aliases: ["claude-sonnet-4-20250514", "claude-sonnet-4-0"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: CLAUDE,
  },
  {
    id: "claude-opus-4",
    pricing: usd(15, 75, 1.5, 18.75),
    aliases: ["claude-opus-4-20250514", "claude-opus-4-0"],
    providers: ["anthropic"],
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    capabilities: CLAUDE,
  },

  // Gemini: 1,048,576 input tokens, 65,536 output tokens.
  {
    // Gemini 3 controls reasoning with `thinkingLevel` (low / high): an effort, not a budget.
    id: "gemini-3-pro-preview",
    pricing: usd(2, 12, 0.2),
    providers: ["gemini"],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    capabilities: { ...GEMINI_25, reasoning: "effort" },
  },
  {
    id: "gemini-2.5-pro",
    pricing: usd(1.25, 10, 0.125),
    providers: ["gemini"],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    capabilities: GEMINI_25,
  },
  {
    id: "gemini-2.5-flash",
    pricing: usd(0.3, 2.5, 0.03),
    providers: ["gemini"],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    capabilities: GEMINI_25,
  },
  {
    id: "gemini-2.5-flash-lite",
    pricing: usd(0.1, 0.4, 0.01),
    providers: ["gemini"],
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    capabilities: GEMINI_25,
  },
]);

/** Freeze the catalog so no consumer can change what every other one reads. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
