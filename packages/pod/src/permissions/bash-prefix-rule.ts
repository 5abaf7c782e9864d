/**
 * The "always allow" rules a permission prompt offers for a bash line: per
 * simple command, the command name plus its subcommand, then `*`
 * (`git status -s` -> `git status *`, `ls -la` -> `ls *`), so an approval
 * of `git log | head` is `git log *` and `head *`, each of which covers the
 * same command in any other line. None for a line with a redirection, an
 * expansion or a substitution, nor for a command that runs other commands
 * or programs given as text (`xargs`, `sudo`, `bash`, `find`, `sed`, `awk`,
 * `python`): a prefix would vouch for more than the user saw.
 */
import { analyzeShell } from "./shell-parse.ts";

/** A word that reads like a subcommand (`status`, `run`), not a flag, path or value. */
const SUBCOMMAND = /^[a-z][a-z0-9-]*$/;

/** Commands whose arguments are another command, a script or a program: never generalised. */
const RUNS_OTHERS = new Set([
  "bash",
  "sh",
  "dash",
  "zsh",
  "ksh",
  "fish",
  "eval",
  "exec",
  "source",
  ".",
  "sudo",
  "doas",
  "env",
  "xargs",
  "nohup",
  "time",
  "timeout",
  "nice",
  "watch",
  "command",
  "builtin",
  "find",
  "parallel",
  "sed",
  "awk",
  "gawk",
  "perl",
  "python",
  "python3",
  "node",
  "deno",
  "bun",
  "ruby",
  "php",
  "lua",
]);

/** The prefix rule (a `match` glob for `bash`) for a line that is one simple command, or undefined. */
export async function bashPrefixRule(command: string): Promise<string | undefined> {
  const rules = await bashPrefixRules(command);
  return rules?.length === 1 && !/[;&|]/.test(command) ? rules[0] : undefined;
}

/**
 * One prefix rule per simple command of `line` (duplicates once), or
 * undefined when none is safe to offer for the whole line.
 */
export async function bashPrefixRules(line: string): Promise<string[] | undefined> {
  const text = line.trim();
  if (text === "" || /[`$\n]/.test(text)) return undefined;
  const analysis = await analyzeShell(text);
  if (analysis.kind !== "parsed" || analysis.commands.length === 0 || analysis.writes.length > 0)
    return undefined;
  const rules: string[] = [];
  for (const command of analysis.commands) {
    const rule = prefixOf(command);
    if (rule === undefined) return undefined;
    if (!rules.includes(rule)) rules.push(rule);
  }
  return rules;
}

function prefixOf(command: string): string | undefined {
  // A command with parentheses, braces or redirections left in it is not a plain `name args` line.
  if (/[(){}<>]/.test(command)) return undefined;
  const words = command.trim().split(/\s+/);
  const name = words[0];
  if (name === undefined || !/^[A-Za-z0-9_./-]+$/.test(name) || RUNS_OTHERS.has(name)) return undefined;
  const sub = words[1];
  return sub !== undefined && SUBCOMMAND.test(sub) ? `${name} ${sub} *` : `${name} *`;
}
