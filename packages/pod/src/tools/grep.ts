import * as path from "node:path";
import { defineTool, ToolError } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import picomatch from "picomatch";
import { z } from "zod";
import { ScopeError } from "../scope-error.ts";
import { readUpTo } from "../scoped-fs.ts";
import { classifyBytes, SNIFF_BYTES } from "../text-sniff.ts";
import { type BuiltinToolDeps, plural, toToolError } from "./deps.ts";
import { DEFAULT_SKIP_DIRS, VCS_DIRS, type WalkStats, walk } from "./walk.ts";

export const GREP_DEFAULT_MAX_MATCHES = 100;
export const GREP_MAX_MATCHES = 2000;
/** Files larger than this are skipped (with a note). */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Files read in parallel ahead of the matcher. */
const GREP_READ_AHEAD = 8;
/** Longest matching line shown, in characters. */
export const GREP_MAX_LINE_LENGTH = 300;

const input = z.object({
  pattern: z.string().min(1).describe("JavaScript regular expression, e.g. `function\\s+\\w+` or `TODO`."),
  path: z.string().optional().describe("File or directory to search. Default: the project root."),
  glob: z
    .string()
    .optional()
    .describe('Only files matching this glob, e.g. "*.ts" (matched against the file name) or "src/**/*.ts".'),
  ignore_case: z.boolean().optional().describe("Case-insensitive match. Default false."),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .optional()
    .describe(
      '"content" (default): matching lines as path:line:text; "files_with_matches": paths; "count": path:count.',
    ),
  context: z
    .number()
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe("Lines of context around each match (content mode)."),
  max_matches: z
    .number()
    .int()
    .min(1)
    .max(GREP_MAX_MATCHES)
    .optional()
    .describe(`Stop after this many matching lines. Default ${GREP_DEFAULT_MAX_MATCHES}.`),
  include_ignored: z
    .boolean()
    .optional()
    .describe("Also search files that .gitignore excludes. Default false."),
});

function compile(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? "i" : "";
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new ToolError(`invalid regular expression /${pattern}/: ${(error as Error).message}`);
    }
  }
}

/**
 * A whole-file pre-check: with the `m` flag a line-wise match implies a
 * whole-text match, so a file the pre-check misses has no matching line and
 * is skipped without splitting it. Lookarounds may look across a newline in
 * the whole text but not in a line, so patterns with them get no pre-check.
 */
function prefilterOf(re: RegExp): RegExp | undefined {
  if (/\(\?<?[=!]/.test(re.source)) return undefined;
  return new RegExp(re.source, `${re.flags}m`);
}

function cut(line: string): string {
  return line.length > GREP_MAX_LINE_LENGTH ? `${line.slice(0, GREP_MAX_LINE_LENGTH)}…` : line;
}

/** `grep`: regex search over text files in scope, capped, binary files skipped. */
export function grepTool(deps: BuiltinToolDeps) {
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a JavaScript regular expression. Skips binary files, .git, node_modules and what .gitignore excludes (include_ignored to search those). " +
      `Returns path:line:text (lines cut at ${GREP_MAX_LINE_LENGTH} characters), at most max_matches lines ` +
      `(default ${GREP_DEFAULT_MAX_MATCHES}). Filter files with glob; use output_mode "files_with_matches" to list files.`,
    inputSchema: input,
    storeLargeOutput: false,
    async execute(args, ctx) {
      const fs = deps.view.fs;
      const re = compile(args.pattern, args.ignore_case ?? false);
      const prefilter = prefilterOf(re);
      const mode = args.output_mode ?? "content";
      const maxMatches = args.max_matches ?? GREP_DEFAULT_MAX_MATCHES;
      const context = mode === "content" ? (args.context ?? 0) : 0;
      const filter = args.glob
        ? picomatch(args.glob, { dot: true, basename: !args.glob.includes("/") })
        : undefined;
      const target = args.path ?? ".";
      const start = await fs.stat(target).catch((error) => {
        throw toToolError(error);
      });
      const files: AsyncIterable<{ rel: string; abs: string }> =
        start.kind === "directory"
          ? (async function* () {
              const stats: WalkStats = { visited: 0, capped: false };
              for await (const e of walk(
                fs,
                start.path.real,
                {
                  signal: ctx.signal,
                  gitignore: !args.include_ignored,
                  skipDirs: args.include_ignored ? VCS_DIRS : DEFAULT_SKIP_DIRS,
                },
                stats,
              )) {
                if (e.kind === "file" && (!filter || filter(e.rel))) yield e;
              }
            })()
          : (async function* () {
              yield { rel: path.basename(start.path.real), abs: start.path.real };
            })();
      let out = "";
      let matches = 0;
      let filesMatched = 0;
      let skippedBinary = 0;
      let skippedLarge = 0;
      let stopped = false;
      const budget = TOOL_OUTPUT_MAX_BYTES - 512;
      type Loaded =
        | { kind: "text"; text: string }
        | { kind: "binary" }
        | { kind: "large" }
        | { kind: "gone" };
      const load = async (file: { abs: string }): Promise<Loaded> => {
        try {
          const handle = await fs.openRead(file.abs);
          try {
            if (handle.stat.size > GREP_MAX_FILE_BYTES) return { kind: "large" };
            const bytes = await readUpTo(handle.handle, handle.stat.size);
            const head = bytes.subarray(0, SNIFF_BYTES);
            if (classifyBytes(head, bytes.length <= SNIFF_BYTES).kind === "binary") return { kind: "binary" };
            return { kind: "text", text: new TextDecoder("utf-8").decode(bytes) };
          } finally {
            await handle.close();
          }
        } catch (error) {
          // Inside a walk, a file that vanished or turned out of scope is skipped.
          if (error instanceof ScopeError && start.kind === "directory") return { kind: "gone" };
          throw toToolError(error);
        }
      };
      // Read a window of files in parallel (I/O overlaps), then match them in walk order (stable output).
      async function* loaded(): AsyncGenerator<{ file: { abs: string }; result: Loaded }> {
        let window: Array<{ abs: string }> = [];
        const flush = async () => {
          const results = await Promise.all(window.map(load));
          const out = window.map((file, i) => ({ file, result: results[i]! }));
          window = [];
          return out;
        };
        for await (const file of files) {
          window.push(file);
          if (window.length >= GREP_READ_AHEAD) yield* await flush();
        }
        if (window.length > 0) yield* await flush();
      }
      for await (const { file, result } of loaded()) {
        ctx.signal.throwIfAborted();
        if (result.kind === "binary") skippedBinary += 1;
        if (result.kind === "large") skippedLarge += 1;
        if (result.kind !== "text") continue;
        const text = result.text;
        if (prefilter !== undefined && !prefilter.test(text)) continue;
        const display = fs.display(file.abs);
        const lines = text.split(/\r?\n/);
        let count = 0;
        let lastShown = -1;
        for (let i = 0; i < lines.length; i++) {
          if (!re.test(lines[i]!)) continue;
          count += 1;
          matches += 1;
          if (mode === "content") {
            const from = Math.max(i - context, lastShown + 1);
            if (context > 0 && lastShown >= 0 && from > lastShown + 1) out += "--\n";
            for (let j = from; j <= Math.min(i + context, lines.length - 1); j++) {
              if (j === lines.length - 1 && lines[j] === "") break;
              out += `${display}${j === i ? ":" : "-"}${j + 1}${j === i ? ":" : "-"}${cut(lines[j]!)}\n`;
              lastShown = j;
            }
          }
          if (mode === "files_with_matches") break;
          if (mode === "content" && (matches >= maxMatches || Buffer.byteLength(out) > budget)) {
            stopped = true;
            break;
          }
        }
        if (count > 0) {
          filesMatched += 1;
          if (mode === "files_with_matches") out += `${display}\n`;
          if (mode === "count") out += `${display}:${count}\n`;
          if (mode !== "content" && (filesMatched >= maxMatches || Buffer.byteLength(out) > budget))
            stopped = true;
        }
        if (stopped) break;
      }
      const notes: string[] = [];
      if (stopped) {
        notes.push(
          `stopped after ${mode === "content" ? plural(matches, "matching line") : plural(filesMatched, "file")} (max_matches=${maxMatches} or output cap) — narrow the pattern, path or glob`,
        );
      }
      if (skippedBinary > 0) notes.push(`${plural(skippedBinary, "binary file")} skipped`);
      if (skippedLarge > 0)
        notes.push(`${plural(skippedLarge, "file")} over ${GREP_MAX_FILE_BYTES} bytes skipped`);
      if (matches === 0) {
        return `No matches for /${args.pattern}/ in ${target}.${notes.length ? ` (${notes.join("; ")})` : ""}`;
      }
      if (!stopped) {
        notes.unshift(
          mode === "files_with_matches"
            ? `${plural(filesMatched, "file")} with matches`
            : `${plural(matches, "matching line")} in ${plural(filesMatched, "file")}`,
        );
      }
      return `${out}[${notes.join("; ")}]\n`;
    },
  });
}
