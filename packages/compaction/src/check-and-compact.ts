/**
 * `shouldCompact` and `checkAndCompact`
 * (docs/design/context-management.md#when-to-compact): decide from the last
 * usage, summarize, and rebuild history as system + retain + summary + the last
 * N turns.
 */
import type { Item, Usage } from "@yoi/llm-client";
import type { CompactionConfig } from "@yoi/manifest";
import { type CompactOptions, compact } from "./compact.ts";
import { type CompactionPlan, planCompaction, retainMessage, summaryMessage } from "./history-shape.ts";
import type { TokenUsage } from "./token-usage.ts";

/** Share of the threshold the verbatim tail may take after compaction, by default. */
export const MAX_KEPT_SHARE_OF_THRESHOLD = 0.3;

/** Tokens at which compaction starts: `floor(contextLimit * thresholdRatio)`. */
export function compactionThreshold(contextLimit: number, config: Pick<CompactionConfig, "thresholdRatio">) {
  return Math.floor(contextLimit * config.thresholdRatio);
}

/**
 * False when disabled or when automatic compaction is off;
 * otherwise whether `usage.totalTokens` reached the threshold.
 */
export function shouldCompact(usage: TokenUsage, contextLimit: number, config: CompactionConfig): boolean {
  if (!config.enabled || !config.auto) return false;
  return usage.totalTokens >= compactionThreshold(contextLimit, config);
}

export interface CheckAndCompactOptions extends CompactOptions {
  /** Usage of the last model call. */
  usage: TokenUsage;
  /** The model's context limit in tokens (`resolveModelLimits`). */
  contextLimit: number;
  /**
   * Most estimated tokens kept verbatim after the summary. Default
   * `MAX_KEPT_SHARE_OF_THRESHOLD` of the threshold, so a long agentic turn
   * is split instead of being kept whole.
   */
  maxKeptTokens?: number;
  /**
   * Compact regardless of the threshold and of `auto` (a manual `/compact`).
   * `enabled: false` still wins.
   */
  force?: boolean;
}

export type CheckAndCompactResult =
  | { compacted: false; reason: "disabled" | "auto_off" | "below_threshold" | "nothing_to_compact" }
  | {
      compacted: true;
      /** The new history: system messages, retain, summary, kept items. */
      history: Item[];
      summary: string;
      retain: string | undefined;
      /** Items folded into the summary and kept verbatim. */
      foldedItems: number;
      keptItems: number;
      /** Usage of the summary call. */
      summaryUsage: Usage | undefined;
    };

/** Checks, summarizes and returns the replacement history. */
export async function checkAndCompact(
  history: readonly Item[],
  options: CheckAndCompactOptions,
): Promise<CheckAndCompactResult> {
  const { config } = options;
  if (!config.enabled) return { compacted: false, reason: "disabled" };
  if (!options.force) {
    if (!config.auto) return { compacted: false, reason: "auto_off" };
    if (!shouldCompact(options.usage, options.contextLimit, config))
      return { compacted: false, reason: "below_threshold" };
  }
  const plan = planCompaction(history, {
    retainLastTurns: config.retainLastTurns,
    maxKeptTokens:
      options.maxKeptTokens ??
      Math.floor(compactionThreshold(options.contextLimit, config) * MAX_KEPT_SHARE_OF_THRESHOLD),
  });
  if (!plan.foldsNewItems) return { compacted: false, reason: "nothing_to_compact" };
  const result = await compact(history, options);
  return {
    compacted: true,
    history: buildCompactedHistory(plan, result.summary, result.retain),
    summary: result.summary,
    retain: result.retain,
    foldedItems: plan.folded.length,
    keptItems: plan.kept.length,
    summaryUsage: result.usage,
  };
}

/**
 * The history after compaction: system messages, the retain message (when
 * there is one), the summary message, then the kept items with any tool
 * result whose call was folded dropped (calls still waiting for results
 * stay).
 */
export function buildCompactedHistory(
  plan: CompactionPlan,
  summary: string,
  retain: string | undefined,
): Item[] {
  const calls = new Set<string>();
  const kept: Item[] = [];
  for (const item of plan.kept) {
    if (item.type === "tool_call") calls.add(item.callId);
    if (item.type === "tool_result" && !calls.has(item.callId)) continue;
    kept.push(item);
  }
  const out: Item[] = [...plan.system];
  if (retain !== undefined) out.push(retainMessage(retain));
  out.push(summaryMessage(summary));
  out.push(...kept);
  return out;
}
