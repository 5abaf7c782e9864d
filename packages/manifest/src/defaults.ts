/**
 * Named defaults of the designs in docs/design/. Every other package reads
 * these instead of repeating a number.
 */

/**
 * Cap of a tool output or an `@path` file body sent to the model, in bytes
 * (docs/design/file-refs.md#the-body).
 */
export const TOOL_OUTPUT_MAX_BYTES = 16 * 1024;

// Stored tool outputs and their summaries: docs/design/tool-output-storage.md#sizes.

/** A tool output longer than this (in UTF-8 bytes) is promoted to Stored. */
export const INLINE_THRESHOLD_BYTES = 800;
/** Maximum size of an auto-generated Stored summary, in bytes. */
export const SUMMARY_MAX_BYTES = 400;
/** Lines of the head shown in a text summary. */
export const SUMMARY_HEAD_LINES = 5;
/** Lines of the tail shown in a text summary. */
export const SUMMARY_TAIL_LINES = 3;

// The tool output cache: docs/design/context-management.md#the-tool-output-cache.

/**
 * Defaults of the config's `toolOutputCache` section, keyed as its fields
 * are (the schema's defaults and the code's own fallbacks read them here).
 */
export const TOOL_OUTPUT_CACHE_DEFAULTS = {
  /** The cache is on unless a config turns it off. */
  enabled: true,
  /** Cap of one in-context tool message, in bytes. */
  maxMessageBytes: 50 * 1024,
  /** Longest line kept in the in-context view. */
  maxLineLength: 2000,
} as const;
/** Tool output cache: the budget is `clamp(window * ratio, min, max)` tokens. */
export const TOOL_OUTPUT_CACHE_BUDGET_RATIO = 0.25;
/** Tool output cache: lower bound of the derived context budget, in tokens. */
export const TOOL_OUTPUT_CACHE_BUDGET_MIN_TOKENS = 20_000;
/** Tool output cache: upper bound of the derived context budget, in tokens. */
export const TOOL_OUTPUT_CACHE_BUDGET_MAX_TOKENS = 60_000;
/** Bytes per token when no tokenizer is available. */
export const BYTES_PER_TOKEN_ESTIMATE = 4;

/**
 * The tool output cache's context budget for a model's context window, in
 * tokens: `clamp(floor(window * 0.25), 20_000, 60_000)`
 * (docs/design/context-management.md#budget). Used when
 * `toolOutputCache.contextBudgetTokens` is `null`.
 */
export function toolOutputCacheBudgetTokens(contextWindow: number): number {
  const raw = Math.floor(contextWindow * TOOL_OUTPUT_CACHE_BUDGET_RATIO);
  return Math.min(TOOL_OUTPUT_CACHE_BUDGET_MAX_TOKENS, Math.max(TOOL_OUTPUT_CACHE_BUDGET_MIN_TOKENS, raw));
}

/** Token estimate of a string by the bytes/4 rule. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN_ESTIMATE);
}

// Compaction: docs/design/context-management.md#compaction.

/**
 * Default instruction of the compaction summary call: the answer
 * goes in `<summary>` tags. `compaction.summaryDirectives` are appended to it
 * as bullets; `compaction.summaryPrompt` replaces it.
 */
const SUMMARY_PROMPT = `Your context window is filling up, so the conversation above will be replaced by a summary you write now. Write it for yourself: after this point you will only see the summary (and the most recent turn), and you must be able to continue the work without asking the user to repeat anything.

Cover, in this order:
1. The user's requests and intent, in their own words where the wording matters, including every constraint and preference they stated.
2. What has been done so far: files read, created or changed (with paths), commands run and their outcome, and the key facts learned from tool outputs.
3. Decisions made and why, and approaches that were tried and failed (so they are not retried).
4. Errors met and how they were resolved, or that they are still open.
5. The current state: what was being worked on right before this summary, and the exact next step.

Be specific (names, paths, numbers, identifiers) and concise. Do not invent anything that is not in the conversation. Put the whole summary inside <summary></summary> tags.`;

/**
 * Default retain instruction: facts that must survive word for
 * word, in `<retain>` tags. `compaction.retainPrompt: null` turns retain off.
 */
const RETAIN_PROMPT = `Before the summary, list inside <retain></retain> tags the facts that must survive word for word: tool output references (every \`ref=<id>\` / \`[blob:<id>]\` that may be needed again, with what it contains), file paths, identifiers, exact error messages, and the user's explicit instructions. One item per line. Write <retain></retain> with nothing inside when there is nothing to keep.`;

/**
 * Defaults of the config's `compaction` section, keyed as its fields are
 * (the schema's defaults and compaction's own fallbacks read them here).
 */
export const COMPACTION_DEFAULTS = {
  /** Compaction is available unless a config turns it off. */
  enabled: true,
  /** Compaction runs by itself when the threshold is reached; `false` leaves only manual `/compact`. */
  auto: true,
  /** Compaction starts when the context reaches this share of the window. */
  thresholdRatio: 0.8,
  summaryPrompt: SUMMARY_PROMPT,
  retainPrompt: RETAIN_PROMPT,
  /** Turns kept verbatim after compaction. */
  retainLastTurns: 1,
} as const;

/** Tool output cache: smallest allowed `maxMessageBytes` (smaller leaves no room for a placeholder). */
export const TOOL_OUTPUT_CACHE_MIN_MESSAGE_BYTES = 1024;
/** Tool output cache: smallest allowed `maxLineLength`. */
export const TOOL_OUTPUT_CACHE_MIN_LINE_LENGTH = 16;

/**
 * Defaults of the config's `worker` section, keyed as its fields are: the
 * schema's defaults and the worker's own fallbacks (a worker built without a
 * config) both read them from here.
 */
export const WORKER_DEFAULTS = {
  /** `max_tokens` sent with each model request, capped by the model's max output. */
  maxTokens: 8192,
  /** Most model turns (request + tool batch) in one submit before it stops. */
  maxTurns: 50,
  /** Wall-clock limit of one tool call, in milliseconds. */
  toolTimeoutMs: 120_000,
  /** Most tool calls of one model response that run; each further one gets an error result. */
  maxToolCallsPerResponse: 200,
  /** Most tool calls running at once (the rest wait their turn, in call order). */
  toolConcurrency: 10,
  /**
   * Most bytes of one model response (its text, reasoning and tool call
   * arguments together); past it the stream is stopped and the run fails.
   * Far above what any model's output limit allows (some 128k tokens, about 0.5 MB).
   */
  maxResponseBytes: 16 * 1024 * 1024,
  /** Most bytes of one tool call's arguments; past it the call gets an error result, its arguments dropped. */
  maxToolArgumentBytes: 4 * 1024 * 1024,
  /** Most bytes of one MCP tool result; past it the call gets an error result. */
  maxMcpResultBytes: 8 * 1024 * 1024,
} as const;
/** Tools offered to the model past which a warning says so (each one is sent with every request). */
export const TOOLS_WARN_COUNT = 128;
/** Bytes of tool definitions (names, descriptions, schemas) past which a warning says so. */
export const TOOLS_WARN_BYTES = 256 * 1024;

/** Directory under the home directory and under a project that holds yoi's config. */
export const CONFIG_DIR_NAME = ".yoi";
/** Config file name inside {@link CONFIG_DIR_NAME} (JSON with comments and trailing commas). */
export const CONFIG_FILE_NAME = "config.jsonc";

/** Terminal: a turn that took at least this many seconds notifies when it ends. */
export const NOTIFY_LONG_TURN_SECONDS = 30;
/** Terminal: a paste of more lines than this is shown collapsed in the prompt editor. */
export const PASTE_COLLAPSE_LINES = 10;
/** Terminal: a status line command running longer than this is stopped. */
export const STATUS_LINE_TIMEOUT_MS = 5000;
/** Terminal: state changes within this time cause one status line run. */
export const STATUS_LINE_DEBOUNCE_MS = 300;
