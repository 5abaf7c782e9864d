/**
 * Which providers take images inside a tool result: Anthropic (`tool_result`
 * content blocks), OpenAI Responses (`function_call_output` content) and
 * Gemini 3 (`functionResponse.parts`). OpenAI Chat tool messages are text
 * only, and Gemini before 3 rejects function response parts.
 */
/** Whether `model` on `provider` (a built-in kind; any other provider: no) accepts images in a tool result. */
export function acceptsToolResultImages(provider: string, model: string): boolean {
  switch (provider) {
    case "anthropic":
    case "openai-responses":
      return true;
    case "gemini":
      return /^(models\/)?gemini-([3-9]|\d{2,})/.test(model);
    default:
      return false;
  }
}

/** What replaces images a provider cannot take in a tool result. */
export function omittedToolResultImages(count: number, provider: string, model: string): string {
  return `[${count} image${count === 1 ? "" : "s"} omitted: ${provider} ${model} does not take images in tool results]`;
}
