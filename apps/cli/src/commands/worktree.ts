/**
 * `yoi --worktree [name]` (the session runs in a git worktree of its own,
 * under `.yoi/worktrees/<name>` on branch `yoi/<name>`), `yoi worktree list`
 * and `yoi worktree remove <name> [--force]`. The pod's worktrees/ does the
 * git work; this file chooses the words.
 */
import * as path from "node:path";
import { listWorktrees, openWorktree, removeWorktree, WorktreeError } from "@yoi/pod";
import type { Command } from "../args.ts";
import { CliError, usageError } from "../cli-error.ts";
import { EXIT } from "../exit-codes.ts";
import { colorEnabled, createStyle } from "../style.ts";
import { sanitize, sanitizeLine } from "../terminal-text.ts";
import { writeLines } from "../text-width.ts";

/** A chat with `--worktree`: the same command, its project directory the worktree (created or reused). */
export async function enterWorktree(
  command: Extract<Command, { kind: "chat" }>,
): Promise<Extract<Command, { kind: "chat" }>> {
  if (command.worktree === undefined) return command;
  const from = path.resolve(command.flags.cwd ?? process.cwd());
  try {
    const worktree = await openWorktree(from, command.worktree.name);
    process.stderr.write(
      `yoi: ${worktree.created ? "created" : "working in"} worktree ${sanitizeLine(worktree.name)} (${sanitizeLine(worktree.path)}, branch ${sanitizeLine(worktree.branch ?? "detached")})\n`,
    );
    return { ...command, flags: { ...command.flags, cwd: worktree.path } };
  } catch (error) {
    throw worktreeFailure(error, "--worktree: ");
  }
}

/**
 * A worktree that could not be had, in the CLI's terms: what the user can
 * change (a name, a repository without a commit) is a usage error; git
 * failing is an error of its own, not yoi's (its `fatal:` line says why).
 */
function worktreeFailure(error: unknown, prefix: string): unknown {
  if (!WorktreeError.isInstance(error)) return error;
  const message = `${prefix}${sanitize(error.message)}`;
  return error.code === "git_failed"
    ? new CliError(message, EXIT.error, { cause: error })
    : usageError(message);
}

export async function worktreeCommand(command: Extract<Command, { kind: "worktree" }>): Promise<number> {
  const cwd = path.resolve(command.flags.cwd ?? process.cwd());
  const style = createStyle(colorEnabled(process.stdout));
  try {
    if (command.action === "list") {
      const worktrees = await listWorktrees(cwd, { changes: true });
      if (worktrees.length === 0) {
        writeLines("no worktrees (yoi --worktree [name] starts a session in a new one)");
        return EXIT.ok;
      }
      const rows = worktrees.map((w) => {
        const changes =
          w.changes === undefined
            ? style.red("missing")
            : w.changes === 0
              ? style.dim("clean")
              : style.yellow(`${w.changes} uncommitted change${w.changes === 1 ? "" : "s"}`);
        return `${style.bold(sanitizeLine(w.name))} ${sanitizeLine(w.branch ?? "(detached)")} · ${changes} · ${style.dim(sanitizeLine(w.path))}`;
      });
      writeLines(rows);
      return EXIT.ok;
    }
    const removed = await removeWorktree(cwd, command.name, { force: command.force });
    writeLines(
      `removed worktree ${sanitizeLine(removed.name)}${removed.branch ? `; its branch ${sanitizeLine(removed.branch)} is kept (git branch -D ${sanitizeLine(removed.branch)} deletes it)` : ""}`,
    );
    return EXIT.ok;
  } catch (error) {
    throw worktreeFailure(error, "");
  }
}
