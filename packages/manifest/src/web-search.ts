/**
 * Server-side web search: the one place that says which provider kinds can
 * search the web on their own side and how their request names that tool.
 * The model catalog says which models can (`capabilities.webSearch`).
 */
import type { ModelCapabilities, ProviderKind } from "./catalog.ts";

/** The name the `web_search` tool goes by in permissions, history and events, whatever the provider. */
export const WEB_SEARCH_TOOL_NAME = "web_search";

/**
 * The built-in tool definition each provider kind takes, sent as the
 * request's server tool. OpenAI Chat Completions has none.
 */
const SERVER_TOOLS: Readonly<Partial<Record<ProviderKind, Readonly<Record<string, unknown>>>>> =
  Object.freeze({
    // Anthropic's versioned server tool; `max_uses` bounds the searches of one response.
    anthropic: Object.freeze({ type: "web_search_20250305", name: WEB_SEARCH_TOOL_NAME, max_uses: 5 }),
    "openai-responses": Object.freeze({ type: "web_search" }),
    gemini: Object.freeze({ googleSearch: Object.freeze({}) }),
  });

/**
 * The server tool that gives `kind`'s model web search, or undefined where
 * there is none: a provider kind without server-side search, or a model
 * whose capabilities (catalog or config) do not say `webSearch`, which is
 * every model the catalog does not know. A fresh object each call.
 */
export function webSearchServerTool(
  kind: ProviderKind,
  capabilities: ModelCapabilities | undefined,
): Record<string, unknown> | undefined {
  const tool = SERVER_TOOLS[kind];
  if (tool === undefined || capabilities?.webSearch !== true) return undefined;
  return structuredClone(tool) as Record<string, unknown>;
}
