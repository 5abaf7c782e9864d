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
  /** Prints one of yoi's messages above the prompt, `mark` then the text, its words wrapped at the width. */
  message(mark: string, text: string, paint: (text: string) => string): void;
  /** Prints `head` and beside it, from column `indent`, `body` word-wrapped at the width. */
  hanging(head: string, body: string, indent: number): void;
  /** Prints the last `turns` turns of a conversation, laid out as the session shows them. */
  transcript(history: readonly Item[], turns: number): void;
  /** Asks one question at the prompt; undefined when cancelled. */
  question(prompt: string): Promise<string | undefined>;
}

/** Rows of the `/rewind` list: the number, then what, changed files and age. */
export function checkpointRows(
  points: readonly CheckpointInfo[],
  style: Style,
  now = Date.now(),
): { number: string; text: string }[] {
  return points.map((c, i) => {
    const what =
      c.kind === "turn"
        ? `before turn ${c.turn}${c.label ? `: ${sanitizeLine(c.label)}` : ""}`
        : `undo the rewind to turn ${c.turn}`;
    const files =
      c.files.length === 0 ? "" : ` · ${c.files.length} file${c.files.length === 1 ? "" : "s"} changed after`;
    const stale = c.live || c.kind === "rewind" ? "" : " (rewound)";
    return {
      number: style.bold(String(i + 1).padStart(2)),
      text: `${what}${style.dim(`${stale}${files} · ${ago(Date.parse(c.ts), now)}`)}`,
    };
  });
}

/** Lines of the `/rewind` list, one a checkpoint. */
export function checkpointLines(points: readonly CheckpointInfo[], style: Style, now = Date.now()): string[] {
  return checkpointRows(points, style, now).map((row) => `${row.number}  ${row.text}`);
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
      ctx.message("", "usage: /rewind [turn] [files|conversation] (no turn: choose from a list)", s.yellow);
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
  // Each row's text wrapped under itself, beside its number.
  for (const row of checkpointRows(points, s)) ctx.hanging(row.number, row.text, 4);
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
    ctx.message(
      "",
      `"${answer?.trim()}" is not a number from the list (optionally followed by files or conversation)`,
      s.yellow,
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
          ctx.message(
            "!",
            `${sanitizeLine(ctx.pod.fs.display(c.path))}: ${sanitizeLine(c.reason)}`,
            s.yellow,
          );
        const answer = await ctx.question(
          s.yellow("overwrite these with the checkpoint's content? [y/N] › "),
        );
        return /^y(es)?$/i.test((answer ?? "").trim());
      },
    });
  } catch (error) {
    if (RewindError.isInstance(error)) {
      if (error.code === "conflict") ctx.message("", `nothing rewound: ${error.message}`, s.dim);
      else ctx.message("", error.message, s.yellow);
      return;
    }
    ctx.message("✗", `rewind failed: ${sanitize(errorMessage(error))}`, s.red);
    return;
  }
  const what =
    result.checkpoint.kind === "turn" ? `before turn ${result.checkpoint.turn}` : "before the rewind";
  ctx.message("⟲", `rewound to ${what}`, s.green);
  for (const file of result.restored)
    ctx.message(" ", `restored ${sanitizeLine(ctx.pod.fs.display(file))}`, s.dim);
  for (const failure of result.failed)
    ctx.message(
      "  ✗",
      `${sanitizeLine(ctx.pod.fs.display(failure.path))}: ${sanitizeLine(failure.reason)}`,
      s.red,
    );
  if (result.history) {
    ctx.message(" ", `conversation: ${result.history.length} items`, s.dim);
    ctx.transcript(result.history, 1);
  }
  ctx.message(" ", "(/rewind lists this rewind too: choose it to undo it)", s.dim);
}
