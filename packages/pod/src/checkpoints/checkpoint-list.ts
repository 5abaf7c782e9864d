/**
 * The checkpoints of a session read from its records: each user turn and
 * each rewind, with the files changed after it, and whether it is still
 * live (not inside a stretch a later rewind went back over).
 */
import type { Item } from "@yoi/llm-client";
import { type SessionRecord, SessionReplay } from "@yoi/worker-persistence";

/** One point a rewind can go back to. */
export interface CheckpointInfo {
  /** seq of its checkpoint record. */
  seq: number;
  kind: "turn" | "rewind";
  /** The user turn (1-based) it opens, or for a rewind, the turn that rewind went back to. */
  turn: number;
  /** The turn's first prompt line. */
  label?: string;
  /** ISO time. */
  ts: string;
  /** Files changed between this checkpoint and the next. */
  files: string[];
  /** False once a later rewind went back to before it (its turn is no longer in the conversation). */
  live: boolean;
}

/** Checkpoints in log order. */
export function listCheckpoints(records: readonly SessionRecord[]): CheckpointInfo[] {
  const out: CheckpointInfo[] = [];
  // The checkpoints the conversation currently descends from, and that set as it was before each one.
  let live = new Set<number>();
  const liveBefore = new Map<number, Set<number>>();
  for (const record of records) {
    if (record.type === "checkpoint") {
      liveBefore.set(record.seq, new Set(live));
      live.add(record.seq);
      out.push({
        seq: record.seq,
        kind: record.kind,
        turn: record.turn,
        ...(record.label !== undefined ? { label: record.label } : {}),
        ts: record.ts,
        files: [],
        live: true,
      });
    } else if (record.type === "file_change") {
      const last = out[out.length - 1];
      if (last && !last.files.includes(record.path)) last.files.push(record.path);
    } else if (record.type === "rewind" && record.conversation) {
      // the conversation is again what it was just before the checkpoint rewound to
      live = new Set(liveBefore.get(record.toSeq) ?? []);
    }
  }
  for (const c of out) c.live = live.has(c.seq);
  return out;
}

/** The history as it was just before record `seq` (a checkpoint) was written. */
export function historyBefore(records: readonly SessionRecord[], seq: number): Item[] {
  const replay = new SessionReplay("", "");
  let line = 0;
  for (const record of records) {
    if (record.seq >= seq) break;
    replay.apply(record, ++line);
  }
  return replay.history;
}
