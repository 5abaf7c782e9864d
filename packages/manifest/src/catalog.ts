/**
 * The model catalog: what each known model can take. The llm-client decides
 * what to send from it; compaction takes the context window from it.
 */

import { MODEL_CATALOG } from "./catalog-data.ts";

export type ProviderKind = "anthropic" | "openai-chat" | "openai-responses" | "gemini";

/** Every provider kind, in a stable order (for schemas and messages). */
export const PROVIDER_KINDS = Object.freeze([
  "openai-responses",
  "openai-chat",
  "anthropic",
  "gemini",
] as const satisfies readonly ProviderKind[]);

export interface ModelCapabilities {
  /** Accepts tool definitions and returns tool calls. */
  tools: boolean;
  /** May return several tool calls in one response. */
  parallelTools: boolean;
  /** How reasoning is controlled: an effort level, a token budget, or not at all. */
  reasoning: "effort" | "budget" | "none";
  /** Accepts image input. */
  vision: boolean;
  /** The provider caches prompt prefixes (automatically, or with explicit breakpoints). */
  promptCaching: boolean;
  /**
   * Accepts a system message after the first turn. Absent: the adapter
   * decides (OpenAI's own APIs yes, OpenAI-compatible servers no; Anthropic
   * and Gemini take system text only at the top). When false, such a
   * message is sent as user text in `<system-reminder>`. Declare it for a
   * model on a compatible server whose template takes system messages anywhere.
   */
  systemMessagesAnywhere?: boolean;
  /**
   * The provider can search the web for this model on its own side
   * (Anthropic's web search tool, OpenAI Responses `web_search`, Gemini
   * Google Search grounding); yoi then offers a `web_search` tool (see
   * `webSearchServerTool`). Absent: no.
   */
  webSearch?: boolean;
}

/** Prices in US dollars per million tokens. */
export interface ModelPricing {
  /** Input tokens (not read from a cache). */
  input: number;
  output: number;
  /** Input tokens read from the prompt cache. Default: `input`. */
  cacheRead?: number;
  /** Input tokens written to the prompt cache (Anthropic). Default: `input`. */
  cacheWrite?: number;
}

export interface ModelInfo {
  /** Model id as the provider's API names it. */
  id: string;
  /** Provider families that serve it (OpenAI models are served by both OpenAI APIs). */
  providers: ProviderKind[];
  /** Context window in tokens (input + output). */
  contextWindow: number;
  /** Most tokens one response may produce. */
  maxOutputTokens: number;
  /**
   * Most input tokens, when the provider publishes an input cap below the
   * context window (gpt-5: 272k of 400k). Absent: input may fill the window.
   */
  maxInputTokens?: number;
  /** Other ids the API accepts for the same model (dated snapshots, `-0` aliases). */
  aliases?: string[];
  capabilities: ModelCapabilities;
  /** List prices; absent when unknown (costs then show as "?"). */
  pricing?: ModelPricing;
}

/**
 * A suffix the providers append to a model id for a snapshot or a channel:
 * dates (`-20250929`, `-2025-08-07`, `@20250929`), `-latest`, `-preview`,
 * `-exp`, `-001`, and Gemini's `-preview-09-2025`. Anything else (`-pro`,
 * `-mini`) names a different model and is not stripped.
 */
const SNAPSHOT_SUFFIX = /^(?:[-@](?:\d+|latest|preview|exp))+$/;

/** Ids as some APIs list them (`models/gemini-2.5-pro`). */
const LISTING_PREFIX = /^models\//;

/**
 * Find a model in a catalog for a provider kind. An exact id or alias match
 * wins; otherwise the entry whose id (or alias) is the longest prefix of `id`
 * followed only by a snapshot suffix (so `claude-sonnet-4-5-20250929` and
 * `gpt-5-2025-08-07` resolve, while an unknown `gpt-5-pro` does not fall back
 * to `gpt-5`). Earlier entries win over later ones with the same id, which is
 * how config-declared models override the built-in catalog.
 */
export function findModel(
  provider: ProviderKind,
  id: string,
  catalog: readonly ModelInfo[] = MODEL_CATALOG,
): ModelInfo | undefined {
  // A frozen catalog (the built-in one, an effective one) cannot change: its answers are kept, since a session asks
  // the same question for every model call and a model the catalog does not know costs a scan of all of it.
  if (!Object.isFrozen(catalog)) return searchCatalog(provider, id, catalog);
  let answers = found.get(catalog);
  if (answers === undefined) {
    answers = new Map();
    found.set(catalog, answers);
  }
  const key = `${provider}\0${id}`;
  if (answers.has(key)) return answers.get(key);
  const info = searchCatalog(provider, id, catalog);
  answers.set(key, info);
  return info;
}

/** {@link findModel}'s answers per frozen catalog, by provider kind and id. */
const found = new WeakMap<readonly ModelInfo[], Map<string, ModelInfo | undefined>>();

function searchCatalog(
  provider: ProviderKind,
  id: string,
  catalog: readonly ModelInfo[],
): ModelInfo | undefined {
  const wanted = id.replace(LISTING_PREFIX, "");
  const served = catalog.filter((m) => m.providers.includes(provider));
  for (const m of served) {
    if (m.id === wanted || m.aliases?.includes(wanted)) return m;
  }
  let best: ModelInfo | undefined;
  let bestLength = 0;
  for (const m of served) {
    for (const name of [m.id, ...(m.aliases ?? [])]) {
      if (
        name.length > bestLength &&
        wanted.startsWith(name) &&
        SNAPSHOT_SUFFIX.test(wanted.slice(name.length))
      ) {
        best = m;
        bestLength = name.length;
      }
    }
  }
  return best;
}
