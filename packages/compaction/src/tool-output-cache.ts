/**
 * The tool output cache
 * (docs/design/context-management.md#the-tool-output-cache): every tool
 * output's full content is kept in the BlobStore (a ref id is a blob id), the
 * history carries a bounded in-context view plus `outputRef`, old outputs are
 * trimmed to placeholders when the budget is exceeded, and two tools read them
 * back.
 */
import type { Item, ToolResultItem } from "@yoi/llm-client";
import type { BlobStore } from "@yoi/llm-worker";
import {
  type ToolOutputCacheConfig,
  type ToolOutputCacheConfigInput,
  toolOutputCacheBudgetTokens,
} from "@yoi/manifest";
import { canDelete, loadRef, normalizeRefId, renderContent } from "./blob-access.ts";
import { type GrepRequest, grepLines, type ReadRequest, readLines } from "./cache-read.ts";
import { resolveToolOutputCacheConfig } from "./config.ts";
import type { GrepMatcherOptions } from "./grep-matcher.ts";
import { buildInContextView, countLines } from "./in-context-view.ts";
import { collectRefs } from "./refs.ts";
import { type TrimResult, trimToolOutputs } from "./trim.ts";

export interface ToolOutputCacheOptions {
  /** Where full outputs are kept; the same store as the worker's lets Stored blobs be reused. */
  store: BlobStore;
  config?: ToolOutputCacheConfigInput;
}

/** What `collectGarbage` found and did. */
export interface GcReport {
  /** Refs the old history had and the new one no longer mentions. */
  unreferenced: string[];
  /** Those actually deleted (only when the store can delete and deleting was asked for). */
  deleted: string[];
}

/**
 * A Stored summary of the worker starts with `[blob:<id>]`
 * (docs/design/tool-output-storage.md#summaries).
 */
const STORED_PREFIX = /^\[blob:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]/i;

/** Rendered contents kept for paging through one output without reloading it each time. */
const RENDERED_CACHE_SIZE = 4;

export class ToolOutputCache {
  readonly config: ToolOutputCacheConfig;
  readonly store: BlobStore;
  /** callId of a cache tool call -> the ref it read: its result is trimmed to that ref, never stored again. */
  readonly #readerCalls = new Map<string, string>();
  readonly #rendered = new Map<string, string>();

  constructor(options: ToolOutputCacheOptions) {
    this.config = resolveToolOutputCacheConfig(options.config);
    this.store = options.store;
  }

  /**
   * The budget for tool outputs in context, in estimated tokens: the
   * configured one, else `clamp(contextWindow * 0.25, 20000, 60000)`.
   */
  budgetTokens(contextWindow: number): number {
    return this.config.contextBudgetTokens ?? toolOutputCacheBudgetTokens(contextWindow);
  }

  /**
   * Stores `full` (or reuses the blob the worker already stored for it) and
   * returns the result with the in-context view and `outputRef`. A disabled
   * cache returns the result unchanged.
   */
  async prepare(result: ToolResultItem, full: string): Promise<ToolResultItem> {
    if (!this.config.enabled) return result;
    const readRef = this.#readerCalls.get(result.callId);
    if (readRef !== undefined) {
      // A read-back of a cached output: already bounded, and its source ref restores it.
      this.#readerCalls.delete(result.callId);
      return { ...result, outputRef: { id: readRef } };
    }
    const reused = await this.#reusableBlob(result);
    if (reused !== undefined && this.config.storedView === "summary") {
      // The worker's summary is what the model sees; inspect / tool_output_cache read the rest.
      return {
        ...result,
        outputRef: {
          id: reused.id,
          byteSize: Buffer.byteLength(reused.text, "utf8"),
          lineCount: countLines(reused.text),
        },
      };
    }
    const text = reused?.text ?? full;
    const id = reused?.id ?? (await this.store.store({ kind: "text", text: full }));
    const view = buildInContextView(text, id, this.config);
    return {
      ...result,
      output: view.text,
      outputRef: { id, byteSize: view.byteSize, lineCount: view.lineCount },
    };
  }

  /** The blob the worker stored for this result (its `outputRef` or `[blob:<id>]`), when it is in our store. */
  async #reusableBlob(result: ToolResultItem): Promise<{ id: string; text: string } | undefined> {
    const id = result.outputRef?.id ?? STORED_PREFIX.exec(result.output)?.[1];
    if (id === undefined) return undefined;
    try {
      const content = await this.store.load(id);
      const text = renderContent(content);
      this.#remember(id, text);
      return { id, text };
    } catch {
      return undefined; // stored elsewhere (another store) or gone: keep our own copy
    }
  }

  /** `tool_output_cache`: numbered lines of a ref. Throws `CompactionError("cache")` with a fix. */
  async read(request: ReadRequest): Promise<string> {
    const refId = normalizeRefId(request.refId);
    return readLines(await this.#text(refId), { ...request, refId }, this.config);
  }

  /** `tool_output_cache_grep`: matching lines of a ref. Throws `CompactionError("cache")` with a fix. */
  async grep(request: GrepRequest, options: GrepMatcherOptions = {}): Promise<string> {
    const refId = normalizeRefId(request.refId);
    return grepLines(await this.#text(refId), { ...request, refId }, this.config, options);
  }

  /** Marks a tool call as a read-back of `refId` (its result is not stored again). */
  noteReaderCall(callId: string, refId: string): void {
    this.#readerCalls.set(callId, normalizeRefId(refId));
  }

  /** Trims the oldest outputs when the total exceeds the budget; see `trimToolOutputs`. */
  trim(history: readonly Item[], budgetTokens: number, targetTokens?: number): TrimResult {
    if (!this.config.enabled) {
      return { history, trimmed: [], trimmedIndexes: [], frontier: 0, totalBefore: 0, totalAfter: 0 };
    }
    return trimToolOutputs(
      history,
      targetTokens === undefined ? { budgetTokens } : { budgetTokens, targetTokens },
    );
  }

  /**
   * GC after compaction
   * (docs/design/context-management.md#gc-after-compaction): the refs `before`
   * mentions that `after` does not (an `outputRef`, `ref=<id>` or `[blob:<id>]`
   * in any text keeps a ref alive). With `deleteUnreferenced` and a store that
   * can delete (`DeletableBlobStore`), they are deleted; otherwise only
   * reported.
   */
  async collectGarbage(
    before: readonly Item[],
    after: readonly Item[],
    options: { deleteUnreferenced?: boolean } = {},
  ): Promise<GcReport> {
    const live = collectRefs(after);
    const unreferenced = [...collectRefs(before)].filter((id) => !live.has(id));
    const deleted: string[] = [];
    if (options.deleteUnreferenced && canDelete(this.store)) {
      for (const id of unreferenced) {
        if (await this.store.delete(id)) deleted.push(id);
        this.#rendered.delete(id);
      }
    }
    return { unreferenced, deleted };
  }

  async #text(refId: string): Promise<string> {
    const key = normalizeRefId(refId);
    const hit = this.#rendered.get(key);
    if (hit !== undefined) {
      this.#rendered.delete(key);
      this.#rendered.set(key, hit);
      return hit;
    }
    const text = await loadRef(this.store, refId);
    this.#remember(key, text);
    return text;
  }

  #remember(id: string, text: string): void {
    this.#rendered.delete(id);
    this.#rendered.set(id, text);
    if (this.#rendered.size > RENDERED_CACHE_SIZE) {
      const oldest = this.#rendered.keys().next().value;
      if (oldest !== undefined) this.#rendered.delete(oldest);
    }
  }
}
