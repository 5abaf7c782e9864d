/**
 * The model catalog: what each known model can take. The llm-client decides
 * what to send from it; compaction takes the context window from it.
 */

export type ProviderKind = "anthropic" | "openai-chat" | "openai-responses" | "gemini";

export interface ModelCapabilities {
  tools: boolean;
  parallelTools: boolean;
  /** How reasoning is controlled: an effort level, a token budget, or not at all. */
  reasoning: "effort" | "budget" | "none";
  vision: boolean;
  promptCaching: boolean;
}

export interface ModelInfo {
  /** Model id as the provider's API names it. */
  id: string;
  /** Provider families that serve it (OpenAI models are served by both OpenAI APIs). */
  providers: ProviderKind[];
  /** Context window in tokens (input + output). */
  contextWindow: number;
  maxOutputTokens: number;
  capabilities: ModelCapabilities;
}
