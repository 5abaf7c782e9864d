import { defineTool } from "@yoi/llm-worker";
import * as z from "zod";
import { type BuiltinToolDeps, guarded, plural } from "./deps.ts";

/** Most entries list_dir shows. */
export const LIST_DIR_MAX_ENTRIES = 1000;

/** The arguments `list_dir` takes . */
export const listDirInput = z.object({
  path: z.string().optional().describe('Directory, relative to the project root. Default ".".'),
});

/** `list_dir`: the entries of one directory; `/` marks directories, `@` symlinks. */
export function listDirTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "list_dir",
    description:
      "List the entries of a directory (not recursive). Directories end with `/`, symlinks with `@`. " +
      `At most ${LIST_DIR_MAX_ENTRIES} entries. Use glob to find files recursively.`,
    inputSchema: listDirInput,
    storeLargeOutput: false,
    async execute({ path }) {
      const dir = path ?? ".";
      const { display, entries } = await guarded(() => deps.view.listDir(dir));
      if (entries.length === 0) return `${display}/ is empty.`;
      // Directories first, then files, each in name order.
      const sorted = [...entries].sort(
        (a, b) =>
          Number(b.kind === "directory") - Number(a.kind === "directory") || (a.name < b.name ? -1 : 1),
      );
      const shown = sorted.slice(0, LIST_DIR_MAX_ENTRIES);
      const suffix = { directory: "/", symlink: "@", file: "", other: "" } as const;
      let out = `${display}/ (${plural(entries.length, "entry", "entries")})\n`;
      for (const e of shown) out += `${e.name}${suffix[e.kind]}\n`;
      if (entries.length > shown.length) {
        out += `[... ${entries.length - shown.length} more entries not shown; use glob with a pattern to narrow]\n`;
      }
      return out;
    },
  });
}
