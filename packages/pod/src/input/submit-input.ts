/**
 * What a submit hands the worker besides the user message
 * (docs/design/file-refs.md#the-stash): the
 * `@path` refs are read before the run and stashed, and the pod's
 * Interceptor gives the stash to the worker as `continue_with` when the
 * prompt is submitted, so history reads `[user message, [File: a],
 * [File: b], ...]`. Also stashed: the context of SessionStart hooks and, in
 * plan mode, the note saying so. A ref that cannot be read is reported and
 * leaves only its placeholder in the user message.
 */

import { type Item, systemMessage } from "@yoi/llm-client";
import type { PromptAction } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import type { PodFsView } from "../fs/fs-view.ts";
import type { ReadTracker } from "../fs/read-tracker.ts";
import { imageTypeOfPath } from "../images/image-file.ts";
import { resolveImageRef } from "../images/image-ref.ts";
import type { McpManager } from "../mcp/mcp-manager.ts";
import { parseResourceRef, resolveResourceRef } from "../mcp/resource-ref.ts";
import { PLAN_MODE_NOTE } from "../sandbox/pod-sandbox.ts";
import { abortable } from "./abortable.ts";
import { FileRefError, type ResolvedFileRef } from "./file-ref.ts";
import { fileRefs, type Segment } from "./segments.ts";

export interface SubmitInputOptions {
  view: PodFsView;
  /** Files read through refs count as read (edits may follow; auto-read re-attaches them). */
  reads: ReadTracker;
  /** The MCP servers `@<server>:<uri>` refs read resources from. */
  mcp: McpManager;
  /** Cap of a ref's body in bytes (`toolOutput.maxBytes`). */
  maxBytes: number;
  /** Why the current model cannot take an attached image, if it cannot. */
  imageRefusal: () => string | undefined;
  /** Whether the session is in plan mode now (the note goes with each prompt then). */
  planMode: () => boolean;
  /** A ref that was not attached, why, and the FileRefError code when there is one (e.g. `unsupported`). */
  onUnattached: (ref: string, reason: string, code: string | undefined) => void;
}

export class SubmitInput {
  readonly #options: SubmitInputOptions;
  /** Items of the submit in progress, handed over at `onPromptSubmit`. */
  readonly #stash: Item[] = [];
  /** Items that came from refs, so the session log records them as `file_ref`. */
  readonly #fromRefs = new WeakSet<Item>();

  constructor(options: SubmitInputOptions) {
    this.#options = options;
  }

  /** Adds items to hand over with the next prompt (SessionStart hook context). */
  add(items: readonly Item[]): void {
    this.#stash.push(...items);
  }

  /** Drops what was not handed over (a run that ended before its prompt was submitted). */
  clear(): void {
    this.#stash.length = 0;
  }

  /** Whether `item` came from an `@` ref. */
  fromRef(item: Item): boolean {
    return this.#fromRefs.has(item);
  }

  /** The Interceptor's `onPromptSubmit`: the stash (and the plan-mode note) as `continue_with`. */
  onPromptSubmit(): PromptAction | undefined {
    const items = this.#stash.splice(0);
    // The mode may change between submits: say it with the prompt it applies to.
    if (this.#options.planMode()) items.push(systemMessage(PLAN_MODE_NOTE));
    return items.length > 0 ? { action: "continue_with", items } : undefined;
  }

  /**
   * Reads the refs of a submit into the stash, in order, each distinct ref
   * once. A cancel stops it between refs and abandons a read in progress
   * (the worker then ends the run as cancelled).
   */
  async resolveRefs(segments: readonly Segment[], signal: AbortSignal): Promise<void> {
    for (const ref of new Set(fileRefs(segments))) {
      if (signal.aborted) return;
      let resolved: { item: Item; file?: ResolvedFileRef } | undefined;
      try {
        resolved = await abortable(this.#resolve(ref, signal), signal);
      } catch (error) {
        this.#options.onUnattached(
          ref,
          errorMessage(error),
          FileRefError.isInstance(error) ? error.code : undefined,
        );
        continue;
      }
      if (resolved === undefined) return;
      const { item, file } = resolved;
      if (file !== undefined)
        this.#options.reads.record(file.real, ref, { size: file.totalBytes, mtimeMs: file.mtimeMs });
      this.#fromRefs.add(item);
      this.#stash.push(item);
    }
  }

  async #resolve(ref: string, signal: AbortSignal): Promise<{ item: Item; file?: ResolvedFileRef }> {
    const { mcp, maxBytes, view } = this.#options;
    const resource = parseResourceRef(ref, (name) => mcp.has(name));
    if (resource !== undefined) return { item: await resolveResourceRef(mcp, resource, maxBytes, signal) };
    if (imageTypeOfPath(ref) !== undefined) {
      const refuse = this.#options.imageRefusal();
      return { item: (await resolveImageRef(view.fs, ref, refuse ? { refuse } : {})).item };
    }
    const file = await view.resolveFileRef(ref, maxBytes);
    return { item: file.item, file };
  }
}
