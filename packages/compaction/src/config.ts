import {
  COMPACTION_AUTO,
  COMPACTION_ENABLED,
  COMPACTION_RETAIN_LAST_TURNS,
  COMPACTION_THRESHOLD_RATIO,
  TOOL_OUTPUT_CACHE_ENABLED,
  TOOL_OUTPUT_CACHE_MAX_LINE_LENGTH,
  TOOL_OUTPUT_CACHE_MAX_MESSAGE_BYTES,
} from "@yoi/manifest";
import * as z from "zod";
import { CompactionError } from "./errors.ts";
import { DEFAULT_RETAIN_PROMPT, DEFAULT_SUMMARY_PROMPT } from "./prompts.ts";

/**
 * Tool output cache settings
 * (docs/design/context-management.md#the-tool-output-cache). Field names match
 * the `toolOutputCache` section of `.yoi/config.jsonc` (@yoi/manifest).
 */
export interface ToolOutputCacheConfig {
  /** Default true. When false, tool results pass through untouched and nothing is trimmed. */
  enabled?: boolean;
  /**
   * Budget for all tool outputs in context, in estimated tokens. Default
   * null: `clamp(contextWindow * 0.25, 20000, 60000)` of the model.
   */
  contextBudgetTokens?: number | null;
  /** Cap of one in-context tool message in UTF-8 bytes, note included. Default 51200 (50 KiB). */
  maxMessageBytes?: number;
  /** Longest line kept in the in-context view, in characters. Default 2000. */
  maxLineLength?: number;
  /**
   * Delete the stored outputs that no history references any more after a
   * compaction (docs/design/context-management.md#gc-after-compaction), when
   * the store can delete. Default false: the session log may still point at
   * them (audit, `yoi inspect`), so they are only reported in the replacement's
   * `detail.unreferencedRefs`.
   */
  deleteUnreferencedRefs?: boolean;
  /**
   * What the model sees of an output the worker already stored in the
   * BlobStore (`[blob:<id>]`, docs/design/context-management.md#stored-outputs):
   * - `"summary"` (default): the worker's summary (400 bytes by
   *   default) stays; the model reads more with `inspect` or
   *   `tool_output_cache` (the ref is the blob id);
   * - `"view"`: the in-context view of the full output, up to
   *   `maxMessageBytes` (50 KiB), replaces it.
   * Outputs the worker kept inline always get the view.
   */
  storedView?: StoredView;
}

/** See `ToolOutputCacheConfig.storedView`. */
export type StoredView = "summary" | "view";

/** `ToolOutputCacheConfig` with every default applied. */
export interface ResolvedToolOutputCacheConfig {
  enabled: boolean;
  contextBudgetTokens: number | null;
  maxMessageBytes: number;
  maxLineLength: number;
  deleteUnreferencedRefs: boolean;
  storedView: StoredView;
}

/**
 * Compaction settings (docs/design/context-management.md#compaction). Field
 * names match the `compaction` section of `.yoi/config.jsonc` (@yoi/manifest).
 */
export interface CompactionConfig {
  /** Default true. When false nothing is ever compacted, not even after a context overflow. */
  enabled?: boolean;
  /** Default true. When false, no automatic compaction (checkpoints and overflow); `compact()` still works when called. */
  auto?: boolean;
  /** Compact when the context reaches this share of the model's window. Default 0.8; (0, 1]. */
  thresholdRatio?: number;
  /** Model for the summary call. Default null: the worker's own client. */
  model?: string | null;
  /** Instructions of the summary call (answer in `<summary>` tags). Default `DEFAULT_SUMMARY_PROMPT`. */
  summaryPrompt?: string;
  /** Extra summary instructions, appended to the prompt as bullets. Default []. */
  summaryDirectives?: string[];
  /** What to keep verbatim (answer in `<retain>` tags); null disables it. Default `DEFAULT_RETAIN_PROMPT`. */
  retainPrompt?: string | null;
  /** Extra retain instructions, appended as bullets. Default []. */
  retainDirectives?: string[];
  /** Most recent turns (a turn starts at a user message) kept verbatim. Default 1; 0 keeps none. */
  retainLastTurns?: number;
}

/** `CompactionConfig` with every default applied. */
export interface ResolvedCompactionConfig {
  enabled: boolean;
  auto: boolean;
  thresholdRatio: number;
  model: string | null;
  summaryPrompt: string;
  summaryDirectives: string[];
  retainPrompt: string | null;
  retainDirectives: string[];
  retainLastTurns: number;
}

/** What `resolveToolOutputCacheConfig` gives for an empty config (the defaults of @yoi/manifest). */
const TOOL_OUTPUT_CACHE_DEFAULTS: Readonly<ResolvedToolOutputCacheConfig> = Object.freeze({
  enabled: TOOL_OUTPUT_CACHE_ENABLED,
  contextBudgetTokens: null,
  maxMessageBytes: TOOL_OUTPUT_CACHE_MAX_MESSAGE_BYTES,
  maxLineLength: TOOL_OUTPUT_CACHE_MAX_LINE_LENGTH,
  deleteUnreferencedRefs: false,
  storedView: "summary",
});

/** What `resolveCompactionConfig` gives for an empty config (the defaults of @yoi/manifest). */
const COMPACTION_DEFAULTS: Readonly<ResolvedCompactionConfig> = Object.freeze({
  enabled: COMPACTION_ENABLED,
  auto: COMPACTION_AUTO,
  thresholdRatio: COMPACTION_THRESHOLD_RATIO,
  model: null,
  summaryPrompt: DEFAULT_SUMMARY_PROMPT,
  summaryDirectives: [],
  retainPrompt: DEFAULT_RETAIN_PROMPT,
  retainDirectives: [],
  retainLastTurns: COMPACTION_RETAIN_LAST_TURNS,
});

/**
 * zod schema of `ToolOutputCacheConfig`; parsing applies the defaults.
 * Unknown keys are rejected. Built on first use (`z.lazy`; `.unwrap()` is
 * the object schema): a config that only restates the defaults, which is
 * what a pod passes unless the user set this section, is resolved without it.
 */
export const toolOutputCacheConfigSchema = z.lazy(() =>
  z
    .object({
      enabled: z.boolean().default(TOOL_OUTPUT_CACHE_DEFAULTS.enabled),
      contextBudgetTokens: z
        .number()
        .int()
        .positive()
        .nullable()
        .default(TOOL_OUTPUT_CACHE_DEFAULTS.contextBudgetTokens),
      maxMessageBytes: z.number().int().min(1024).default(TOOL_OUTPUT_CACHE_DEFAULTS.maxMessageBytes),
      maxLineLength: z.number().int().min(16).default(TOOL_OUTPUT_CACHE_DEFAULTS.maxLineLength),
      deleteUnreferencedRefs: z.boolean().default(TOOL_OUTPUT_CACHE_DEFAULTS.deleteUnreferencedRefs),
      storedView: z.enum(["summary", "view"]).default(TOOL_OUTPUT_CACHE_DEFAULTS.storedView),
    })
    .strict(),
);

/** zod schema of `CompactionConfig`; parsing applies the defaults. Unknown keys are rejected. Built on first use, as `toolOutputCacheConfigSchema`. */
export const compactionConfigSchema = z.lazy(() =>
  z
    .object({
      enabled: z.boolean().default(COMPACTION_DEFAULTS.enabled),
      auto: z.boolean().default(COMPACTION_DEFAULTS.auto),
      thresholdRatio: z.number().gt(0).lte(1).default(COMPACTION_DEFAULTS.thresholdRatio),
      model: z.string().trim().min(1).nullable().default(COMPACTION_DEFAULTS.model),
      summaryPrompt: z.string().trim().min(1).default(COMPACTION_DEFAULTS.summaryPrompt),
      // A fresh array each parse: the resolved config belongs to its caller.
      summaryDirectives: z.array(z.string()).default(() => []),
      retainPrompt: z.string().trim().min(1).nullable().default(COMPACTION_DEFAULTS.retainPrompt),
      retainDirectives: z.array(z.string()).default(() => []),
      retainLastTurns: z.number().int().min(0).default(COMPACTION_DEFAULTS.retainLastTurns),
    })
    .strict(),
);

// Compile-time check that the schemas and the documented interfaces agree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _cacheOut: Same<z.output<typeof toolOutputCacheConfigSchema>, ResolvedToolOutputCacheConfig> = true;
const _compactionOut: Same<z.output<typeof compactionConfigSchema>, ResolvedCompactionConfig> = true;
void _cacheOut;
void _compactionOut;

/** Validates a tool output cache config and applies defaults; throws `CompactionError("invalid_config")`. */
export function resolveToolOutputCacheConfig(
  input: ToolOutputCacheConfig = {},
): ResolvedToolOutputCacheConfig {
  if (restatesDefaults(input, TOOL_OUTPUT_CACHE_DEFAULTS)) return structuredClone(TOOL_OUTPUT_CACHE_DEFAULTS);
  return parseOrThrow(toolOutputCacheConfigSchema, input, "toolOutputCache");
}

/** Validates a compaction config and applies defaults; throws `CompactionError("invalid_config")`. */
export function resolveCompactionConfig(input: CompactionConfig = {}): ResolvedCompactionConfig {
  if (restatesDefaults(input, COMPACTION_DEFAULTS)) return structuredClone(COMPACTION_DEFAULTS);
  return parseOrThrow(compactionConfigSchema, input, "compaction");
}

/**
 * True when `input` is an object whose every field is absent, undefined or
 * equal to its default: the schema would give the defaults back, so there
 * is nothing to check (a test holds the two to the same answer). Anything
 * else, a bad value or an unknown key included, goes to the schema.
 */
function restatesDefaults(input: unknown, defaults: Readonly<Record<string, unknown>>): boolean {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  for (const [key, value] of Object.entries(input)) {
    if (!Object.hasOwn(defaults, key)) return false;
    const fallback = defaults[key];
    if (value === undefined || value === fallback) continue;
    if (!Array.isArray(value) || !Array.isArray(fallback) || value.length !== fallback.length) return false;
    if (value.some((element, i) => element !== fallback[i])) return false;
  }
  return true;
}

function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, section: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length === 0 ? section : `${section}.${issue.path.join(".")}`;
    return `${path}: ${issue.message}`;
  });
  throw new CompactionError(
    "invalid_config",
    `Invalid ${section} config: ${problems.join("; ")}. Fix these fields (in code or in .yoi/config.jsonc under "${section}").`,
    { cause: parsed.error },
  );
}
