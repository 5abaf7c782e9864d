/**
 * The `task` section of the config: how far subagents (`task` tool) may
 * nest and how long one may run.
 */
import * as z from "zod";
import { expecting, intAtLeast } from "./schema-helpers.ts";

/** Levels of subagents below the main agent. 1: the main agent's children cannot delegate further. */
export const TASK_MAX_DEPTH = 1;
/** Wall-clock limit of one `task` call (the child's whole run). */
export const TASK_TIMEOUT_MS = 30 * 60_000;
/** Model calls one subagent may make. */
export const TASK_MAX_TURNS = 50;

export const TaskSchema = z.strictObject(
  {
    maxDepth: intAtLeast(0, "a non-negative integer (0 turns the task tool off)")
      .max(5, expecting("at most 5"))
      .default(TASK_MAX_DEPTH)
      .meta({ description: "Levels of subagents below the main agent; 0 turns `task` off." }),
    timeoutMs: intAtLeast(1000, "an integer of at least 1000 (milliseconds)")
      .default(TASK_TIMEOUT_MS)
      .meta({ description: "Wall-clock limit of one subagent run, in ms." }),
    maxTurns: intAtLeast(1, "a positive integer")
      .default(TASK_MAX_TURNS)
      .meta({ description: "Model calls one subagent may make." }),
  },
  expecting("an object"),
);
