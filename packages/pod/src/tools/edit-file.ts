import { defineTool, ToolError } from "@yoi/llm-worker";
import * as z from "zod";
import type { ScopedStat } from "../fs/scoped-fs.ts";
import { classifyBytes, SNIFF_BYTES } from "../fs/text-sniff.ts";
import { type BuiltinToolDeps, guarded, plural, withDiagnostics } from "./deps.ts";
import { assertFresh } from "./write-file.ts";

/** Largest file edit_file changes. */
export const EDIT_FILE_MAX_BYTES = 10 * 1024 * 1024;

/** The arguments `edit_file` takes . */
export const editFileInput = z.object({
  path: z.string().describe("File to edit, relative to the project root."),
  old_string: z.string().describe("The exact text to replace (whitespace and indentation included)."),
  new_string: z.string().describe("The replacement text."),
  replace_all: z
    .boolean()
    .optional()
    .describe("Replace every occurrence. Default false: old_string must be unique."),
});

function occurrences(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length))
    at.push(i);
  return at;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The arguments edit_file refuses before it looks at the file. */
function assertChange(old_string: string, new_string: string): void {
  if (old_string === "")
    throw new ToolError("old_string is empty; use write_file to create or replace a whole file");
  if (old_string === new_string)
    throw new ToolError("old_string and new_string are the same; nothing to change");
}

/** What editing a file needs: a regular file within the size limit, read in this session and unchanged since. */
async function editable(deps: BuiltinToolDeps, path: string): Promise<ScopedStat> {
  const st = await guarded(() => deps.view.fs.stat(path, "write"));
  if (st.kind !== "file") throw new ToolError(`${path} is not a regular file`);
  if (st.size > EDIT_FILE_MAX_BYTES) {
    throw new ToolError(
      `${path} is ${st.size} bytes; edit_file changes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
    );
  }
  assertFresh(deps, path, st);
  return st;
}

/** `edit_file`: exact string replacement in a file the session has read. */
export function editFileTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "edit_file",
    description:
      "Replace exact text in a file. The file must have been read with read_file in this session and be unchanged since. " +
      "old_string must match exactly once (include surrounding lines to make it unique) unless replace_all is true.",
    inputSchema: editFileInput,
    storeLargeOutput: false,
    // Before the permission question: what execute would refuse without reading the file.
    async check({ path, old_string, new_string }) {
      assertChange(old_string, new_string);
      await guarded(() => deps.view.fs.resolve(path, "write"));
      await editable(deps, path);
    },
    async execute({ path, old_string, new_string, replace_all }, ctx) {
      assertChange(old_string, new_string);
      const fs = deps.view.fs;
      const resolved = await guarded(() => fs.resolve(path, "write"));
      const edited = await deps.writeLocks.run(resolved.real, async () => {
        const st = await editable(deps, path);
        const bytes = await guarded(() => deps.view.readBytes(path));
        const cls = classifyBytes(bytes.subarray(0, SNIFF_BYTES), bytes.length <= SNIFF_BYTES);
        if (cls.kind === "binary")
          throw new ToolError(`${path} ${cls.reason}; edit_file only changes UTF-8 text`);
        let text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
        const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
        text = text.slice(bom.length);
        let oldText = old_string;
        let newText = new_string;
        let at = occurrences(text, oldText);
        // Models write \n; files may use \r\n.
        if (at.length === 0 && text.includes("\r\n") && oldText.includes("\n") && !oldText.includes("\r")) {
          oldText = oldText.replace(/\n/g, "\r\n");
          newText = newText.replace(/\r?\n/g, "\r\n");
          at = occurrences(text, oldText);
        }
        if (at.length === 0) {
          throw new ToolError(
            `old_string was not found in ${path}; copy the exact text from read_file output (without the line-number prefix), whitespace included`,
          );
        }
        if (at.length > 1 && !replace_all) {
          const lines = at.slice(0, 10).map((i) => lineOf(text, i));
          throw new ToolError(
            `old_string occurs ${at.length} times in ${path} (lines ${lines.join(", ")}${at.length > 10 ? ", ..." : ""}); include more surrounding text to make it unique, or set replace_all`,
          );
        }
        const updated = replace_all
          ? text.split(oldText).join(newText)
          : text.slice(0, at[0]!) + newText + text.slice(at[0]! + oldText.length);
        await guarded(() =>
          deps.view.writeText(path, bom + updated, { expect: { size: st.size, mtimeMs: st.mtimeMs } }),
        );
        const after = await guarded(() => fs.stat(path, "write"));
        deps.reads.record(after.path.real, path, after);
        // Show the edited region so the model can check it without another read.
        const first = at[0]!;
        const startLine = lineOf(updated, first);
        const endLine = startLine + (newText.match(/\n/g)?.length ?? 0);
        const all = updated.split(/\r?\n/);
        const from = Math.max(1, startLine - 3);
        const to = Math.min(all.length, endLine + 3, from + 40);
        let snippet = "";
        for (let n = from; n <= to; n++) snippet += `${String(n).padStart(6)}\t${all[n - 1]}\n`;
        const count = replace_all ? at.length : 1;
        const message = `Edited ${fs.display(after.path.real)}: replaced ${plural(count, "occurrence")}.\n${snippet}`;
        return { message, real: after.path.real, text: bom + updated };
      });
      // Outside the file's lock: waiting for a language server does not hold up the next edit.
      return withDiagnostics(deps, edited, ctx.signal);
    },
  });
}
