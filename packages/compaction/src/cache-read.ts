/**
 * The text behind `tool_output_cache` and `tool_output_cache_grep`: line
 * based reads numbered like a file read, and regex search with context.
 * Both cap their answer at `maxMessageBytes` and end with a footer that
 * says how to continue.
 */

import { errorMessage } from "@yoi/manifest/errors";
import { CompactionError } from "./errors.ts";
import { type FileMatch, GrepMatcher, type GrepMatcherOptions } from "./grep-matcher.ts";
import { cutLine, cutToBytes, READ_TOOL_NAME, splitLines } from "./in-context-view.ts";

/** Lines `tool_output_cache` returns when no limit is given (like a file read). */
export const DEFAULT_READ_LIMIT = 2000;
/** Matches `tool_output_cache_grep` shows when no max is given. */
export const DEFAULT_MAX_MATCHES = 100;

export interface ReadLimits {
  maxMessageBytes: number;
  maxLineLength: number;
}

export interface ReadRequest {
  refId: string;
  /** 1-based first line. Default 1. */
  offset?: number;
  /** Most lines. Default `DEFAULT_READ_LIMIT`. */
  limit?: number;
}

/** Numbers a line like `cat -n`. */
function numbered(n: number, sep: string, line: string): string {
  return `${String(n).padStart(6, " ")}${sep}${line}`;
}

function shorten(line: string, max: number): string {
  if (line.length <= max) return line;
  const kept = cutLine(line, max);
  return `${kept}… [+${line.length - kept.length} chars]`;
}

/** Reads lines `offset..offset+limit-1` of `text` (the content of `refId`), numbered. */
export function readLines(text: string, request: ReadRequest, limits: ReadLimits): string {
  const lines = splitLines(text);
  const total = lines.length;
  const offset = request.offset ?? 1;
  const limit = request.limit ?? DEFAULT_READ_LIMIT;
  if (!Number.isInteger(offset) || offset < 1) {
    throw new CompactionError(
      "cache",
      `Invalid offset ${offset}: offset is a 1-based line number (1 or more).`,
    );
  }
  if (!Number.isInteger(limit) || limit < 1) {
    throw new CompactionError("cache", `Invalid limit ${limit}: limit is a number of lines (1 or more).`);
  }
  if (total === 0) return `(ref ${request.refId}: the output is empty)`;
  if (offset > total) {
    throw new CompactionError(
      "cache",
      `offset ${offset} is past the end: ref ${request.refId} has ${total} line${total === 1 ? "" : "s"}. Use an offset between 1 and ${total}.`,
    );
  }
  const end = Math.min(total, offset + limit - 1);
  const budget = limits.maxMessageBytes - 400; // room for the footer
  const out: string[] = [];
  let used = 0;
  let last = offset - 1;
  for (let n = offset; n <= end; n++) {
    const row = numbered(n, "\t", shorten(lines[n - 1]!, limits.maxLineLength));
    const cost = Buffer.byteLength(row, "utf8") + 1;
    if (used + cost > budget && out.length > 0) break;
    out.push(used + cost > budget ? cutToBytes(row, budget) : row);
    used += cost;
    last = n;
  }
  const footer =
    last < total
      ? `(lines ${offset}-${last} of ${total}; continue with ${READ_TOOL_NAME}({"ref_id":"${request.refId}","offset":${last + 1}}))`
      : `(end of output: lines ${offset}-${last} of ${total})`;
  return `${out.join("\n")}\n${footer}`;
}

export interface GrepRequest {
  refId: string;
  pattern: string;
  ignoreCase?: boolean;
  /** Lines of context before and after each match. Default 0. */
  context?: number;
  /** Most matching lines shown. Default `DEFAULT_MAX_MATCHES`. */
  maxMatches?: number;
}

/** Compiles a grep pattern or throws an error that says what is wrong and how to fix it. */
export function compilePattern(pattern: string, ignoreCase: boolean): RegExp {
  if (pattern === "") {
    throw new CompactionError(
      "cache",
      "Empty pattern: give a regular expression (or plain text) to search for.",
    );
  }
  try {
    return new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (error) {
    const reason = errorMessage(error);
    throw new CompactionError(
      "cache",
      `Invalid pattern ${JSON.stringify(pattern)}: ${reason}. The pattern is a JavaScript regular expression; put a backslash before ( ) [ ] { } . * + ? ^ $ | \\ to match them literally.`,
      { cause: error },
    );
  }
}

/**
 * Lines of `text` matching `request.pattern`, numbered (`N:` for a match,
 * `N-` for context, `--` between context groups, as grep prints them). The
 * pattern runs in a worker thread with a time limit (`GrepMatcher`). A long
 * matching line is shown as a window around its first match, so a match in
 * a 1 MB line is still readable.
 */
export async function grepLines(
  text: string,
  request: GrepRequest,
  limits: ReadLimits,
  options: GrepMatcherOptions = {},
): Promise<string> {
  const ignoreCase = request.ignoreCase ?? false;
  const regex = compilePattern(request.pattern, ignoreCase);
  const context = request.context ?? 0;
  const maxMatches = request.maxMatches ?? DEFAULT_MAX_MATCHES;
  if (!Number.isInteger(context) || context < 0) {
    throw new CompactionError(
      "cache",
      `Invalid context ${context}: context is a number of lines (0 or more).`,
    );
  }
  if (!Number.isInteger(maxMatches) || maxMatches < 1) {
    throw new CompactionError("cache", `Invalid max_matches ${maxMatches}: give 1 or more.`);
  }
  // The thread splits lines where splitLines does, so its indexes are lines' indexes here.
  const lines = splitLines(text);
  let matcher: GrepMatcher | undefined;
  let found: FileMatch;
  try {
    matcher = new GrepMatcher(
      // The hits shown, and those the context lines after the last of them may hold (marked `:` too).
      { source: request.pattern, flags: ignoreCase ? "i" : "", mode: "lines", maxHits: maxMatches + context },
      options,
    );
    const bytes = new TextEncoder().encode(text);
    found = (await matcher.matchBatch([{ bytes, label: `ref ${request.refId}` }]))[0]!;
  } catch (error) {
    if (options.signal?.aborted)
      throw new CompactionError("cache", "The search was cancelled.", { cause: error });
    throw new CompactionError("cache", errorMessage(error), { cause: error });
  } finally {
    matcher?.close();
  }
  return formatMatches(lines, found, regex, { ...request, context, maxMatches }, limits);
}

function formatMatches(
  lines: readonly string[],
  { count: totalMatches, hits }: FileMatch,
  regex: RegExp,
  request: GrepRequest & { context: number; maxMatches: number },
  limits: ReadLimits,
): string {
  const { context, maxMatches } = request;
  if (totalMatches === 0) {
    return `No lines match ${JSON.stringify(request.pattern)} in ref ${request.refId} (${lines.length} lines).`;
  }
  const isMatch = new Set(hits);
  const budget = limits.maxMessageBytes - 400;
  const out: string[] = [];
  let used = 0;
  let shownTo = -1; // last line index printed
  let shownMatches = 0;
  let cutByBytes = false;
  for (const m of hits.slice(0, maxMatches)) {
    const from = Math.max(0, m - context, shownTo + 1);
    const to = Math.min(lines.length - 1, m + context);
    const rows: string[] = [];
    if (context > 0 && out.length > 0 && from > shownTo + 1) rows.push("--"); // grep prints -- only with context
    for (let i = from; i <= to; i++) {
      const line = lines[i]!;
      const hit = isMatch.has(i);
      rows.push(
        numbered(
          i + 1,
          hit ? ":" : "-",
          hit ? matchWindow(line, regex, limits.maxLineLength) : shorten(line, limits.maxLineLength),
        ),
      );
    }
    const block = rows.join("\n");
    const cost = Buffer.byteLength(block, "utf8") + 1;
    if (used + cost > budget && out.length > 0) {
      cutByBytes = true;
      break;
    }
    out.push(used + cost > budget ? cutToBytes(block, budget) : block);
    used += cost;
    shownTo = Math.max(shownTo, to);
    shownMatches++;
  }
  let footer = `(${totalMatches} matching line${totalMatches === 1 ? "" : "s"} in ${lines.length} lines of ref ${request.refId}`;
  if (shownMatches < totalMatches) {
    const why = cutByBytes ? "the answer size limit" : `max_matches=${maxMatches}`;
    footer += `; showing the first ${shownMatches} (${why}); narrow the pattern, or read around a line with ${READ_TOOL_NAME}({"ref_id":"${request.refId}","offset":N})`;
  }
  footer += ")";
  return `${out.join("\n")}\n${footer}`;
}

/** A long line cut to a window of `max` characters around its first match. */
function matchWindow(line: string, regex: RegExp, max: number): string {
  if (line.length <= max) return line;
  const found = regex.exec(line);
  const at = found?.index ?? 0;
  const start = Math.max(0, Math.min(at - Math.floor(max / 4), line.length - max));
  const slice = line.slice(start, start + max);
  return `${start > 0 ? `[${start} chars]…` : ""}${slice}${start + max < line.length ? `…[+${line.length - start - max} chars]` : ""}`;
}
