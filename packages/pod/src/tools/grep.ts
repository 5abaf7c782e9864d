import type { FileHandle } from "node:fs/promises";
import * as path from "node:path";
import { type FileMatch, GREP_TIMEOUT_MS, GrepMatcher } from "@yoi/compaction";
import { defineTool, ToolError } from "@yoi/llm-worker";
import { TOOL_OUTPUT_MAX_BYTES } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import picomatch from "picomatch";
import * as z from "zod";
import { ScopeError } from "../fs/scope-error.ts";
import { classifyBytes, SNIFF_BYTES } from "../fs/text-sniff.ts";
import { type BuiltinToolDeps, plural, toToolError } from "./deps.ts";
import { DEFAULT_SKIP_DIRS, VCS_DIRS, type WalkStats, walk } from "./walk.ts";

export const GREP_DEFAULT_MAX_MATCHES = 100;
export const GREP_MAX_MATCHES = 2000;
/** Files larger than this are skipped (with a note). */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Files read in parallel ahead of the matcher. */
const GREP_READ_AHEAD = 8;
/** Windows (of GREP_READ_AHEAD files) queued to the matcher thread ahead of the one awaited. */
const GREP_MATCH_AHEAD = 4;
/** ... and at most this many bytes of them. */
const GREP_MATCH_AHEAD_BYTES = 32 * 1024 * 1024;
/** Longest matching line shown, in characters. */
export const GREP_MAX_LINE_LENGTH = 300;

/** The arguments `grep` takes . */
export const grepInput = z.object({
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
      // V8 repeats the pattern ("Invalid regular expression: /(a/: Unterminated group"): the reason alone.
      const reason = errorMessage(error).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "");
      throw new ToolError(
        `invalid regular expression /${pattern}/: ${reason}. It is a JavaScript regular expression: put a backslash before ( ) [ ] { } . * + ? ^ $ | \\ to match one literally.`,
      );
    }
  }
}

/**
 * Whether a whole-file pre-check is sound: with the `m` flag a line-wise
 * match implies a whole-text match, so a file the pre-check misses has no
 * matching line and is skipped without splitting it. Lookarounds may look
 * across a newline in the whole text but not in a line, so patterns with
 * them get no pre-check.
 */
function hasPrefilter(re: RegExp): boolean {
  return !/\(\?<?[=!]/.test(re.source);
}

/**
 * Reads up to `size` bytes into a buffer of its own (not a slice of Node's
 * shared pool), so it can be transferred to the matcher thread.
 */
async function readOwned(handle: FileHandle, size: number): Promise<Uint8Array> {
  const buf = Buffer.allocUnsafeSlow(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buf, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buf.subarray(0, filled);
}

/** Options of the `grep` tool. */
export interface GrepToolOptions {
  /**
   * Longest time the regular expression may run on one file before the
   * search is stopped with an error telling the model to simplify the
   * pattern (catastrophic backtracking). Default `GREP_TIMEOUT_MS` (10 s).
   * The whole call is bounded by the worker's tool timeout and its signal.
   */
  timeoutMs?: number;
}

/**
 * `grep`: regex search over text files in scope, capped, binary files
 * skipped. Files are read through ScopedFs on the main thread; the regex
 * runs in a worker thread with a time limit (`GrepMatcher` of @yoi/compaction).
 */
export function grepTool(deps: BuiltinToolDeps, options: GrepToolOptions = {}) {
  if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
    throw new RangeError(
      `grep timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}`,
    );
  }
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a JavaScript regular expression. Skips binary files, .git, node_modules and what .gitignore excludes (include_ignored to search those). " +
      `Returns path:line:text (lines cut at ${GREP_MAX_LINE_LENGTH} characters), at most max_matches lines ` +
      `(default ${GREP_DEFAULT_MAX_MATCHES}). Filter files with glob; use output_mode "files_with_matches" to list files.`,
    inputSchema: grepInput,
    storeLargeOutput: false,
    async execute(args, ctx) {
      const fs = deps.view.fs;
      const re = compile(args.pattern, args.ignore_case ?? false);
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
        | { kind: "text"; bytes: Uint8Array }
        | { kind: "binary" }
        | { kind: "large" }
        | { kind: "gone" };
      const load = async (file: { abs: string }): Promise<Loaded> => {
        try {
          const handle = await fs.openRead(file.abs);
          try {
            if (handle.stat.size > GREP_MAX_FILE_BYTES) return { kind: "large" };
            const bytes = await readOwned(handle.handle, handle.stat.size);
            const head = bytes.subarray(0, SNIFF_BYTES);
            if (classifyBytes(head, bytes.length <= SNIFF_BYTES).kind === "binary") return { kind: "binary" };
            return { kind: "text", bytes };
          } finally {
            await handle.close();
          }
        } catch (error) {
          // Inside a walk, a file that vanished or turned out of scope is skipped.
          if (ScopeError.isInstance(error) && start.kind === "directory") return { kind: "gone" };
          throw toToolError(error);
        }
      };
      // Read a window of files in parallel (I/O overlaps), then queue it to the matcher in walk order.
      async function* loaded(): AsyncGenerator<Array<{ file: { abs: string }; result: Loaded }>> {
        let window: Array<{ abs: string }> = [];
        const flush = async () => {
          const results = await Promise.all(window.map(load));
          const out = window.map((file, i) => ({ file, result: results[i]! }));
          window = [];
          return out;
        };
        for await (const file of files) {
          window.push(file);
          if (window.length >= GREP_READ_AHEAD) yield await flush();
        }
        if (window.length > 0) yield await flush();
      }
      // The regex runs in a worker thread (GrepMatcher): the contents go there, never a path.
      const matcher = new GrepMatcher(
        {
          source: re.source,
          flags: re.flags,
          prefilter: hasPrefilter(re),
          mode,
          context,
          maxHits: maxMatches,
          budget,
          maxLineLength: GREP_MAX_LINE_LENGTH,
        },
        { timeoutMs: options.timeoutMs ?? GREP_TIMEOUT_MS, signal: ctx.signal },
      );
      // One window: its files in walk order and the matcher's results for its text files.
      type Window = {
        files: Array<{ display: string; kind: Loaded["kind"] }>;
        bytes: number;
        results: Promise<FileMatch[]> | undefined;
      };
      const queue: Window[] = [];
      let queuedBytes = 0;
      const consume = async (window: Window): Promise<void> => {
        queuedBytes -= window.bytes;
        const results = (await window.results) ?? [];
        let next = 0;
        for (const { display, kind } of window.files) {
          if (kind === "binary") skippedBinary += 1;
          if (kind === "large") skippedLarge += 1;
          if (kind !== "text") continue;
          const { count, chunks } = results[next++]!;
          if (mode === "content") {
            for (const chunk of chunks) {
              matches += 1;
              if (chunk.gap) out += "--\n";
              for (let k = 0; k < chunk.lines.length; k++) {
                const j = chunk.from + k;
                const sep = j === chunk.hit ? ":" : "-";
                out += `${display}${sep}${j + 1}${sep}${chunk.lines[k]}\n`;
              }
              if (matches >= maxMatches || Buffer.byteLength(out) > budget) {
                stopped = true;
                break;
              }
            }
          } else {
            matches += count;
          }
          if (count > 0) {
            filesMatched += 1;
            if (mode === "files_with_matches") out += `${display}\n`;
            if (mode === "count") out += `${display}:${count}\n`;
            if (mode !== "content" && (filesMatched >= maxMatches || Buffer.byteLength(out) > budget))
              stopped = true;
          }
          if (stopped) return;
        }
      };
      try {
        for await (const batch of loaded()) {
          ctx.signal.throwIfAborted();
          const texts: Array<{ bytes: Uint8Array; label: string }> = [];
          const window: Window = { files: [], bytes: 0, results: undefined };
          for (const { file, result } of batch) {
            const display = fs.display(file.abs);
            window.files.push({ display, kind: result.kind });
            if (result.kind === "text") {
              texts.push({ bytes: result.bytes, label: display });
              window.bytes += result.bytes.byteLength;
            }
          }
          if (texts.length > 0) window.results = matcher.matchBatch(texts);
          queue.push(window);
          queuedBytes += window.bytes;
          while (!stopped && (queue.length > GREP_MATCH_AHEAD || queuedBytes > GREP_MATCH_AHEAD_BYTES)) {
            await consume(queue.shift()!);
          }
          if (stopped) break;
        }
        while (!stopped && queue.length > 0) await consume(queue.shift()!);
      } finally {
        matcher.close();
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
