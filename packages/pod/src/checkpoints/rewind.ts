/**
 * Rewind: put files and/or the conversation back to a checkpoint. The log
 * stays append-only: a rewind writes its own checkpoint first (so it can be
 * undone), a `file_change` per file it puts back (the content it replaces
 * kept in the blob store), a history replacement for the conversation, and
 * a `rewind` record. A file changed outside yoi since yoi last wrote it is
 * a conflict: it is only overwritten when the caller says so.
 */
import { lstat, unlink } from "node:fs/promises";
import type { Item } from "@yoi/llm-client";
import type { BlobStore } from "@yoi/llm-worker";
import { errorMessage, YoiError } from "@yoi/manifest/errors";
import type { FileState, SessionRecord, SessionRecordInput } from "@yoi/worker-persistence";
import type { ScopedFs } from "../fs/scoped-fs.ts";
import { type CheckpointInfo, historyBefore, listCheckpoints } from "./checkpoint-list.ts";
import { keptState, loadBytes, observeFile, sameContent } from "./file-state.ts";

/** Typed error of rewinds (`no_checkpoint`, `conflict`). */
export class RewindError extends YoiError<"no_checkpoint" | "conflict"> {
  override readonly name = "RewindError";
  static override readonly marker: symbol = Symbol.for("yoi.error.RewindError");
  /** For `conflict`: the files changed outside yoi since the checkpoint. */
  readonly conflicts: readonly RewindConflict[];

  constructor(code: RewindError["code"], message: string, conflicts: readonly RewindConflict[] = []) {
    super(code, message);
    this.conflicts = conflicts;
  }
}

/** A file that is not as yoi left it. */
export interface RewindConflict {
  path: string;
  reason: string;
}

/** Which checkpoint to go back to. */
export type RewindTarget =
  /** Before the last live user turn (the default; `/undo`). */
  | { kind: "last_turn" }
  /** Before user turn N (the last checkpoint of that number). */
  | { kind: "turn"; turn: number }
  /** A checkpoint by its seq (from `listCheckpoints`, e.g. a rewind's, to undo it). */
  | { kind: "seq"; seq: number };

export interface RewindOptions {
  target?: RewindTarget;
  /** Put files back. Default true. */
  files?: boolean;
  /** Put the conversation back. Default true. */
  conversation?: boolean;
  /**
   * Asked when files changed outside yoi since; true overwrites them.
   * Without it (and without `force`) a conflict rejects with `RewindError` `conflict`.
   */
  confirm?: (conflicts: readonly RewindConflict[]) => Promise<boolean>;
  /** Overwrite files changed outside yoi without asking. */
  force?: boolean;
}

export interface RewindResult {
  checkpoint: CheckpointInfo;
  restored: string[];
  forced: string[];
  failed: { path: string; reason: string }[];
  /** The conversation now (when it was rewound). */
  history?: Item[];
}

/** What a rewind needs from its host (a Pod, or `yoi rewind` on a closed session). */
export interface RewindContext {
  fs: ScopedFs;
  blobStore: BlobStore;
  /** The session's records so far (everything appended is flushed). */
  records: readonly SessionRecord[];
  /** Appends a record; resolves once written. */
  append: (record: SessionRecordInput) => Promise<unknown>;
  /** Replaces the conversation (the host logs it as history_replaced, reason `rewind`). */
  replaceHistory: (history: Item[]) => Promise<void>;
}

/** Finds the checkpoint a target names. */
export function findCheckpoint(checkpoints: readonly CheckpointInfo[], target: RewindTarget): CheckpointInfo {
  let found: CheckpointInfo | undefined;
  if (target.kind === "last_turn") {
    found = checkpoints.findLast((c) => c.kind === "turn" && c.live);
    if (!found) throw new RewindError("no_checkpoint", "nothing to rewind: this session has no turn yet");
  } else if (target.kind === "turn") {
    found = checkpoints.findLast((c) => c.kind === "turn" && c.turn === target.turn);
    if (!found) {
      const turns = checkpoints.filter((c) => c.kind === "turn").map((c) => c.turn);
      throw new RewindError(
        "no_checkpoint",
        turns.length === 0
          ? "nothing to rewind: this session has no turn yet"
          : `no turn ${target.turn} in this session (turns ${turns[0]}-${turns[turns.length - 1]})`,
      );
    }
  } else {
    found = checkpoints.find((c) => c.seq === target.seq);
    if (!found) throw new RewindError("no_checkpoint", `no checkpoint at record ${target.seq}`);
  }
  return found;
}

interface FilePlan {
  path: string;
  /** The state at the checkpoint. */
  target: FileState;
  /** The state yoi last left. */
  expected: FileState;
}

function planFiles(records: readonly SessionRecord[], seq: number): FilePlan[] {
  const plans = new Map<string, FilePlan>();
  for (const record of records) {
    if (record.type !== "file_change" || record.seq <= seq) continue;
    const plan = plans.get(record.path);
    if (plan) plan.expected = record.after;
    else plans.set(record.path, { path: record.path, target: record.before, expected: record.after });
  }
  return [...plans.values()];
}

/** Rewinds per `options`; see the module comment. */
export async function rewind(context: RewindContext, options: RewindOptions = {}): Promise<RewindResult> {
  const files = options.files ?? true;
  const conversation = options.conversation ?? true;
  const checkpoint = findCheckpoint(
    listCheckpoints(context.records),
    options.target ?? { kind: "last_turn" },
  );
  const plans = files ? planFiles(context.records, checkpoint.seq) : [];

  // Look first: what is on disk now, and what was changed behind yoi's back.
  const current = new Map<string, Awaited<ReturnType<typeof observeFile>>>();
  const conflicts: RewindConflict[] = [];
  for (const plan of plans) {
    const now = await observeFile(context.fs, plan.path);
    current.set(plan.path, now);
    if (sameContent(now.state, plan.target)) continue;
    if (!sameContent(now.state, plan.expected)) {
      conflicts.push({
        path: plan.path,
        reason:
          now.state.kind === "absent"
            ? "deleted outside yoi since"
            : plan.expected.kind === "absent"
              ? "created outside yoi since"
              : "changed outside yoi since",
      });
    }
  }
  let forced: string[] = [];
  if (conflicts.length > 0) {
    const overwrite = options.force === true || (options.confirm ? await options.confirm(conflicts) : false);
    if (!overwrite) {
      throw new RewindError(
        "conflict",
        `${conflicts.map((c) => `${context.fs.display(c.path)} (${c.reason})`).join(", ")}: not overwritten`,
        conflicts,
      );
    }
    forced = conflicts.map((c) => c.path);
  }

  const label = checkpoint.kind === "turn" ? `rewind to before turn ${checkpoint.turn}` : "undo a rewind";
  await context.append({ type: "checkpoint", kind: "rewind", turn: checkpoint.turn, label });
  const restored: string[] = [];
  const failed: { path: string; reason: string }[] = [];
  for (const plan of plans) {
    const now = current.get(plan.path);
    if (!now || sameContent(now.state, plan.target)) continue;
    try {
      await restoreFile(context, plan.path, plan.target);
      await context.append({
        type: "file_change",
        path: plan.path,
        tool: "rewind",
        turn: checkpoint.turn,
        before: await keptState(context.blobStore, now),
        after: plan.target.kind === "file" ? withoutBlob(plan.target) : plan.target,
      });
      restored.push(plan.path);
    } catch (error) {
      failed.push({ path: plan.path, reason: errorMessage(error) });
    }
  }
  let history: Item[] | undefined;
  if (conversation) {
    history = historyBefore(context.records, checkpoint.seq);
    await context.replaceHistory(history);
  }
  await context.append({
    type: "rewind",
    toSeq: checkpoint.seq,
    turn: checkpoint.turn,
    files,
    conversation,
    restored,
    ...(forced.length > 0 ? { forced } : {}),
    ...(failed.length > 0 ? { failed } : {}),
  });
  return { checkpoint, restored, forced, failed, ...(history ? { history } : {}) };
}

function withoutBlob(state: Extract<FileState, { kind: "file" }>): FileState {
  const { blob: _blob, ...rest } = state;
  return rest;
}

async function restoreFile(context: RewindContext, path: string, target: FileState): Promise<void> {
  if (target.kind === "absent") {
    // The scope check first: only a file inside a write root is removed.
    const resolved = await context.fs.resolve(path, "write");
    if (!resolved.exists) return;
    const info = await lstat(resolved.real);
    if (!info.isFile()) throw new Error("not a regular file any more; left as it is");
    await unlink(resolved.real);
    return;
  }
  if (target.kind === "unsaved" || target.blob === undefined) {
    throw new Error(
      `its earlier content was not kept (${target.kind === "unsaved" ? target.reason : "no copy"})`,
    );
  }
  const bytes = await loadBytes(context.blobStore, target.blob);
  await context.fs.writeFile(path, bytes);
}
