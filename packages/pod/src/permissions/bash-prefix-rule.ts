/**
 * The "always allow" rule a permission prompt offers for a bash line: the
 * command name plus its subcommand, then `*` (`git status -s` ->
 * `git status *`, `ls -la` -> `ls *`). Only for a line that is one simple
 * command without redirections or substitutions: for anything else a prefix
 * would vouch for more than the user saw, so there is none.
 */
import { analyzeShell } from "./shell-parse.ts";

/** A word that reads like a subcommand (`status`, `run`), not a flag, path or value. */
const SUBCOMMAND = /^[a-z][a-z0-9-]*$/;

/** The prefix rule (a `match` glob for `bash`) for `command`, or undefined when none is safe to offer. */
export async function bashPrefixRule(command: string): Promise<string | undefined> {
  const line = command.trim();
  if (line === "" || /[`$]/.test(line)) return undefined;
  const analysis = await analyzeShell(line);
  if (analysis.kind !== "parsed" || analysis.commands.length !== 1 || analysis.writes.length > 0)
    return undefined;
  if (analysis.commands[0] !== line) return undefined;
  const words = line.split(/\s+/);
  const name = words[0];
  if (name === undefined || !/^[A-Za-z0-9_./-]+$/.test(name) || name.includes("=")) return undefined;
  const sub = words[1];
  return sub !== undefined && SUBCOMMAND.test(sub) ? `${name} ${sub} *` : `${name} *`;
}
