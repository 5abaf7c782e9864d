/**
 * Which instruction files a session reads (the AGENTS.md convention shared
 * by codex, opencode and pi; CLAUDE.md as Claude Code names it): the user's
 * own `~/.yoi/AGENTS.md`, then one file per directory from the scope root
 * down to the working directory, AGENTS.md where there is one, else
 * CLAUDE.md.
 */
import * as path from "node:path";
import { isInside } from "../fs/scoped-fs.ts";

/** File names looked for in each directory, in order of preference. */
export const INSTRUCTION_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

/**
 * The directories from `root` down to `cwd`, both included (root first).
 * Just `[root]` when `cwd` is not inside `root`. Both absolute.
 */
export function directoryChain(root: string, cwd: string): string[] {
  const top = path.resolve(root);
  const bottom = path.resolve(cwd);
  if (!isInside(top, bottom)) return [top];
  const chain = [top];
  const rel = path.relative(top, bottom);
  if (rel === "") return chain;
  let dir = top;
  for (const part of rel.split(path.sep)) {
    dir = path.join(dir, part);
    chain.push(dir);
  }
  return chain;
}
