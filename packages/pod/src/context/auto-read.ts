/**
 * Auto-read: after a compaction folds the conversation into a summary, the
 * files the session read most recently are attached again (as
 * `[File: <path>]` system messages, the same form as `@path` refs), so the
 * model keeps working on current file contents, not on a summary of them.
 * The fresh copy supersedes any older copy of the same file still in the
 * kept turns, so history holds exactly one current body of each file.
 */

import { isCompactionMessage } from "@yoi/compaction";
import { type Item, messageText } from "@yoi/llm-client";
import type { HistoryReplacement } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import type { ReadTracker } from "../fs/read-tracker.ts";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { resolveFileRef } from "../input/file-ref.ts";

export interface AutoReadOptions {
  /** Total bytes of file bodies attached. Default 4 × `TOOL_OUTPUT_MAX_BYTES` (64 KiB). */
  budgetBytes?: number;
  /** Cap of one file's body. Default `TOOL_OUTPUT_MAX_BYTES` (16 KiB). */
  perFileMaxBytes?: number;
  /** Most files attached. Default 5. */
  maxFiles?: number;
}

export interface AutoReadResult {
  items: Item[];
  /** Display paths attached, most recent first. */
  paths: string[];
  /** Real paths of the files attached. */
  reals: string[];
}

/** Renders the most recently read files within the budget; files that vanished or left the scope are skipped. */
export async function renderAutoRead(
  fs: ScopedFs,
  reads: ReadTracker,
  options: AutoReadOptions = {},
): Promise<AutoReadResult> {
  let budget = options.budgetBytes ?? 4 * TOOL_OUTPUT_MAX_BYTES;
  const perFile = options.perFileMaxBytes ?? TOOL_OUTPUT_MAX_BYTES;
  const maxFiles = options.maxFiles ?? 5;
  const items: Item[] = [];
  const paths: string[] = [];
  const reals: string[] = [];
  for (const record of reads.recent()) {
    if (items.length >= maxFiles || budget < 256) break;
    const display = fs.display(record.real);
    try {
      const cap = Math.min(perFile, budget);
      const ref = await resolveFileRef(fs, display, cap);
      items.push(ref.item);
      paths.push(display);
      reals.push(ref.real);
      budget -= Math.min(ref.totalBytes, cap);
      // The model has seen the file as it is now.
      reads.record(ref.real, record.display, { size: ref.totalBytes, mtimeMs: ref.mtimeMs });
    } catch {
      reads.forget(record.real);
    }
  }
  return { items, paths, reals };
}

/**
 * Inserts `extra` right after the compaction messages (retain, summary) at
 * the head of a compacted history (after any system messages that lead it),
 * before the kept turns.
 */
export function insertAfterSummary(history: readonly Item[], extra: readonly Item[]): Item[] {
  let at = 0;
  while (at < history.length && isSystem(history[at]!)) at++;
  while (at < history.length && isCompactionMessage(history[at]!)) at++;
  return [...history.slice(0, at), ...extra, ...history.slice(at)];
}

function isSystem(item: Item): boolean {
  return item.type === "message" && item.role === "system";
}

/** The path of a `[File: <path>]` attachment (the `@path` form), or undefined for any other item. */
export function attachedFilePath(item: Item): string | undefined {
  if (!isSystem(item) || item.type !== "message") return undefined;
  const text = messageText(item);
  if (!text.startsWith("[File: ")) return undefined;
  const end = text.indexOf("]\n");
  return end === -1 ? undefined : text.slice("[File: ".length, end);
}

/** `history` without the file attachments whose file (by real path) is in `reals`. */
export async function withoutAttachments(
  history: readonly Item[],
  fs: ScopedFs,
  reals: ReadonlySet<string>,
): Promise<Item[]> {
  const out: Item[] = [];
  for (const item of history) {
    const display = attachedFilePath(item);
    if (display !== undefined) {
      const real = await fs.resolve(display).then(
        (r) => r.real,
        () => undefined,
      );
      if (real !== undefined && reals.has(real)) continue;
    }
    out.push(item);
  }
  return out;
}

/**
 * `replacement` (a compaction) with the auto-read files put back after the
 * summary; a fresh copy replaces an older one a kept turn may still hold.
 * Unchanged when there is nothing to attach.
 */
export async function reattachFiles(
  replacement: HistoryReplacement,
  fs: ScopedFs,
  reads: ReadTracker,
  options: AutoReadOptions = {},
): Promise<{ replacement: HistoryReplacement; paths: string[] }> {
  const { items, paths, reals } = await renderAutoRead(fs, reads, options);
  if (items.length === 0) return { replacement, paths };
  const rest = await withoutAttachments(replacement.history, fs, new Set(reals));
  return {
    replacement: {
      ...replacement,
      history: insertAfterSummary(rest, items),
      detail: { ...(replacement.detail ?? {}), autoRead: paths },
    },
    paths,
  };
}
