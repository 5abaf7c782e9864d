/**
 * The pod's context policy: `@yoi/compaction`'s (tool output cache, trimming,
 * compaction, the strict context-limit check before each request) with one
 * addition, made through its `afterCompaction` hook: after every compaction
 * the files the session read most recently (auto-read) and the todo list are
 * put back after the summary. The policy is not wrapped, so every method the
 * worker calls is compaction's own.
 */
import { createContextPolicy, type YoiContextPolicy } from "@yoi/compaction";
import type { LlmClient } from "@yoi/llm-client";
import type { BlobStore, HistoryReplacement } from "@yoi/llm-worker";
import type { Config, ModelInfo } from "@yoi/manifest";
import type { ReadTracker } from "../fs/read-tracker.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import type { TodoList } from "../tools/todo-list.ts";
import { type AutoReadOptions, insertAfterSummary, reattachFiles } from "./auto-read.ts";

export interface SessionPolicyOptions {
  config: Config;
  blobStore: BlobStore;
  /** The worker's client (the model whose window the limit is). */
  client: LlmClient;
  catalog: readonly ModelInfo[];
  /** The window instead of the catalog's. */
  contextWindow?: number;
  /** A client for `compaction.model`, when the config names one. */
  clientFor: (ref: string) => LlmClient;
  fs: ScopedFs;
  reads: ReadTracker;
  todos: TodoList;
  /** Files re-attached after a compaction, or `false` for none. */
  autoRead: AutoReadOptions | false;
  /** Hears the display paths re-attached after a compaction. */
  onAutoRead: (paths: string[]) => void;
}

export function sessionContextPolicy(options: SessionPolicyOptions): YoiContextPolicy {
  const { config } = options;
  const afterCompaction = async (replacement: HistoryReplacement): Promise<HistoryReplacement> => {
    let next = replacement;
    if (options.autoRead !== false) {
      const files = await reattachFiles(next, options.fs, options.reads, options.autoRead);
      if (files.paths.length > 0) options.onAutoRead(files.paths);
      next = files.replacement;
    }
    const todos = options.todos.message();
    if (todos === undefined) return next;
    return {
      ...next,
      history: insertAfterSummary(next.history, [todos]),
      detail: { ...(next.detail ?? {}), todos: options.todos.items.length },
    };
  };
  return createContextPolicy({
    blobStore: options.blobStore,
    toolOutputCache: config.toolOutputCache,
    compaction: config.compaction,
    client: options.client,
    catalog: options.catalog,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(config.compaction.model !== null ? { summaryClient: options.clientFor } : {}),
    afterCompaction,
  });
}
