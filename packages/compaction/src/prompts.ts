/**
 * Default prompts of the summary call (seed 004 2.6). The summary prompt
 * follows the Python original's shape: the model answers inside
 * `<summary>` tags; the retain prompt asks for a `<retain>` section with
 * what must survive verbatim (tool output refs, decisions, paths).
 */

/** The default summary prompt; its answer goes in `<summary>` tags. */
export const DEFAULT_SUMMARY_PROMPT = `Your context window is filling up, so the conversation above will be replaced by a summary you write now. Write it for yourself: after this point you will only see the summary (and the most recent turn), and you must be able to continue the work without asking the user to repeat anything.

Cover, in this order:
1. The user's requests and intent, in their own words where the wording matters, including every constraint and preference they stated.
2. What has been done so far: files read, created or changed (with paths), commands run and their outcome, and the key facts learned from tool outputs.
3. Decisions made and why, and approaches that were tried and failed (so they are not retried).
4. Errors met and how they were resolved, or that they are still open.
5. The current state: what was being worked on right before this summary, and the exact next step.

Be specific (names, paths, numbers, identifiers) and concise. Do not invent anything that is not in the conversation. Put the whole summary inside <summary></summary> tags.`;

/** The default retain prompt; its answer goes in `<retain>` tags. */
export const DEFAULT_RETAIN_PROMPT = `Before the summary, list inside <retain></retain> tags the facts that must survive word for word: tool output references (every \`ref=<id>\` / \`[blob:<id>]\` that may be needed again, with what it contains), file paths, identifiers, exact error messages, and the user's explicit instructions. One item per line. Write <retain></retain> with nothing inside when there is nothing to keep.`;

/** Appends directives to a prompt as a bullet list (seed 004 2.6.3/2.6.4); the prompt itself is kept. */
export function withDirectives(prompt: string, directives: readonly string[]): string {
  const bullets = directives.map((d) => d.trim()).filter((d) => d !== "");
  if (bullets.length === 0) return prompt;
  return `${prompt}\n\nAdditional instructions:\n${bullets.map((d) => `- ${d}`).join("\n")}`;
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
