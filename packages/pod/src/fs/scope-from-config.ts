import * as path from "node:path";
import type { Config } from "@yoi/manifest";
import { ScopedFs } from "./scoped-fs.ts";

/**
 * The scope a config gives a session started in `cwd`: the root is
 * `scope.root` (default: `cwd`), writable unless `scope.writeRoots` says
 * otherwise, plus `scope.readRoots`; relative entries resolve against the
 * root, and relative paths start there.
 */
export function scopeFromConfig(scope: Config["scope"], cwd: string): Promise<ScopedFs> {
  const root = path.resolve(cwd, scope.root ?? ".");
  const resolveAll = (dirs: readonly string[] | undefined) => (dirs ?? []).map((d) => path.resolve(root, d));
  return ScopedFs.create({
    writeRoots: scope.writeRoots ? resolveAll(scope.writeRoots) : [root],
    readRoots: resolveAll(scope.readRoots),
    cwd: root,
  });
}
