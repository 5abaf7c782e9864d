/**
 * `tool_output_cache` and `tool_output_cache_grep`
 * (docs/design/context-management.md#reading-back), built with the worker's
 * Tool API. Errors (unknown ref, bad range, bad pattern) go back to the model
 * as `ToolError`s that say what to do.
 */
import { defineTool, type Tool, ToolError } from "@yoi/llm-worker";
import * as z from "zod";
import { DEFAULT_MAX_MATCHES, DEFAULT_READ_LIMIT } from "./cache-read.ts";
import { CompactionError } from "./errors.ts";
import { GREP_TOOL_NAME, READ_TOOL_NAME } from "./in-context-view.ts";
import type { ToolOutputCache } from "./tool-output-cache.ts";

const refId = () =>
  z
    .string()
    .min(1)
    .describe(
      "The ref id of a cached tool output: the <id> of `ref=<id>` in a trimmed or truncated tool output.",
    );

export const readInputSchema = z.object({
  ref_id: refId(),
  offset: z.number().int().min(1).optional().describe("1-based line number to start at. Default 1."),
  limit: z.number().int().min(1).optional().describe(`Most lines to return. Default ${DEFAULT_READ_LIMIT}.`),
});

export const grepInputSchema = z.object({
  ref_id: refId(),
  pattern: z.string().min(1).describe("JavaScript regular expression searched for in each line."),
  ignore_case: z.boolean().optional().describe("Match case-insensitively. Default false."),
  context: z
    .number()
    .int()
    .min(0)
    .max(50)
    .optional()
    .describe("Lines of context shown before and after each match. Default 0."),
  max_matches: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe(`Most matching lines shown. Default ${DEFAULT_MAX_MATCHES}.`),
});

async function asToolError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (CompactionError.isInstance(error)) throw new ToolError(error.message);
    throw error;
  }
}

/** The two cache tools, reading from `cache`'s store. Register both with the worker. */
export function createCacheTools(cache: ToolOutputCache): Tool[] {
  const limits = { maxOutputBytes: cache.config.maxMessageBytes, storeLargeOutput: false } as const;
  const read = defineTool({
    name: READ_TOOL_NAME,
    description:
      "Read a cached tool output by its ref id. Older or large tool outputs in this conversation are shortened or replaced by `[tool output trimmed; ref=<id>]`; this returns their full lines, numbered like a file read (offset/limit are line based). The footer says how to continue.",
    inputSchema: readInputSchema,
    ...limits,
    execute: (input, ctx) =>
      asToolError(async () => {
        const text = await cache.read({ refId: input.ref_id, offset: input.offset, limit: input.limit });
        cache.noteReaderCall(ctx.callId, input.ref_id);
        return text;
      }),
  });
  const grep = defineTool({
    name: GREP_TOOL_NAME,
    description:
      "Search a cached tool output (by its ref id, from `ref=<id>`) for lines matching a regular expression. Prints `N:line` for matches and `N-line` for context lines, like grep -n; use tool_output_cache with offset N to read around a match.",
    inputSchema: grepInputSchema,
    ...limits,
    execute: (input, ctx) =>
      asToolError(async () => {
        const text = await cache.grep(
          {
            refId: input.ref_id,
            pattern: input.pattern,
            ignoreCase: input.ignore_case,
            context: input.context,
            maxMatches: input.max_matches,
          },
          { signal: ctx.signal },
        );
        cache.noteReaderCall(ctx.callId, input.ref_id);
        return text;
      }),
  });
  return [read, grep];
}
