import { realpath } from "node:fs/promises";
import { resolve } from "node:path";

/** The project a session belongs to: the scope root resolved against cwd, symlinks resolved where it exists. */
export async function projectRoot(cwd: string, scopeRoot: string | undefined): Promise<string> {
  const root = resolve(cwd, scopeRoot ?? ".");
  return realpath(root).catch(() => root);
}
