/**
 * `/review`: the changes (git-changes.ts) with review instructions, given
 * to a read-only subagent (the `task` tool's machinery, with read_file,
 * list_dir, glob and grep only), whose answer ends with its findings as a
 * JSON block. The block is validated; an answer without a valid one is
 * still returned, with why it did not parse, so nothing the reviewer said
 * is lost.
 */
import type { Usage } from "@yoi/llm-client";
import type { Tool, ToolExecutionContext } from "@yoi/llm-worker";
import { errorMessage } from "@yoi/manifest/errors";
import * as z from "zod";
import type { AgentDefinition } from "../agents/agent-definition.ts";
import { READ_ONLY_TOOLS } from "../tools/builtin-tools.ts";
import { type TaskToolOptions, taskTool } from "../tools/task.ts";
import type { GitChanges } from "./git-changes.ts";

export const REVIEW_SEVERITIES = ["high", "medium", "low"] as const;

export const ReviewFindingSchema = z.object({
  file: z.string().min(1),
  /** 1-based line in the new version; null when the finding is about the file as a whole. */
  line: z.number().int().positive().nullable(),
  severity: z.enum(REVIEW_SEVERITIES),
  text: z.string().min(1),
});
export type ReviewFinding = z.infer<typeof ReviewFindingSchema>;

const ReviewAnswerSchema = z.object({ findings: z.array(ReviewFindingSchema) });

export interface ReviewResult {
  /** What the changes were against (`HEAD`, `main...HEAD (merge base ...)`). */
  against: string;
  /** Changed files reviewed. */
  files: number;
  /** The reviewer's words without the JSON block. */
  summary: string;
  /** The findings, when the answer held a valid JSON block. */
  findings?: ReviewFinding[];
  /** Why the findings could not be read from the answer. */
  parseError?: string;
  /** The reviewer's whole final answer. */
  answer: string;
  /** What the reviewer's model calls used (set by `Pod.review`). */
  usage?: Usage;
}

const REVIEWER: AgentDefinition = {
  name: "reviewer",
  description: "Reviews a diff for bugs",
  tools: [...READ_ONLY_TOOLS],
  path: "(built in)",
  prompt: [
    "You are reviewing code changes. You can read files (read_file, list_dir, glob, grep) but not change anything.",
    "Look for real problems the change introduces: bugs, wrong logic, unhandled errors and edge cases, security issues,",
    "races, broken contracts with callers, missing or wrong tests. Read the surrounding code when the diff alone is not enough.",
    "Do not report style preferences or things the diff does not touch. Do not invent problems: if the change is fine, say so.",
    "",
    "Answer with a short summary (a few sentences), then exactly one fenced JSON block:",
    "```json",
    '{"findings": [{"file": "src/a.ts", "line": 12, "severity": "high", "text": "what is wrong, why, and how to fix it"}]}',
    "```",
    "`file` is the path as in the diff; `line` the 1-based line in the new version (null for the file as a whole);",
    '`severity` one of "high" (a bug or security problem), "medium" (likely wrong or fragile), "low" (minor).',
    'With nothing to report: {"findings": []}.',
  ].join("\n"),
};

/** The first user message of the reviewer: what to review and the diff. */
export function reviewPrompt(changes: GitChanges): string {
  const notes = [
    changes.moreFiles > 0 ? `${changes.moreFiles} more changed files are not listed.` : "",
    changes.patchTruncated ? "The diff was cut to fit; read the files for the rest." : "",
  ].filter(Boolean);
  return [
    `Review these changes against ${changes.against}: ${changes.files.length} file${changes.files.length === 1 ? "" : "s"}.`,
    ...notes,
    "",
    "```diff",
    changes.patch.replace(/```/g, "`\u200b``"),
    "```",
  ].join("\n");
}

/** Splits a reviewer's answer into its words and its validated findings. */
export function parseReview(answer: string): Pick<ReviewResult, "summary" | "findings" | "parseError"> {
  const blocks = [...answer.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)\n```/g)];
  const block = blocks.at(-1);
  if (block === undefined)
    return { summary: answer.trim(), parseError: "the reviewer's answer has no JSON block of findings" };
  const summary = (answer.slice(0, block.index) + answer.slice(block.index + block[0].length)).trim();
  let value: unknown;
  try {
    value = JSON.parse(block[1]!);
  } catch (error) {
    return { summary, parseError: `the findings block is not valid JSON: ${errorMessage(error)}` };
  }
  const parsed = ReviewAnswerSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "the block";
    return {
      summary,
      parseError: `the findings block does not have the expected shape: ${where}: ${issue?.message}`,
    };
  }
  return { summary, findings: parsed.data.findings };
}

/** Runs the reviewer on `changes` as a subagent of the session (its events and transcript are the session's). */
export async function runReview(
  changes: GitChanges,
  subagents: TaskToolOptions,
  tools: readonly Tool[],
  signal: AbortSignal,
): Promise<ReviewResult> {
  const readOnly = tools.filter((t) => READ_ONLY_TOOLS.includes(t.name));
  const reviewer = taskTool({
    ...subagents,
    // At the deepest level: the reviewer gets no task tool of its own.
    depth: Math.max(1, subagents.maxDepth),
    agents: new Map([[REVIEWER.name, REVIEWER]]),
    tools: () => readOnly,
  });
  const ctx: ToolExecutionContext = {
    callId: `review-${Date.now().toString(36)}`,
    batchId: "review",
    callIndex: 0,
    batchSize: 1,
    turnIndex: 0,
    signal,
  };
  const output = await reviewer.execute(
    {
      description: `review changes against ${changes.against}`,
      prompt: reviewPrompt(changes),
      agent: REVIEWER.name,
    },
    ctx,
  );
  const text = typeof output === "string" ? output : "";
  // The task tool's trailer (model calls, transcript blob) is for a parent model, not for findings.
  const answer = text.replace(/\n\n\[subagent: [^\n]*\]$/, "").trim();
  return { against: changes.against, files: changes.files.length, answer, ...parseReview(answer) };
}
