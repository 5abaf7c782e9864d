import { defineTool, ToolError } from "@yoi/llm-worker";
import * as z from "zod";
import type { ScopedStat } from "../fs/scoped-fs.ts";
import { isSandboxPlaceholder } from "../sandbox/bwrap.ts";
import { type BuiltinToolDeps, guarded, plural, withDiagnostics } from "./deps.ts";

/** The arguments `write_file` takes . */
export const writeFileInput = z.object({
  path: z
    .string()
    .describe("File path, relative to the project root. Missing parent directories are created."),
  content: z.string().describe("The complete new content of the file."),
});

function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** Refusal text when a file changed or was never read. */
export function staleMessage(path: string, neverRead: boolean): string {
  return neverRead
    ? `${path} exists but has not been read in this session; read_file it first so you do not overwrite content you have not seen`
    : `${path} changed on disk since you last read it; read_file it again before changing it`;
}

/**
 * Refuses to change a file the session has not read, or one that changed on
 * disk since it was read (another process, a /rewind, a resumed session):
 * the model would overwrite content it has not seen.
 */
export function assertFresh(deps: BuiltinToolDeps, path: string, st: ScopedStat): void {
  if (!deps.reads.isFresh(st.path.real, st))
    throw new ToolError(staleMessage(path, deps.reads.get(st.path.real) === undefined));
}

/** What replacing an existing file needs: not a directory, read in this session and unchanged since. */
async function replaceable(deps: BuiltinToolDeps, path: string): Promise<ScopedStat> {
  const st = await guarded(() => deps.view.fs.stat(path, "write"));
  if (st.kind === "directory") throw new ToolError(`${path} is a directory`);
  assertFresh(deps, path, st);
  return st;
}

/**
 * Refuses a protected file (`.envrc`, `.mcp.json`, ...) that a running
 * sandboxed command keeps from being created: an empty directory stands
 * there until the command ends, and the write would only fail on it.
 */
function assertNotHeld(path: string, real: string): void {
  if (isSandboxPlaceholder(real))
    throw new ToolError(
      `${path} cannot be created while a sandboxed bash command is running: the sandbox keeps an empty placeholder there so that the command cannot create it. Write it once the command has ended (kill_bash stops a background one).`,
    );
}

/** `write_file`: creates or replaces a whole file, atomically, inside the writable scope. */
export function writeFileTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "write_file",
    description:
      "Create a file or replace its whole content (atomic). An existing file must have been read with read_file " +
      "in this session and be unchanged since. Prefer edit_file for changes to existing files.",
    inputSchema: writeFileInput,
    storeLargeOutput: false,
    // Before the permission question: outside the scope, or a file not read (or changed since), is refused anyway.
    async check({ path }) {
      const resolved = await guarded(() => deps.view.fs.resolve(path, "write"));
      assertNotHeld(path, resolved.real);
      if (resolved.exists) await replaceable(deps, path);
    },
    async execute({ path, content }, ctx) {
      const fs = deps.view.fs;
      const resolved = await guarded(() => fs.resolve(path, "write"));
      assertNotHeld(path, resolved.real);
      const written = await deps.writeLocks.run(resolved.real, async () => {
        let existed = false;
        // What the file must still be when the write lands: another process's change in between is never overwritten.
        let expect: "absent" | { size: number; mtimeMs: number } = "absent";
        if (resolved.exists) {
          const st = await replaceable(deps, path);
          existed = true;
          expect = { size: st.size, mtimeMs: st.mtimeMs };
        }
        const target = await guarded(() => deps.view.writeText(path, content, { expect }));
        const after = await guarded(() => fs.stat(target.real, "write"));
        deps.reads.record(after.path.real, path, after);
        const size = Buffer.byteLength(content);
        const message = `${existed ? "Overwrote" : "Created"} ${fs.display(after.path.real)} (${plural(size, "byte")}, ${plural(countLines(content), "line")}).`;
        return { message, real: after.path.real, text: content };
      });
      // Outside the file's lock: waiting for a language server does not hold up the next edit.
      return withDiagnostics(deps, written, ctx.signal);
    },
  });
}
