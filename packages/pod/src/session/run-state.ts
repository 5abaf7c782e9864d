import type { Usage } from "@yoi/llm-client";

/** What the pod tracks of its runs: the one in progress (its controller), the turn count, the latest usage. */
export class RunState {
  /** The user turn in progress (1-based; 0 before the first). */
  turn: number;
  /** The run in progress; undefined while idle. */
  controller: AbortController | undefined;
  /** Usage of the latest model call (what `compact` measures from). */
  lastUsage: Usage | undefined;
  /** Usage of the subagents of the run in progress (added to its result). */
  childUsage: Usage = {};

  constructor(turn = 0) {
    this.turn = turn;
  }
}
