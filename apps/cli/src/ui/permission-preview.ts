/**
 * What a permission question shows under its one-line summary: a bash
 * script's lines; for edit_file and write_file the diff the call would make
 * to the file as it is now (line numbers, context), or, without the diff
 * module, the text replaced and the text written; an MCP tool's arguments
 * as JSON. The lines are whole: the question fits them to the screen
 * (permission-question.ts).
 */
import type { PermissionRequest } from "@yoi/pod";
import type { Style } from "../style.ts";
import type { RichOutput } from "./rich-output.ts";

/** Diff lines made for a question (the screen may show fewer). */
const PREVIEW_LINES = 200;
/** A write or edit larger than this is shown as its text, not diffed (a diff of megabytes takes seconds). */
const DIFF_MAX_CHARS = 256 * 1024;

/** Preview lines, at most the `maxLines` asked for, and how many more there were. */
export interface PreviewLines {
  lines: string[];
  hidden: number;
}

export function permissionPreview(
  request: PermissionRequest,
  style: Style,
  rich: RichOutput | undefined,
  root: string,
  maxLines: number = PREVIEW_LINES,
): PreviewLines | undefined {
  const args = request.args as Record<string, unknown> | undefined;
  if (!args || typeof args !== "object") return undefined;
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  const first = (lines: readonly string[], show: (line: string) => string): PreviewLines => ({
    lines: lines.slice(0, maxLines).map(show),
    hidden: Math.max(0, lines.length - maxLines),
  });
  // MCP tools have no path or command to show: their arguments, as JSON.
  if (request.tool.startsWith("mcp__")) {
    if (Object.keys(args).length === 0) return undefined;
    return { lines: [style.dim(`    ${JSON.stringify(args)}`)], hidden: 0 };
  }
  if (request.tool === "bash") {
    const command = str("command");
    if (command === undefined || !command.includes("\n")) return undefined;
    return first(command.split("\n"), (l) => style.dim(`    ${l}`));
  }
  const path = str("path");
  if (rich && path !== undefined) {
    const before = rich.snapshotFile(root, path);
    let after: string | undefined;
    let head: string | undefined;
    if (request.tool === "write_file" && str("content") !== undefined) {
      after = str("content");
      head = before === undefined ? "new file" : "overwrites the file";
    } else if (request.tool === "edit_file" && before !== undefined) {
      const from = str("old_string");
      const to = str("new_string");
      // Only when the edit would apply as the tool applies it; otherwise the plain old/new text below.
      if (from && to !== undefined && before.includes(from)) {
        after = args.replace_all === true ? before.replaceAll(from, to) : before.replace(from, to);
        head = "edit";
      }
    }
    if (after !== undefined && head !== undefined && after.length <= DIFF_MAX_CHARS) {
      const view = rich.renderDiff(before ?? "", after, style, Math.max(0, maxLines - 1));
      return {
        lines: [
          style.dim(`    ${head}: +${view.added} -${view.removed}`),
          ...view.lines.map((l) => `    ${l}`),
        ],
        hidden: view.hidden,
      };
    }
  }
  if (request.tool === "edit_file" && str("old_string") !== undefined && str("new_string") !== undefined) {
    const from = (str("old_string") ?? "").split("\n").map((l) => `- ${l}`);
    const to = (str("new_string") ?? "").split("\n").map((l) => `+ ${l}`);
    return first([...from, ...to], (l) => style.dim(`    ${l}`));
  }
  if (request.tool === "write_file" && str("content") !== undefined) {
    return first((str("content") ?? "").replace(/\n$/, "").split("\n"), (l) => style.dim(`    + ${l}`));
  }
  return undefined;
}
