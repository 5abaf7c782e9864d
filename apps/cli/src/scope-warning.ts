/**
 * Said once at the start when the session may write the user's whole home
 * directory (yoi started in ~, or above it, or given it with --add-dir):
 * everything the user has is then in reach, and the protected paths cover
 * only the files known to run code later. Gemini CLI warns when started in
 * the home directory too.
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";

/**
 * The warning for these write roots, or undefined when none of them holds
 * `home`. `projectRoot`: the scope root, to tell a session started in ~ from
 * one given ~ with --add-dir.
 */
export function broadScopeWarning(
  writeRoots: readonly string[],
  homeDir: string,
  projectRoot: string,
): string | undefined {
  let home = homeDir;
  try {
    home = realpathSync(homeDir); // the roots are real paths
  } catch {}
  const holds = writeRoots.filter((root) => {
    const rel = path.relative(root, home);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  });
  const root = holds[0];
  if (root === undefined) return undefined;
  const where = root === home ? `your home directory (${home})` : `${root}, which holds your home directory`;
  const instead =
    root === projectRoot
      ? "For a project, start yoi in its folder (or pass -C <dir>)."
      : "Unless that is what you want, leave it out of --add-dir and scope.writeRoots.";
  return `yoi may change files anywhere in ${where}: each change asks first unless a rule or mode allows it, and only the start-up, ssh, git and PATH files yoi knows of are protected. ${instead}`;
}
