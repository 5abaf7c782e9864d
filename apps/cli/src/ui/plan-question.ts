/**
 * The question `exit_plan_mode` puts to the user: the model's plan, fitted
 * to the screen (Ctrl-O prints it whole), and the answers: approve and go
 * on in acceptEdits or in default mode, or keep planning (with what to
 * change). The plan is the model's text: its control characters are made
 * visible, like any argument of a permission question. It is laid out as
 * an answer is: rendered as Markdown once the renderer is loaded, else its
 * words wrapped, two columns in.
 */
import type { PermissionRequest } from "@yoi/pod";
import type { Style } from "../style.ts";
import { sanitize } from "../terminal-text.ts";
import { wrapWords } from "../text-width.ts";
import type { PermissionQuestion, QuestionScreen } from "./permission-question.ts";
import type { RichOutput } from "./rich-output.ts";

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
  rich: RichOutput | undefined,
  screen: QuestionScreen,
): PermissionQuestion {
  const columns = Math.max(20, screen.columns);
  const width = columns - 3;
  const plan = sanitize(planText(request));
  const planLines = (
    rich
      ? rich.markdownLines(plan, { width, style, highlight: rich.highlightCode })
      : plan.split("\n").flatMap((line) => wrapWords(line, width))
  ).map((line) => (line === "" ? "" : `  ${line}`));
  const title = wrapWords(
    `${style.yellow("?")} ${style.bold("the plan")} ${style.dim("(exit plan mode and carry it out?)")}`,
    columns - 1,
  );
  const budget = Math.max(4, screen.rows - RESERVED_ROWS - (title.length - 1));
  const shown = planLines.length <= budget ? planLines : planLines.slice(0, budget - 1);
  const cut = shown.length < planLines.length;
  const lines = [...title, ...shown];
  if (cut)
    lines.push(
      ...wrapWords(
        style.dim(`  … ${planLines.length - shown.length} more lines; ctrl+o shows the whole plan`),
        columns - 1,
      ),
    );
  return { lines, cut, whole: ["── the plan, whole ──", ...planLines, "──"] };
}

/** The answers, one key each. */
export function planChoices(style: Style): string {
  return style.yellow(
    "[a]pprove, accept edits · [y]es, approve and ask before edits · [n]o, keep planning · [t]ell the model what to change",
  );
}
