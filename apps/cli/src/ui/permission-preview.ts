/**
 * What a permission question shows under its one-line summary: a bash
 * script's lines; for edit_file and write_file the diff the call would make
 * to the file as it is now (line numbers, context), or, without the diff
 * module, the text replaced and the text written.
 */
import type { PermissionRequest } from "@yoi/pod";
import type { Style } from "../style.ts";
import type { RichOutput } from "./rich-output.ts";

/** Diff lines shown in a question before the rest is counted. */
const PREVIEW_LINES = 30;

export function permissionPreview(
  request: PermissionRequest,
  style: Style,
  rich: RichOutput | undefined,
  root: string,
): string | undefined {
  const args = request.args as Record<string, unknown> | undefined;
  if (!args || typeof args !== "object") return undefined;
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  // MCP tools have no path or command to show: their arguments, as JSON.
  if (request.tool.startsWith("mcp__")) {
    if (Object.keys(args).length === 0) return undefined;
    const json = JSON.stringify(args);
    return style.dim(`    ${json.length > 300 ? `${json.slice(0, 297)}...` : json}`);
  }
  if (request.tool === "bash") {
    const command = str("command");
    if (command === undefined || !command.includes("\n")) return undefined;
    return style.dim(
      command
        .split("\n")
        .slice(0, 6)
        .map((l) => `    ${l}`)
        .join("\n"),
    );
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
    if (after !== undefined && head !== undefined) {
      const view = rich.renderDiff(before ?? "", after, style, PREVIEW_LINES);
      return [
        style.dim(`    ${head}: +${view.added} -${view.removed}`),
        ...view.lines.map((l) => `    ${l}`),
        ...(view.hidden > 0 ? [style.dim(`    … ${view.hidden} more lines`)] : []),
      ].join("\n");
    }
  }
  const cut = (t: string) => (t.length > 200 ? `${t.slice(0, 197)}...` : t);
  if (request.tool === "edit_file" && str("old_string") !== undefined && str("new_string") !== undefined) {
    const from = cut(str("old_string") ?? "").split("\n");
    const to = cut(str("new_string") ?? "").split("\n");
    return style.dim([...from.map((l) => `    - ${l}`), ...to.map((l) => `    + ${l}`)].join("\n"));
  }
  if (request.tool === "write_file" && str("content") !== undefined) {
    const lines = (str("content") ?? "").replace(/\n$/, "").split("\n");
    const shown = lines.slice(0, 20).map((l) => `    + ${l}`);
    if (lines.length > 20) shown.push(`    … ${lines.length - 20} more lines`);
    return style.dim(shown.join("\n"));
  }
  return undefined;
}
