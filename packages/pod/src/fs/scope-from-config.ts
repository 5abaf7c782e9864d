import { homedir } from "node:os";
import * as path from "node:path";
import { type Config, privateUserFiles } from "@yoi/manifest";
import { ScopedFs } from "./scoped-fs.ts";

/**
 * The scope a config gives a session started in `cwd`: the root is
 * `scope.root` (default: `cwd`), writable unless `scope.writeRoots` says
 * otherwise, plus `scope.readRoots`; relative entries resolve against the
 * root, and relative paths start there. `hidden`: private files and
 * directories no tool may open even inside the roots (see `privatePaths`).
 */
export function scopeFromConfig(
  scope: Config["scope"],
  cwd: string,
  hidden: readonly string[] = [],
): Promise<ScopedFs> {
  const root = path.resolve(cwd, scope.root ?? ".");
  const resolveAll = (dirs: readonly string[] | undefined) => (dirs ?? []).map((d) => path.resolve(root, d));
  return ScopedFs.create({
    writeRoots: scope.writeRoots ? resolveAll(scope.writeRoots) : [root],
    readRoots: resolveAll(scope.readRoots),
    cwd: root,
    hidden,
  });
}

/**
 * What no tool of a session may open, whatever its scope holds: the session
 * store of `dataDir` (every project's conversations and tool outputs) and the
 * user's saved keys and prompt history. They matter where a root holds them
 * (a session started in the home directory); elsewhere the scope keeps them
 * out already, and the bash sandbox hides the data directory as well.
 */
export function privatePaths(dataDir: string, home: string = homedir()): string[] {
  return [path.join(dataDir, "sessions"), path.join(dataDir, "blobs"), ...privateUserFiles(home)];
}
