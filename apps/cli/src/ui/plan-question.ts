/**
 * The question `exit_plan_mode` puts to the user: the model's plan, fitted
 * to the screen (Ctrl-O prints it whole), and the answers: approve and go
 * on in acceptEdits or in default mode, or keep planning (with what to
 * change). The plan is the model's text: its control characters are made
 * visible, like any argument of a permission question.
 */
import type { PermissionRequest } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitize } from "../terminal-text.ts";
import type { PermissionQuestion, QuestionScreen } from "./permission-question.ts";

/** Rows kept free below the plan: the title, the choices, the note on what was cut, one spare. */
const RESERVED_ROWS = 4;

/** The plan of an `exit_plan_mode` request (empty when the model sent none). */
export function planText(request: Pick<PermissionRequest, "args">): string {
  const plan = (request.args as { plan?: unknown } | undefined)?.plan;
  return typeof plan === "string" ? plan.trim() : "";
}

export function planQuestion(
  request: PermissionRequest,
  style: Style,
  screen: QuestionScreen,
): PermissionQuestion {
  const planLines = sanitize(planText(request)).split("\n");
  const budget = Math.max(4, screen.rows - RESERVED_ROWS);
  const shown = planLines.length <= budget ? planLines : planLines.slice(0, budget - 1);
  const cut = shown.length < planLines.length;
  const lines = [
    `${style.yellow("?")} ${style.bold("the plan")} ${style.dim("(exit plan mode and carry it out?)")}`,
    ...shown.map((line) => `  ${line}`),
  ];
  if (cut)
    lines.push(style.dim(`  … ${planLines.length - shown.length} more lines; ctrl+o shows the whole plan`));
  return { lines, cut, whole: ["── the plan, whole ──", ...planLines, "──"] };
}

/** The answers, one key each. */
export function planChoices(style: Style): string {
  return style.yellow(
    "[a]pprove, accept edits · [y]es, approve and ask before edits · [n]o, keep planning · [t]ell the model what to change",
  );
}
