/**
 * `compact` (docs/design/context-management.md#the-summary-call): one summary
 * call without tools over history shaped for it, with the retain/summary
 * instruction appended as a user message; neither that message nor the answer
 * enters history.
 */
import type { Item, LlmClient, Request, Usage } from "@yoi/llm-client";
import { userMessage } from "@yoi/llm-client";
import type { CompactionConfig } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import { CompactionError } from "./errors.ts";
import { itemTokens } from "./estimate.ts";
import { prepareForSummary, safeCutPoints } from "./history-shape.ts";
import { buildCompactionInstruction, extractTag } from "./prompts.ts";
import { isTrimmed, trimPlaceholder } from "./trim.ts";

/** Default cap of the summary answer, in tokens. */
export const SUMMARY_MAX_TOKENS = 8192;

export interface CompactOptions {
  /** The client of the summary call (the compaction model's, or the worker's). */
  client: LlmClient;
  config: CompactionConfig;
  signal?: AbortSignal;
  /** Cap of the summary answer. Default `SUMMARY_MAX_TOKENS`. */
  maxTokens?: number;
  /**
   * Most estimated tokens of the summary input. Over it, tool outputs are
   * replaced by their placeholders oldest first, then the oldest groups are
   * left out, so the summary call itself does not overflow. Default: no cap.
   */
  inputBudgetTokens?: number;
}

export interface CompactResult {
  /** The text inside `<summary>` (the whole answer, minus `<retain>`, when the tags are missing). */
  summary: string;
  /** The text inside `<retain>`; undefined when absent or empty. */
  retain: string | undefined;
  /** Usage of the summary call. */
  usage: Usage | undefined;
  /** Items left out of the summary input to fit `inputBudgetTokens`. */
  omittedItems: number;
}

/**
 * The summary request for `history`, shaped for the summary (trailing
 * tool calls stripped, unpaired tool items dropped) and without tools.
 */
export function buildSummaryRequest(
  history: readonly Item[],
  config: CompactionConfig,
  options: { maxTokens?: number; inputBudgetTokens?: number } = {},
): { request: Request; omittedItems: number } {
  const prepared = prepareForSummary(history);
  const fitted =
    options.inputBudgetTokens === undefined
      ? { items: prepared, omitted: 0 }
      : fitSummaryInput(prepared, options.inputBudgetTokens);
  return {
    request: summaryRequestFromItems(fitted.items, config, options.maxTokens),
    omittedItems: fitted.omitted,
  };
}

/**
 * The summary request over `items` exactly as given (no shaping). Exported
 * so tests can show what the providers do without the shaping.
 */
export function summaryRequestFromItems(
  items: readonly Item[],
  config: CompactionConfig,
  maxTokens = SUMMARY_MAX_TOKENS,
): Request {
  const instruction = buildCompactionInstruction(config);
  // No `tools`: the summary call must answer in text.
  return { items: [...items, userMessage(instruction)], settings: { maxTokens } };
}

/** Generates the summary. Throws `CompactionError("summary_failed")` when the call fails. */
export async function compact(history: readonly Item[], options: CompactOptions): Promise<CompactResult> {
  const { request, omittedItems } = buildSummaryRequest(history, options.config, {
    maxTokens: options.maxTokens ?? SUMMARY_MAX_TOKENS,
    ...(options.inputBudgetTokens === undefined ? {} : { inputBudgetTokens: options.inputBudgetTokens }),
  });
  const { text, usage } = await collectText(options.client, request, options.signal);
  const retainText = extractTag(text, "retain");
  let summary = extractTag(text, "summary");
  if (summary === undefined) {
    // The model ignored the tags: the answer minus any retain block is still the summary.
    summary = text.replace(/<retain>[\s\S]*?(<\/retain>|$)/, "").trim();
  }
  if (summary === "") {
    throw new CompactionError(
      "summary_failed",
      `The summary call to ${options.client.model} returned no summary text, so history was left unchanged.`,
    );
  }
  const retain = retainText === undefined || retainText === "" ? undefined : retainText;
  return { summary, retain, usage, omittedItems };
}

async function collectText(
  client: LlmClient,
  request: Request,
  signal: AbortSignal | undefined,
): Promise<{ text: string; usage: Usage | undefined }> {
  let text = "";
  let usage: Usage | undefined;
  let failure: string | undefined;
  let status: string | undefined;
  try {
    for await (const event of client.stream(request, signal ? { signal } : {})) {
      switch (event.type) {
        case "block_delta":
          if (event.delta === "text") text += event.text;
          break;
        case "usage":
          usage = { ...usage, ...event.usage };
          break;
        case "error":
          failure = `${event.code}: ${event.message}`;
          break;
        case "status":
          if (event.status !== "started") status = event.status;
          break;
      }
    }
  } catch (error) {
    const reason = errorMessage(error);
    throw new CompactionError("summary_failed", `The summary call to ${client.model} failed: ${reason}`, {
      cause: error,
    });
  }
  if (status === "failed" || failure !== undefined) {
    throw new CompactionError(
      "summary_failed",
      `The summary call to ${client.model} failed: ${failure ?? "the stream ended with status failed"}. History was left unchanged.`,
    );
  }
  if (status === "cancelled") {
    throw new CompactionError(
      "summary_failed",
      "The summary call was cancelled; history was left unchanged.",
    );
  }
  return { text, usage };
}

/**
 * Fits the summary input into `budget` estimated tokens: tool outputs are
 * replaced by their placeholders oldest first (their refs stay readable),
 * then the oldest assistant groups are left out, with a note saying so.
 */
export function fitSummaryInput(items: readonly Item[], budget: number): { items: Item[]; omitted: number } {
  let total = 0;
  for (const item of items) total += itemTokens(item);
  if (total <= budget) return { items: [...items], omitted: 0 };
  const out = [...items];
  for (let i = 0; i < out.length && total > budget; i++) {
    const item = out[i]!;
    if (item.type !== "tool_result" || isTrimmed(item)) continue;
    const output = item.outputRef
      ? trimPlaceholder(item.outputRef.id)
      : "[tool output left out of the summary input]";
    const next = { ...item, output };
    total -= itemTokens(item) - itemTokens(next);
    out[i] = next;
  }
  if (total <= budget) return { items: out, omitted: 0 };
  // Still too big: leave out the oldest groups, cutting where no call is separated from its result.
  let cut = 0;
  for (const at of safeCutPoints(out, 0, out.length)) {
    if (total <= budget) break;
    for (let i = cut; i < at; i++) total -= itemTokens(out[i]!);
    cut = at;
  }
  if (cut === 0) return { items: out, omitted: 0 };
  const note = userMessage(
    `[${cut} earlier items of this conversation were left out here to fit the summary request.]`,
  );
  return { items: [note, ...out.slice(cut)], omitted: cut };
}
