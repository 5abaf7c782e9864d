/**
 * Default prompts of the summary call
 * (docs/design/context-management.md#the-summary-call). The summary prompt
 * follows the Python original's shape: the model answers inside `<summary>`
 * tags; the retain prompt asks for a `<retain>` section with what must survive
 * verbatim (tool output refs, decisions, paths).
 */

import { COMPACTION_DEFAULTS } from "@yoi/manifest";

/** The default summary prompt; its answer goes in `<summary>` tags. The manifest holds the text, as the default of the `compaction` config section. */
export const DEFAULT_SUMMARY_PROMPT = COMPACTION_DEFAULTS.summaryPrompt;

/** The default retain prompt; its answer goes in `<retain>` tags. The text is the manifest's, like the summary prompt's. */
export const DEFAULT_RETAIN_PROMPT = COMPACTION_DEFAULTS.retainPrompt;

/** Appends directives to a prompt as a bullet list; the prompt itself is kept. */
export function withDirectives(prompt: string, directives: readonly string[]): string {
  const bullets = directives.map((d) => d.trim()).filter((d) => d !== "");
  if (bullets.length === 0) return prompt;
  return `${prompt}\n\nAdditional instructions:\n${bullets.map((d) => `- ${d}`).join("\n")}`;
}

/** The directive a user's focus for one summary becomes (`/compact keep the config details`). */
export function focusDirective(focus: string): string {
  return `The user asked this summary to focus on: ${focus.trim()}. Keep everything about it in detail, even where the rest is shortened.`;
}

/**
 * The interrupt message of the summary call: the retain instructions (when
 * any), then the summary instructions.
 */
export function buildCompactionInstruction(parts: {
  summaryPrompt: string;
  summaryDirectives: readonly string[];
  retainPrompt: string | null;
  retainDirectives: readonly string[];
}): string {
  const summary = withDirectives(parts.summaryPrompt, parts.summaryDirectives);
  if (parts.retainPrompt === null) return summary;
  const retain = withDirectives(parts.retainPrompt, parts.retainDirectives);
  return `${summary}\n\n${retain}`;
}

/** The content of a tag (`<summary>...</summary>`), last complete occurrence; undefined when absent. */
export function extractTag(text: string, tag: string): string | undefined {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const end = text.lastIndexOf(close);
  if (end < 0) {
    // An answer cut by max tokens has an opening tag and no closing one: keep what was written.
    const start = text.lastIndexOf(open);
    return start < 0 ? undefined : text.slice(start + open.length).trim();
  }
  const start = text.lastIndexOf(open, end);
  if (start < 0) return undefined;
  return text.slice(start + open.length, end).trim();
}
