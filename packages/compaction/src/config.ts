/**
 * The tool output cache and compaction settings are the `toolOutputCache`
 * and `compaction` sections of the yoi config: one schema each, owned by
 * @yoi/manifest (the bottom package, where a config file is checked with
 * its locations and messages, and where the defaults are named;
 * docs/design/context-management.md). This package imports them rather than declaring its own, so a
 * field or a bound is written once. Here, what a caller passes in code
 * (any field may be left out) gets its defaults, and a bad value is a
 * `CompactionError`.
 */
import {
  type CompactionConfig,
  type CompactionConfigInput,
  CompactionSchema,
  type ToolOutputCacheConfig,
  type ToolOutputCacheConfigInput,
  ToolOutputCacheSchema,
} from "@yoi/manifest";
import type * as z from "zod";
import { CompactionError } from "./errors.ts";

/** Validates tool output cache settings and applies the defaults; throws `CompactionError("invalid_config")`. */
export function resolveToolOutputCacheConfig(input: ToolOutputCacheConfigInput = {}): ToolOutputCacheConfig {
  return parseOrThrow(ToolOutputCacheSchema, input, "toolOutputCache");
}

/** Validates compaction settings and applies the defaults; throws `CompactionError("invalid_config")`. */
export function resolveCompactionConfig(input: CompactionConfigInput = {}): CompactionConfig {
  return parseOrThrow(CompactionSchema, input, "compaction");
}

function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, section: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length === 0 ? section : `${section}.${issue.path.join(".")}`;
    const what = issue.code === "unrecognized_keys" ? `unknown key ${issue.keys.join(", ")}` : issue.message;
    return `${path}: ${what}`;
  });
  throw new CompactionError(
    "invalid_config",
    `Invalid ${section} config: ${problems.join("; ")}. Fix these fields (in code or in .yoi/config.jsonc under "${section}").`,
    { cause: parsed.error },
  );
}
