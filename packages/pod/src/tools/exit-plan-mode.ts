/**
 * `exit_plan_mode`: in plan mode, the model hands its plan to the user.
 * The tool is offered only while the session is in plan mode. Its call is
 * a permission question like any other (the UI shows the plan): the user
 * approves it, choosing the mode the work goes on in (acceptEdits or
 * default; the permission policy switches to it), or rejects it with
 * feedback, which the model gets as the call's result while plan mode
 * stays on. Where no one can be asked (print mode without a way to answer),
 * the call is denied and the model is told to give the plan as its answer.
 */

import { defineTool, ToolError } from "@yoi/llm-worker";
import type { PermissionMode } from "@yoi/manifest";
import * as z from "zod";

export const EXIT_PLAN_MODE_TOOL_NAME = "exit_plan_mode";

const exitPlanModeInput = z.object({
  plan: z
    .string()
    .trim()
    .min(1, "the plan is empty: write the steps you will take")
    .describe("The plan, in Markdown: concrete steps, the files to change and how to check the result."),
});

/** What the tool knows of the session: its mode now. */
export interface PlanModeState {
  readonly mode: PermissionMode;
}

export function exitPlanModeTool(state: PlanModeState) {
  const notInPlanMode = () =>
    new ToolError(
      `${EXIT_PLAN_MODE_TOOL_NAME} is only for plan mode, and the session is in ${state.mode} mode now: go on with the work.`,
    );
  return defineTool({
    name: EXIT_PLAN_MODE_TOOL_NAME,
    description:
      "Present your plan to the user when you are done planning, in plan mode. The user approves it (you then carry it out) " +
      "or rejects it with feedback (revise the plan and present it again). Call it only once the plan is complete; " +
      "do not use it to ask questions.",
    inputSchema: exitPlanModeInput,
    check: () => {
      if (state.mode !== "plan") throw notInPlanMode();
    },
    execute: () => {
      // Reached only after the user approved: the permission policy has switched the mode already.
      if (state.mode === "plan")
        throw new ToolError("The plan was not approved: plan mode is still on. Wait for the user's answer.");
      const how =
        state.mode === "acceptEdits"
          ? "file edits now run without asking; commands still ask"
          : state.mode === "bypassPermissions"
            ? "tools run without asking"
            : "edits and commands ask the user before they run";
      return `The user approved the plan. The session is now in ${state.mode} mode (${how}). Carry out the plan now, step by step.`;
    },
  });
}
