/**
 * `createContextPolicy`: the ContextPolicy port of @yoi/llm-worker,
 * combining the tool output cache (views, refs, trimming, the two read-back
 * tools) and compaction, called by the worker after each model call, after
 * tools, before returning, and after a context overflow.
 */
import type { Item, LlmClient, ToolResultItem, Usage } from "@yoi/llm-client";
import type {
  BlobStore,
  ContextCheckpoint,
  ContextPolicy,
  ContextState,
  HistoryReplacement,
  Tool,
} from "@yoi/llm-worker";
import type {
  CompactionConfig,
  CompactionConfigInput,
  ModelInfo,
  ToolOutputCacheConfig,
  ToolOutputCacheConfigInput,
} from "@yoi/manifest";
import { createCacheTools } from "./cache-tools.ts";
import {
  buildCompactedHistory,
  compactionThreshold,
  MAX_KEPT_SHARE_OF_THRESHOLD,
} from "./check-and-compact.ts";
import { compact, SUMMARY_MAX_TOKENS } from "./compact.ts";
import { resolveCompactionConfig, resolveToolOutputCacheConfig } from "./config.ts";
import { type ModelLimits, resolveModelLimits } from "./context-limit.ts";
import { CompactionError } from "./errors.ts";
import { itemTokens } from "./estimate.ts";
import { HistoryMeter } from "./history-meter.ts";
import { planCompaction, startsTurn } from "./history-shape.ts";
import { focusDirective } from "./prompts.ts";
import { tokenUsageFromUsage } from "./token-usage.ts";
import { ToolOutputCache } from "./tool-output-cache.ts";
import { trimToolOutputs } from "./trim.ts";

/** The user message that started the current turn (scanning back over the turn only). */
function lastTurnStart(history: readonly Item[]): Item | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (startsTurn(history[i]!)) return history[i];
  return undefined;
}

/** Default of `trimTargetRatio`. */
export const TRIM_TARGET_RATIO = 0.8;

export interface ContextPolicyOptions {
  /**
   * Where full tool outputs are kept: pass the Worker's store, so blobs the
   * worker already stored (`[blob:<id>]`) are reused. Required unless the
   * cache is disabled.
   */
  blobStore?: BlobStore;
  /** Tool output cache settings (`toolOutputCache` of the config). */
  toolOutputCache?: ToolOutputCacheConfigInput;
  /** Compaction settings (`compaction` of the config). */
  compaction?: CompactionConfigInput;
  /**
   * The worker's client. When given, the model's limits are resolved now (an
   * unknown model fails here); otherwise `checkRequest` resolves them before
   * the first request, and an unknown model fails the run before anything is
   * sent (the limit is strict:
   * docs/design/context-management.md#the-strict-context-limit).
   */
  client?: LlmClient;
  /** The context window in tokens, instead of the catalog's (also the limit). */
  contextWindow?: number;
  /** The model catalog to look models up in; pass `buildModelCatalog(config)` so `models` entries count. */
  catalog?: readonly ModelInfo[];
  /**
   * The client for `compaction.model`: a client for that model, or a factory
   * called once with the model string. Required when `compaction.model` is set.
   */
  summaryClient?: LlmClient | ((model: string) => LlmClient);
  /** Cap of the summary answer. Default `SUMMARY_MAX_TOKENS` (8192), lowered to the model's max output. */
  summaryMaxTokens?: number;
  /** Most estimated tokens kept verbatim after a summary. Default 30% of the threshold. */
  maxKeptTokens?: number;
  /**
   * Once the tool outputs exceed the budget, trim down to this share of it
   * (0 < r <= 1). Default 0.8: trimming in batches changes the prompt prefix
   * less often, which keeps the providers' prompt caches warm. 1 trims just
   * enough.
   */
  trimTargetRatio?: number;
  /**
   * Delete refs that no history references after a compaction, when the
   * store can delete (`DeletableBlobStore`). Overrides
   * `toolOutputCache.deleteUnreferencedRefs` (default false: the ids are only
   * reported in the replacement's `detail.unreferencedRefs`, because a
   * session log may still point at them).
   */
  deleteUnreferencedRefs?: boolean;
  /**
   * Called with every compaction before it is returned (whatever triggered
   * it: the threshold, an overflow, `compactNow`; never with a trim), and
   * its result is what the worker gets. For what must survive a compaction
   * outside the summary: the pod puts back the files the session read most
   * recently and its todo list. Extending the policy here, rather than by
   * wrapping it, keeps every other method (`checkRequest` first) as it is.
   */
  afterCompaction?: (replacement: HistoryReplacement, state: ContextState) => Promise<HistoryReplacement>;
}

/** The policy returned by `createContextPolicy`: the port plus the cache tools and a manual compaction. */
export interface YoiContextPolicy extends ContextPolicy {
  checkRequest(state: ContextState): Promise<void>;
  prepareToolResult(result: ToolResultItem, full: string, state: ContextState): Promise<ToolResultItem>;
  checkpoint(point: ContextCheckpoint, state: ContextState): Promise<HistoryReplacement | undefined>;
  onContextOverflow(state: ContextState): Promise<HistoryReplacement | undefined>;
  /** `tool_output_cache` and `tool_output_cache_grep`; register them with the Worker (empty when the cache is off). */
  readonly tools: readonly Tool[];
  /** The tool output cache (undefined when disabled). */
  readonly cache: ToolOutputCache | undefined;
  readonly toolOutputCacheConfig: ToolOutputCacheConfig;
  readonly compactionConfig: CompactionConfig;
  /**
   * Compacts now regardless of the threshold and of `auto` (a user's
   * `/compact`); undefined when compaction is disabled or there is nothing
   * to fold. `focus` (`/compact keep the config details`) is added to the
   * summary prompt's directives for this summary. Apply the result with the
   * worker's history replacement.
   */
  compactNow(state: ContextState, options?: { focus?: string }): Promise<HistoryReplacement | undefined>;
  /**
   * The context window of the model the worker uses from now on (after a
   * switch of model), instead of the catalog's; `undefined` goes by the
   * catalog again, where a model it does not know fails the next request
   * (the strict limit). Throws `CompactionError("invalid_config")` for a
   * window that is not a positive integer.
   */
  setContextWindow(window: number | undefined): void;
}

/** Creates the context policy. Throws `CompactionError("invalid_config" | "unknown_model")` on bad options. */
export function createContextPolicy(options: ContextPolicyOptions = {}): YoiContextPolicy {
  return new ContextPolicyImpl(options);
}

/** A window given instead of the catalog's, checked: a positive integer number of tokens. */
function checkedWindow(window: number | undefined): number | undefined {
  if (window !== undefined && !(Number.isInteger(window) && window > 0)) {
    throw new CompactionError(
      "invalid_config",
      `contextWindow must be a positive integer number of tokens, got ${window}.`,
    );
  }
  return window;
}

type Trigger = "threshold" | "overflow" | "manual";

/** The usage measurement the compaction check extrapolates from. */
interface Mark {
  usage: Usage;
  /** Estimated context tokens at `index` (measured, or estimated after a compaction). */
  base: number;
  /** History length when `base` was taken. */
  index: number;
  /** Estimated tokens of `history[0..index)` then: `base - items` is the system prompt and tools. */
  items: number;
}

class ContextPolicyImpl implements YoiContextPolicy {
  readonly tools: readonly Tool[];
  readonly cache: ToolOutputCache | undefined;
  readonly toolOutputCacheConfig: ToolOutputCacheConfig;
  readonly compactionConfig: CompactionConfig;
  readonly #options: ContextPolicyOptions;
  readonly #trimTarget: number;
  readonly #meter = new HistoryMeter();
  #limits: { key: string; limits: ModelLimits } | undefined;
  /** The window instead of the catalog's (`contextWindow`, or the last `setContextWindow`). */
  #window: number | undefined;
  #summaryClient: LlmClient | undefined;
  #mark: Mark | undefined;
  /** Compactions since the last measured usage under the threshold. */
  #consecutive = 0;
  /**
   * Set once compaction reported that it cannot make progress: the turn it
   * happened in and the error. Automatic compaction is not retried (no
   * summary call is wasted) until a new turn starts or the context drops
   * under the threshold; an overflow in the meantime fails with the error.
   */
  #stuck: { turn: Item | undefined; error: CompactionError } | undefined;

  constructor(options: ContextPolicyOptions) {
    this.#options = options;
    this.toolOutputCacheConfig = resolveToolOutputCacheConfig(options.toolOutputCache);
    this.compactionConfig = resolveCompactionConfig(options.compaction);
    const ratio = options.trimTargetRatio ?? TRIM_TARGET_RATIO;
    if (!(ratio > 0 && ratio <= 1)) {
      throw new CompactionError("invalid_config", `trimTargetRatio must be in (0, 1], got ${ratio}.`);
    }
    this.#trimTarget = ratio;
    this.#window = checkedWindow(options.contextWindow);
    if (this.toolOutputCacheConfig.enabled) {
      if (options.blobStore === undefined) {
        throw new CompactionError(
          "invalid_config",
          "The tool output cache needs a blobStore to keep full outputs: pass { blobStore } (the same store as the Worker's), or set toolOutputCache.enabled to false.",
        );
      }
      this.cache = new ToolOutputCache({ store: options.blobStore, config: this.toolOutputCacheConfig });
      this.tools = createCacheTools(this.cache);
    } else {
      this.cache = undefined;
      this.tools = [];
    }
    const { model } = this.compactionConfig;
    if (this.compactionConfig.enabled && model !== null) {
      const given = options.summaryClient;
      if (given === undefined) {
        throw new CompactionError(
          "invalid_config",
          `compaction.model is "${model}" but no summaryClient was given: pass summaryClient (a client for that model, or a factory (model) => client), or set compaction.model to null to summarize with the worker's model.`,
        );
      }
      this.#summaryClient = typeof given === "function" ? given(model) : given;
    }
    // Fail now, not mid-run, for an unknown model when the limits will be needed.
    if (options.client && this.#needsLimits()) this.#limitsFor(options.client);
  }

  /**
   * The strict context limit
   * (docs/design/context-management.md#the-strict-context-limit): before
   * the first request (and after a model
   * switch) the model's limits must be known; an unknown model fails the
   * run before anything is sent, with the `models` entry to declare.
   */
  async checkRequest(state: ContextState): Promise<void> {
    if (this.#needsLimits()) this.#limitsFor(state.client);
  }

  async prepareToolResult(result: ToolResultItem, full: string): Promise<ToolResultItem> {
    return this.cache ? this.cache.prepare(result, full) : result;
  }

  async checkpoint(_point: ContextCheckpoint, state: ContextState): Promise<HistoryReplacement | undefined> {
    const compacted = await this.#compact(state, "threshold");
    if (compacted) return compacted;
    return this.#trim(state.history, state.client);
  }

  async onContextOverflow(state: ContextState): Promise<HistoryReplacement | undefined> {
    return this.#compact(state, "overflow");
  }

  async compactNow(
    state: ContextState,
    options: { focus?: string } = {},
  ): Promise<HistoryReplacement | undefined> {
    const focus = options.focus?.trim();
    return this.#compact(state, "manual", focus === "" ? undefined : focus);
  }

  setContextWindow(window: number | undefined): void {
    this.#window = checkedWindow(window);
  }

  #needsLimits(): boolean {
    return (
      this.#window === undefined &&
      (this.compactionConfig.enabled ||
        (this.toolOutputCacheConfig.enabled && this.toolOutputCacheConfig.contextBudgetTokens === null))
    );
  }

  #limitsFor(client: LlmClient): ModelLimits {
    const window = this.#window;
    if (window !== undefined) {
      return { contextWindow: window, contextLimit: window, maxOutputTokens: SUMMARY_MAX_TOKENS };
    }
    const key = `${client.provider}\u0000${client.model}`;
    if (this.#limits?.key !== key) {
      this.#limits = {
        key,
        limits: resolveModelLimits(client.provider, client.model, this.#options.catalog),
      };
    }
    return this.#limits.limits;
  }

  /** Trims tool outputs over the budget (docs/design/context-management.md#trimming). */
  #trim(history: readonly Item[], client: LlmClient): HistoryReplacement | undefined {
    const cache = this.cache;
    if (!cache) return undefined;
    const totals = this.#meter.measure(history);
    const budget =
      this.toolOutputCacheConfig.contextBudgetTokens ??
      cache.budgetTokens(this.#limitsFor(client).contextWindow);
    if (totals.toolOutputs <= budget) return undefined;
    const result = trimToolOutputs(history, {
      budgetTokens: budget,
      targetTokens: Math.floor(budget * this.#trimTarget),
      knownTotalTokens: totals.toolOutputs,
      from: this.#meter.trimFrontier,
    });
    if (result.trimmed.length === 0) {
      this.#meter.trimFrontier = result.frontier;
      return undefined;
    }
    // O(trimmed), not O(history): what each replaced item saved, in total and before the mark.
    let saved = 0;
    let savedBeforeMark = 0;
    for (const index of result.trimmedIndexes) {
      const delta = itemTokens(history[index]!) - itemTokens(result.history[index]!);
      saved += delta;
      if (this.#mark && index < this.#mark.index) savedBeforeMark += delta;
    }
    const after = this.#meter.replaced(
      result.history,
      { items: saved, toolOutputs: result.totalBefore - result.totalAfter },
      result.frontier,
    );
    if (this.#mark && savedBeforeMark > 0) {
      // The measured context shrank by what trimming saved before the mark.
      this.#mark = {
        ...this.#mark,
        base: this.#mark.base - savedBeforeMark,
        items: this.#mark.items - savedBeforeMark,
      };
    }
    return {
      // A fresh array (trimming copies once): the worker adopts it as is.
      history: result.history as Item[],
      reason: "trim",
      detail: {
        trimmedRefs: result.trimmed,
        toolOutputTokensBefore: result.totalBefore,
        toolOutputTokensAfter: after.toolOutputs,
        budgetTokens: budget,
      },
    };
  }

  /** Estimated context tokens now: the last measured usage plus what was appended since. */
  #estimate(state: ContextState, threshold: number): number | undefined {
    const usage = state.lastUsage;
    if (usage === undefined) return this.#mark ? this.#extrapolate(this.#mark, state.history) : undefined;
    if (this.#mark?.usage !== usage) {
      // A new model call: its usage is the real context size (prompt + answer, cached tokens once).
      const total = tokenUsageFromUsage(usage).totalTokens;
      const items = this.#meter.measure(state.history).items;
      this.#mark = { usage, base: total, index: state.history.length, items };
      if (total < threshold) {
        this.#consecutive = 0;
        this.#stuck = undefined;
      }
    }
    return this.#extrapolate(this.#mark, state.history);
  }

  #extrapolate(mark: Mark, history: readonly Item[]): number {
    const items = this.#meter.measure(history).items;
    // Items appended since the mark add to it; a replaced history is re-estimated from the overhead.
    const overhead = Math.max(0, mark.base - mark.items);
    return history.length >= mark.index ? mark.base + Math.max(0, items - mark.items) : overhead + items;
  }

  async #compact(
    state: ContextState,
    trigger: Trigger,
    focus?: string,
  ): Promise<HistoryReplacement | undefined> {
    const config = this.compactionConfig;
    if (!config.enabled) return undefined;
    if (trigger !== "manual" && !config.auto) return undefined;
    const limits = this.#limitsFor(state.client);
    const threshold = compactionThreshold(limits.contextLimit, config);
    const history = state.history;
    let estimate: number | undefined;
    if (trigger === "threshold") {
      estimate = this.#estimate(state, threshold);
      if (estimate === undefined || estimate < threshold) return undefined;
    }
    if (trigger !== "manual" && this.#stuck) {
      if (this.#stuck.turn === lastTurnStart(history)) {
        if (trigger === "threshold") return undefined; // already reported; the overflow path fails with it
        throw this.#stuck.error;
      }
      // A new turn since: there is new material to fold, try again.
      this.#stuck = undefined;
      this.#consecutive = 0;
    }
    const plan = planCompaction(history, {
      retainLastTurns: config.retainLastTurns,
      maxKeptTokens: this.#options.maxKeptTokens ?? Math.floor(threshold * MAX_KEPT_SHARE_OF_THRESHOLD),
    });
    if (!plan.foldsNewItems) {
      if (trigger === "threshold" && this.#consecutive === 0) return undefined; // nothing to fold yet; the overflow path reports it
      if (trigger === "manual") return undefined;
      throw this.#noProgress(
        "there is nothing left to fold into a summary: the system prompt, the tool definitions and the turns kept verbatim alone fill the context",
        limits,
        estimate,
        history,
      );
    }
    if (trigger !== "manual" && this.#consecutive >= 2) {
      throw this.#noProgress(
        "two compactions in a row did not bring the context under the threshold",
        limits,
        estimate,
        history,
      );
    }
    const client = this.#summaryClient ?? state.client;
    const summaryLimits = this.#summaryLimits(client, limits);
    const maxTokens = Math.min(
      this.#options.summaryMaxTokens ?? SUMMARY_MAX_TOKENS,
      summaryLimits.maxOutputTokens,
    );
    const result = await compact(history, {
      client,
      config:
        focus === undefined
          ? config
          : { ...config, summaryDirectives: [...config.summaryDirectives, focusDirective(focus)] },
      signal: state.signal,
      maxTokens,
      // Room for the answer and for the estimate being off (bytes/4 undercounts code and non-Latin text).
      inputBudgetTokens: Math.floor((summaryLimits.contextLimit - maxTokens) * 0.85),
    });
    const next = buildCompactedHistory(plan, result.summary, result.retain);
    const before = this.#meter.measure(history).items;
    const after = this.#meter.reset(next).items;
    if (after >= before) {
      this.#meter.reset(history);
      throw this.#noProgress(
        "the summary is no smaller than the history it replaces",
        limits,
        estimate,
        trigger === "manual" ? undefined : history,
      );
    }
    this.#consecutive++;
    const overhead = this.#mark ? Math.max(0, this.#mark.base - this.#mark.items) : 0;
    // Until the next model call measures it, the context is the overhead plus the new history.
    if (this.#mark)
      this.#mark = { usage: this.#mark.usage, base: overhead + after, index: next.length, items: after };
    const trimmed = this.cache ? this.#trim(next, state.client) : undefined;
    const finalHistory = trimmed?.history ?? next;
    const gc = this.cache
      ? await this.cache.collectGarbage(history, finalHistory, {
          deleteUnreferenced:
            this.#options.deleteUnreferencedRefs ?? this.toolOutputCacheConfig.deleteUnreferencedRefs,
        })
      : { unreferenced: [], deleted: [] };
    const replacement: HistoryReplacement = {
      history: finalHistory,
      reason: "compaction",
      detail: {
        trigger,
        ...(focus !== undefined ? { focus } : {}),
        estimatedTokensBefore: estimate ?? overhead + before,
        estimatedTokensAfter: overhead + after,
        thresholdTokens: threshold,
        foldedItems: plan.folded.length,
        keptItems: plan.kept.length,
        summaryChars: result.summary.length,
        retainChars: result.retain?.length ?? 0,
        summaryModel: client.model,
        summaryUsage: result.usage,
        omittedFromSummaryInput: result.omittedItems,
        trimmedRefs: trimmed?.detail?.trimmedRefs ?? [],
        // Tool outputs of the kept turns trimmed to refs so the turns stay whole
        // (docs/design/context-management.md#the-compacted-history).
        keptTurnsTrimmedRefs: plan.trimmedRefs,
        keptTurnsDroppedItems: plan.droppedFromKeptTurns,
        unreferencedRefs: gc.unreferenced,
        deletedRefs: gc.deleted,
      },
    };
    return this.#options.afterCompaction ? this.#options.afterCompaction(replacement, state) : replacement;
  }

  #summaryLimits(client: LlmClient, fallback: ModelLimits): ModelLimits {
    if (client === this.#options.client || this.#summaryClient === undefined) return fallback;
    try {
      return resolveModelLimits(client.provider, client.model, this.#options.catalog);
    } catch {
      return fallback; // an uncatalogued summary model: assume the worker model's limits
    }
  }

  /** The no-progress error; with `history`, automatic compaction also stops until the next turn. */
  #noProgress(
    why: string,
    limits: ModelLimits,
    estimate: number | undefined,
    history?: readonly Item[],
  ): CompactionError {
    const size = estimate === undefined ? "" : ` (about ${estimate} of ${limits.contextLimit} tokens in use)`;
    const error = new CompactionError(
      "no_progress",
      `Compaction cannot free room${size}: ${why}. Stopping instead of compacting again. Lower compaction.retainLastTurns, shorten the system prompt or the tool list, or use a model with a larger context window.`,
    );
    if (history) this.#stuck = { turn: lastTurnStart(history), error };
    return error;
  }
}
