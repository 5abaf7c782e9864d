/**
 * Fork: a new session whose history is a copy of another's, whole or up to
 * before one of its turns. The new log records its parent (and the turn),
 * holds the copied history as one `history_replaced` record (reason
 * `fork`), and takes the parent's title; the parent is not touched.
 */
import {
  createSession,
  type FsyncPolicy,
  findSessionId,
  loadSession,
  type SessionLog,
} from "@yoi/worker-persistence";
import { historyBefore, listCheckpoints } from "./checkpoint-list.ts";
import { findCheckpoint } from "./rewind.ts";

export interface ForkOptions {
  /** Data directory of the sessions. */
  dataDir: string;
  /** The parent: an id or a unique prefix of one. */
  parent: string;
  /** Copy the history as it was before this user turn (1-based); default all of it. */
  beforeTurn?: number;
  fsync?: FsyncPolicy;
}

/** Creates the fork and returns its id (its log closed, ready for `Pod.restore`). */
export async function forkSession(
  options: ForkOptions,
): Promise<{ id: string; parentId: string; items: number }> {
  const parentId = await findSessionId({ dir: options.dataDir, prefix: options.parent });
  const parent = await loadSession({ dir: options.dataDir, id: parentId });
  let history = parent.history;
  if (options.beforeTurn !== undefined) {
    const checkpoint = findCheckpoint(listCheckpoints(parent.records), {
      kind: "turn",
      turn: options.beforeTurn,
    });
    history = historyBefore(parent.records, checkpoint.seq);
  }
  const meta = parent.meta;
  let log: SessionLog | undefined;
  try {
    log = await createSession({
      dir: options.dataDir,
      ...(options.fsync !== undefined ? { fsync: options.fsync } : {}),
      ...(meta.model !== undefined ? { model: meta.model } : {}),
      ...(meta.provider !== undefined ? { provider: meta.provider } : {}),
      ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
      ...(meta.config !== undefined ? { config: meta.config } : {}),
      ...(meta.baseURL !== undefined ? { baseURL: meta.baseURL } : {}),
      ...(meta.permissionMode !== undefined ? { permissionMode: meta.permissionMode } : {}),
      parentSessionId: parentId,
      ...(options.beforeTurn !== undefined ? { forkedBeforeTurn: options.beforeTurn } : {}),
    });
    if (meta.title !== undefined) await log.append({ type: "title", title: meta.title });
    await log.historyReplaced({
      history,
      reason: "fork",
      detail: {
        parent: parentId,
        ...(options.beforeTurn !== undefined ? { beforeTurn: options.beforeTurn } : {}),
      },
    });
    return { id: log.id, parentId, items: history.length };
  } finally {
    await log?.close();
  }
}
