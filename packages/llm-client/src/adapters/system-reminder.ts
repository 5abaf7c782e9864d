/**
 * System messages after the start of a conversation. Anthropic and Gemini
 * take system text only at the top of a request; many OpenAI-compatible
 * servers reject a system message that is not first (the Qwen, Llama and
 * Mistral chat templates of llama.cpp and vLLM answer 400). Such a message
 * is sent as user-role text in a marker the model can tell from the user's
 * own words. One marker for every adapter.
 */

/** The user-role text a non-leading system message becomes. */
export function systemReminder(text: string): string {
  return `<system-reminder>\n${text}\n</system-reminder>`;
}
