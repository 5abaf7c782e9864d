/**
 * `/rewind` and `/undo` in the interactive session. `/rewind` lists the
 * turns (and earlier rewinds, which can be undone) and asks which to go
 * back to, and whether to restore files, the conversation or both;
 * `/rewind N [files|conversation]` skips the questions; `/undo` rewinds
 * the last turn. Files changed outside yoi are only overwritten after a yes.
 */

import type { Item } from "@yoi/llm-client";
import { errorMessage } from "@yoi/manifest/errors";
import type { CheckpointInfo, Pod, RewindOptions, RewindResult, RewindTarget } from "@yoi/pod";
import { RewindError } from "@yoi/pod";
import { ago } from "../commands/sessions.ts";
import type { Style } from "../style.ts";
import { sanitize, sanitizeLine } from "../terminal-text.ts";

export interface SlashRewindContext {
  pod: Pod;
  style: Style;
  /** Prints a line above the prompt. */
  line(text: string): void;
  /** Prints the last `turns` turns of a conversation, laid out as the session shows them. */
  transcript(history: readonly Item[], turns: number): void;
  /** Asks one question at the prompt; undefined when cancelled. */
  question(prompt: string): Promise<string | undefined>;
}

/** Lines of the `/rewind` list: number, what, changed files, age. */
export function checkpointLines(points: readonly CheckpointInfo[], style: Style, now = Date.now()): string[] {
  return points.map((c, i) => {
    const what =
      c.kind === "turn"
        ? `before turn ${c.turn}${c.label ? `: ${sanitizeLine(c.label)}` : ""}`
        : `undo the rewind to turn ${c.turn}`;
    const files =
      c.files.length === 0 ? "" : ` · ${c.files.length} file${c.files.length === 1 ? "" : "s"} changed after`;
    const stale = c.live || c.kind === "rewind" ? "" : " (rewound)";
    return `${style.bold(String(i + 1).padStart(2))}  ${what}${style.dim(`${stale}${files} · ${ago(Date.parse(c.ts), now)}`)}`;
  });
}

function parseScope(word: string | undefined): Pick<RewindOptions, "files" | "conversation"> | undefined {
  switch (word?.toLowerCase()) {
    case undefined:
    case "":
    case "both":
    case "b":
      return { files: true, conversation: true };
    case "files":
    case "f":
      return { files: true, conversation: false };
    case "conversation":
    case "c":
      return { files: false, conversation: true };
    default:
      return undefined;
  }
}

/** `/rewind [N] [files|conversation]`. */
export async function slashRewind(ctx: SlashRewindContext, arg: string): Promise<void> {
  const s = ctx.style;
  const [first, second] = arg.split(/\s+/).filter((w) => w !== "");
  if (first !== undefined) {
    const turn = Number(first);
    const scope = parseScope(second);
    if (!/^\d+$/.test(first) || turn < 1 || scope === undefined) {
      ctx.line(s.yellow("usage: /rewind [turn] [files|conversation] (no turn: choose from a list)"));
      return;
    }
    await run(ctx, { target: { kind: "turn", turn }, ...scope });
    return;
  }
  const points = await ctx.pod.checkpoints();
  if (points.length === 0) {
    ctx.line(s.dim("nothing to rewind yet"));
    return;
  }
  for (const line of checkpointLines(points, s)) ctx.line(line);
  const answer = await ctx.question(
    s.cyan("rewind to which? number, then files|conversation (default both); Enter: none › "),
  );
  const [n, scopeWord] = (answer ?? "").trim().split(/\s+/);
  if (n === undefined || n === "") {
    ctx.line(s.dim("nothing rewound"));
    return;
  }
  const point = /^\d+$/.test(n) ? points[Number(n) - 1] : undefined;
  const scope = parseScope(scopeWord);
  if (point === undefined || scope === undefined) {
    ctx.line(
      s.yellow(
        `"${answer?.trim()}" is not a number from the list (optionally followed by files or conversation)`,
      ),
    );
    return;
  }
  await run(ctx, { target: { kind: "seq", seq: point.seq }, ...scope });
}

/** `/undo`: rewind files and conversation to before the last turn. */
export async function slashUndo(ctx: SlashRewindContext): Promise<void> {
  await run(ctx, { target: { kind: "last_turn" } });
}

async function run(
  ctx: SlashRewindContext,
  options: RewindOptions & { target: RewindTarget },
): Promise<void> {
  const s = ctx.style;
  let result: RewindResult;
  try {
    result = await ctx.pod.rewind({
      ...options,
      confirm: async (conflicts) => {
        for (const c of conflicts)
          ctx.line(s.yellow(`! ${sanitizeLine(ctx.pod.fs.display(c.path))}: ${sanitizeLine(c.reason)}`));
        const answer = await ctx.question(
          s.yellow("overwrite these with the checkpoint's content? [y/N] › "),
        );
        return /^y(es)?$/i.test((answer ?? "").trim());
      },
    });
  } catch (error) {
    if (RewindError.isInstance(error)) {
      ctx.line(
        error.code === "conflict" ? s.dim(`nothing rewound: ${error.message}`) : s.yellow(error.message),
      );
      return;
    }
    ctx.line(s.red(`✗ rewind failed: ${sanitize(errorMessage(error))}`));
    return;
  }
  const what =
    result.checkpoint.kind === "turn" ? `before turn ${result.checkpoint.turn}` : "before the rewind";
  ctx.line(s.green(`⟲ rewound to ${what}`));
  for (const file of result.restored) ctx.line(s.dim(`  restored ${sanitizeLine(ctx.pod.fs.display(file))}`));
  for (const failure of result.failed)
    ctx.line(s.red(`  ✗ ${sanitizeLine(ctx.pod.fs.display(failure.path))}: ${sanitizeLine(failure.reason)}`));
  if (result.history) {
    ctx.line(s.dim(`  conversation: ${result.history.length} items`));
    ctx.transcript(result.history, 1);
  }
  ctx.line(s.dim("  (/rewind lists this rewind too: choose it to undo it)"));
}
