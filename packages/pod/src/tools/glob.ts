import * as path from "node:path";
import { defineTool, ToolError } from "@yoi/llm-worker";
import picomatch from "picomatch";
import * as z from "zod";
import { ScopeError } from "../fs/scope-error.ts";
import { type BuiltinToolDeps, plural, toToolError } from "./deps.ts";
import { DEFAULT_SKIP_DIRS, VCS_DIRS, type WalkStats, walk } from "./walk.ts";

/** Most paths glob returns. */
export const GLOB_MAX_RESULTS = 200;

/** The arguments `glob` takes . */
export const globInput = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().optional().describe("Directory to search from. Default: the project root."),
  include_ignored: z
    .boolean()
    .optional()
    .describe("Also search files that .gitignore excludes. Default false."),
});

/** `glob`: files matching a pattern, most recently modified first. */
export function globTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "glob",
    description:
      "Find files by glob pattern (`**` spans directories; dot files only when the pattern names them). " +
      `Returns paths relative to the project root, most recently modified first, at most ${GLOB_MAX_RESULTS}. ` +
      "Files .gitignore excludes, .git and node_modules are skipped unless include_ignored (or the search starts inside them); symlinked directories are not followed.",
    inputSchema: globInput,
    storeLargeOutput: false,
    async execute({ pattern, path: dir, include_ignored }, ctx) {
      const fs = deps.view.fs;
      const clean = pattern.replace(/^\.\//, "");
      if (path.isAbsolute(clean)) {
        throw new ToolError(`pattern must be relative (got ${pattern}); pass the directory as path instead`);
      }
      // Start the walk at the pattern's static prefix (`src/**/*.ts` walks `src`).
      const scan = picomatch.scan(clean);
      const startInput = path.join(dir ?? ".", scan.base || ".");
      const start = await fs.stat(startInput).catch((error) => {
        // A missing static prefix just means nothing matches.
        if (ScopeError.isInstance(error) && error.code === "not_found" && scan.base !== "") return undefined;
        throw toToolError(error);
      });
      if (start === undefined) return `No files match ${pattern} (${scan.base} does not exist).`;
      if (start.kind !== "directory") throw new ToolError(`${startInput} is not a directory`);
      const rest = scan.base === "" ? clean : clean.slice(scan.base.length).replace(/^\//, "");
      const isMatch = picomatch(rest || "**", { dot: false });
      const stats: WalkStats = { visited: 0, capped: false };
      const found: Array<{ display: string; mtimeMs: number }> = [];
      let total = 0;
      for await (const entry of walk(
        fs,
        start.path.real,
        {
          signal: ctx.signal,
          gitignore: !include_ignored,
          skipDirs: include_ignored ? VCS_DIRS : DEFAULT_SKIP_DIRS,
        },
        stats,
      )) {
        if (entry.kind !== "file" || !isMatch(entry.rel)) continue;
        total += 1;
        if (found.length >= GLOB_MAX_RESULTS * 5) continue;
        const st = await fs.stat(entry.abs).catch(() => undefined);
        found.push({ display: fs.display(entry.abs), mtimeMs: st?.mtimeMs ?? 0 });
      }
      if (found.length === 0) {
        return `No files match ${pattern}${dir ? ` in ${dir}` : ""}.${stats.capped ? " (search stopped early: too many entries)" : ""}`;
      }
      found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.display < b.display ? -1 : 1));
      const shown = found.slice(0, GLOB_MAX_RESULTS);
      let out = `${shown.map((f) => f.display).join("\n")}\n`;
      if (total > shown.length) {
        out += `[${plural(total, "file")} matched; showing the ${shown.length} most recently modified — narrow the pattern or path]\n`;
      }
      if (stats.capped) out += "[search stopped early: too many entries; narrow the path]\n";
      return out;
    },
  });
}
