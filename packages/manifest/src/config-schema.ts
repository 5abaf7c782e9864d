import * as z from "zod";
import type { ModelInfo, ProviderKind } from "./catalog.ts";
import { findModel, PROVIDER_KINDS } from "./catalog.ts";
import { MODEL_CATALOG } from "./catalog-data.ts";
import {
  COMPACTION_DEFAULTS,
  INLINE_THRESHOLD_BYTES,
  SUMMARY_HEAD_LINES,
  SUMMARY_MAX_BYTES,
  SUMMARY_TAIL_LINES,
  TOOL_OUTPUT_CACHE_DEFAULTS,
  TOOL_OUTPUT_CACHE_MIN_LINE_LENGTH,
  TOOL_OUTPUT_CACHE_MIN_MESSAGE_BYTES,
  TOOL_OUTPUT_MAX_BYTES,
  WORKER_DEFAULTS,
} from "./defaults.ts";
import { HooksSchema, McpServersSchema } from "./extensions-schema.ts";
import { LspSchema } from "./lsp-schema.ts";
import { PermissionsSchema, SandboxSchema } from "./permissions-schema.ts";
import { ModelPricingSchema } from "./pricing-schema.ts";
import { builtinProviderConfigs } from "./provider-registry.ts";
import {
  bool,
  boundedNumber,
  expecting,
  intAtLeast,
  nonBlank,
  nonEmpty,
  nonNegativeInt,
  positiveInt,
  text,
} from "./schema-helpers.ts";
import { TaskSchema } from "./task-schema.ts";
import { EditorModeSchema, NotificationsSchema, PasteSchema, StatusLineSchema } from "./terminal-schema.ts";

const stringList = (what = "an array of strings") =>
  z.array(text("a string"), expecting(what)).meta({ description: "Replaced as a whole by a later source." });
/** A fresh empty array for each parse: the parsed config belongs to its caller. */
const noStrings = () => [];
const obj = <S extends z.core.$ZodLooseShape>(shape: S) => z.strictObject(shape, expecting("an object"));

/** `"<provider>/<model>"`; the model part may itself contain slashes (`openrouter/meta-llama/llama-3`). */
export const MODEL_REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/\S+$/;
export const MODEL_REF_EXPECTED = 'a model as "<provider>/<model>", like "anthropic/claude-sonnet-4-5"';
const modelRef = () => text(MODEL_REF_EXPECTED).regex(MODEL_REF_PATTERN, expecting(MODEL_REF_EXPECTED));

const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const kindList = PROVIDER_KINDS.map((k) => `"${k}"`).join(", ");

const ProviderKindSchema = z.enum(PROVIDER_KINDS, expecting(`one of ${kindList}`));

export const ProviderSchema = obj({
  kind: ProviderKindSchema.optional().meta({
    description: "Which API the provider speaks. Required for a new provider; a built-in one has it already.",
  }),
  baseURL: z
    .url({ ...expecting('an http(s) URL, like "http://localhost:11434/v1"'), protocol: /^https?$/ })
    .optional()
    .meta({ description: "API base URL (OpenAI-compatible servers: include /v1)." }),
  apiKeyEnv: text('the name of an environment variable, like "OPENAI_API_KEY"')
    .regex(ENV_NAME, expecting('the name of an environment variable, like "OPENAI_API_KEY"'))
    .optional()
    .meta({
      description: "Name of the environment variable that holds the API key. Keys never go in a file.",
    }),
  headers: z
    .record(
      text("a header name"),
      text("a string header value"),
      expecting("an object of header names to strings"),
    )
    .optional()
    .meta({ description: "Extra HTTP headers sent with every request." }),
});

const CapabilitiesSchema = obj({
  tools: bool().optional(),
  parallelTools: bool().optional(),
  reasoning: z.enum(["effort", "budget", "none"], expecting('one of "effort", "budget", "none"')).optional(),
  vision: bool().optional(),
  promptCaching: bool().optional(),
  systemMessagesAnywhere: bool().optional().meta({
    description:
      "Whether the server accepts a system message after the first turn. Default: OpenAI yes, OpenAI-compatible servers no (sent as marked user text).",
  }),
  webSearch: bool().optional().meta({
    description:
      "Whether the provider searches the web for this model on its side (offers the web_search tool). Default: the catalog's; false for models it does not know.",
  }),
});

const ModelEntrySchema = obj({
  provider: nonEmpty("a provider name from `providers` or a provider kind").meta({
    description: "A provider name from `providers` (its kind serves the model) or a provider kind.",
  }),
  contextWindow: positiveInt()
    .optional()
    .meta({ description: "Context window in tokens. Required unless the id is in the built-in catalog." }),
  maxOutputTokens: positiveInt()
    .optional()
    .meta({ description: "Max output tokens. Required unless the id is in the built-in catalog." }),
  maxInputTokens: positiveInt().optional(),
  aliases: z.array(nonEmpty("a model id"), expecting("an array of model ids")).optional(),
  capabilities: CapabilitiesSchema.optional().meta({
    description: "Overrides the catalog's capabilities; a new model defaults to tools only.",
  }),
  pricing: ModelPricingSchema.optional(),
});

const ReasoningSchema = obj({
  effort: z
    .enum(
      ["none", "minimal", "low", "medium", "high"],
      expecting('one of "none", "minimal", "low", "medium", "high"'),
    )
    .optional()
    .meta({ description: "For effort-controlled models (OpenAI, Gemini 3)." }),
  budgetTokens: nonNegativeInt().optional().meta({
    description: "Thinking budget in tokens for budget-controlled models (Claude, Gemini 2.5); 0 = off.",
  }),
});

const WorkerSchema = obj({
  maxTokens: positiveInt()
    .default(WORKER_DEFAULTS.maxTokens)
    .meta({ description: "max_tokens of each model request." }),
  maxTurns: positiveInt()
    .default(WORKER_DEFAULTS.maxTurns)
    .meta({ description: "Most model turns in one submit." }),
  temperature: boundedNumber("a number from 0 to 2", { gte: 0, lte: 2 }).optional(),
  topP: boundedNumber("a number greater than 0 and at most 1", { gt: 0, lte: 1 }).optional(),
  reasoning: ReasoningSchema.optional(),
  toolTimeoutMs: positiveInt()
    .default(WORKER_DEFAULTS.toolTimeoutMs)
    .meta({ description: "Wall-clock limit of one tool call." }),
  maxToolCallsPerResponse: positiveInt().default(WORKER_DEFAULTS.maxToolCallsPerResponse).meta({
    description:
      "Most tool calls of one model response that run; each further call gets an error result saying so.",
  }),
  toolConcurrency: positiveInt()
    .default(WORKER_DEFAULTS.toolConcurrency)
    .meta({ description: "Most tool calls running at once; the others wait, in call order." }),
  maxResponseBytes: positiveInt().default(WORKER_DEFAULTS.maxResponseBytes).meta({
    description:
      "Most bytes of one model response (text, reasoning and tool arguments together); past it the run fails.",
  }),
  maxToolArgumentBytes: positiveInt().default(WORKER_DEFAULTS.maxToolArgumentBytes).meta({
    description: "Most bytes of one tool call's arguments; past it the call gets an error result.",
  }),
  maxMcpResultBytes: positiveInt()
    .default(WORKER_DEFAULTS.maxMcpResultBytes)
    .meta({ description: "Most bytes of one MCP tool result; past it the call gets an error result." }),
});

const ToolOutputSchema = obj({
  maxBytes: positiveInt().default(TOOL_OUTPUT_MAX_BYTES),
  inlineThresholdBytes: positiveInt().default(INLINE_THRESHOLD_BYTES),
  summaryMaxBytes: positiveInt().default(SUMMARY_MAX_BYTES),
  headLines: nonNegativeInt().default(SUMMARY_HEAD_LINES),
  tailLines: nonNegativeInt().default(SUMMARY_TAIL_LINES),
});

/** The `toolOutputCache` section: how much of older tool outputs stays in context (docs/design/context-management.md#the-tool-output-cache). */
export const ToolOutputCacheSchema = obj({
  enabled: bool().default(TOOL_OUTPUT_CACHE_DEFAULTS.enabled),
  contextBudgetTokens: positiveInt("a positive integer or null")
    .nullable()
    .default(null)
    .meta({ description: "null: clamp(contextWindow * 0.25, 20000, 60000)." }),
  maxMessageBytes: intAtLeast(TOOL_OUTPUT_CACHE_MIN_MESSAGE_BYTES).default(
    TOOL_OUTPUT_CACHE_DEFAULTS.maxMessageBytes,
  ),
  maxLineLength: intAtLeast(TOOL_OUTPUT_CACHE_MIN_LINE_LENGTH).default(
    TOOL_OUTPUT_CACHE_DEFAULTS.maxLineLength,
  ),
  deleteUnreferencedRefs: bool().default(false).meta({
    description:
      "Delete stored tool outputs that no history references after a compaction. Off keeps them for yoi inspect and the session log.",
  }),
  storedView: z.enum(["summary", "view"], expecting('one of "summary", "view"')).default("summary").meta({
    description:
      'What the model sees of a stored tool output: "summary" = the short summary the worker writes (read more with inspect), "view" = up to maxMessageBytes of the output itself.',
  }),
});

const RATIO = "a number greater than 0 and at most 1";
/** The `compaction` section: when and how history is summarized (docs/design/context-management.md#compaction). */
export const CompactionSchema = obj({
  enabled: bool().default(COMPACTION_DEFAULTS.enabled),
  auto: bool().default(COMPACTION_DEFAULTS.auto),
  thresholdRatio: boundedNumber(RATIO, { gt: 0, lte: 1 }).default(COMPACTION_DEFAULTS.thresholdRatio),
  model: modelRef()
    .nullable()
    .default(null)
    .meta({ description: "Model for the summary call; null: the session's." }),
  summaryPrompt: nonBlank("a non-empty string").default(COMPACTION_DEFAULTS.summaryPrompt),
  summaryDirectives: stringList().default(noStrings),
  retainPrompt: nonBlank("a non-empty string, or null to turn retain off")
    .nullable()
    .default(COMPACTION_DEFAULTS.retainPrompt),
  retainDirectives: stringList().default(noStrings),
  retainLastTurns: nonNegativeInt().default(COMPACTION_DEFAULTS.retainLastTurns),
});

const MS = "a number of milliseconds (an integer >= 0)";
/**
 * The `retry` section: the one retry policy of model calls (llm-client's
 * `RetryOptions`). A key left out keeps llm-client's default.
 */
export const RetrySchema = obj({
  maxAttempts: positiveInt().optional().meta({ description: "Most attempts of one model call. Default 4." }),
  initialDelayMs: nonNegativeInt(MS).optional().meta({ description: "First backoff delay. Default 500." }),
  maxDelayMs: nonNegativeInt(MS).optional().meta({ description: "Longest backoff delay. Default 20000." }),
  maxRetryAfterMs: nonNegativeInt(MS).optional().meta({
    description:
      "A server's retry-after (or rate-limit reset) above this ends the call instead of waiting; the error says when the limit resets. Default 60000.",
  }),
  totalBudgetMs: nonNegativeInt(MS).optional().meta({
    description: "Most time spent retrying one call, waits included. Default 120000.",
  }),
});

const ScopeSchema = obj({
  root: nonEmpty("a directory path")
    .optional()
    .meta({ description: "Scope root (default: the working directory)." }),
  readRoots: stringList("an array of directory paths").optional(),
  writeRoots: stringList("an array of directory paths").optional(),
});

/** The colour themes of the terminal UI (`theme` in the config; `auto` follows the terminal's background). */
export const THEME_NAMES = ["dark", "light", "dark-colorblind", "light-colorblind", "ansi"] as const;
/** One of {@link THEME_NAMES}. */
export type ThemeName = (typeof THEME_NAMES)[number];

const ThemeSchema = z
  .enum(["auto", ...THEME_NAMES], expecting(`one of "auto", ${THEME_NAMES.map((t) => `"${t}"`).join(", ")}`))
  .default("auto")
  .meta({
    description:
      'Colours of the terminal UI: "auto" (dark or light, as the terminal\'s background answers; dark when it does not), "dark", "light", "dark-colorblind", "light-colorblind" (blue and orange instead of green and red) or "ansi" (the terminal\'s own 16 colours). NO_COLOR turns colour off whatever this says.',
  });

const SessionSchema = obj({
  dir: nonEmpty("a directory path").optional().meta({ description: "Where session logs are written." }),
});

/**
 * One source's config (a file, the env, overrides): every field optional,
 * unknown keys rejected. Cross-field references are checked only on the merged
 * result, since a model may name a provider another file declares.
 */
export const ConfigLayerSchema = obj({
  $schema: text().optional().meta({ description: "JSON Schema URL or path, for editors." }),
  providers: z
    .record(
      text().regex(PROVIDER_NAME, expecting("a provider name of letters, digits, '.', '_' or '-'")),
      ProviderSchema,
      expecting("an object of provider names to providers"),
    )
    .default(builtinProviderConfigs),
  model: modelRef().optional().meta({ description: 'Default model, "<provider>/<model>".' }),
  models: z
    .record(nonEmpty("a model id"), ModelEntrySchema, expecting("an object of model ids to model entries"))
    .default(() => ({})),
  worker: WorkerSchema.prefault({}),
  toolOutput: ToolOutputSchema.prefault({}),
  toolOutputCache: ToolOutputCacheSchema.prefault({}),
  compaction: CompactionSchema.prefault({}),
  retry: RetrySchema.prefault({}),
  permissions: PermissionsSchema.prefault({}),
  sandbox: SandboxSchema,
  scope: ScopeSchema.prefault({}),
  session: SessionSchema.prefault({}),
  mcpServers: McpServersSchema,
  hooks: HooksSchema,
  task: TaskSchema.prefault({}),
  theme: ThemeSchema,
  editorMode: EditorModeSchema.default("emacs"),
  statusLine: StatusLineSchema.optional(),
  notifications: NotificationsSchema.prefault({}),
  paste: PasteSchema.prefault({}),
  lsp: LspSchema.prefault({}),
});

/** A config as one source writes it: every field optional. */
export type ConfigInput = z.input<typeof ConfigLayerSchema>;
type ConfigShape = z.output<typeof ConfigLayerSchema>;

/** A `"<provider>/<model>"` reference split at its first slash. */
export interface ModelRef {
  /** A key of `providers`. */
  provider: string;
  /** The model id as the provider's API names it (may contain slashes). */
  model: string;
}

/** Split `"<provider>/<model>"` at the first slash; `undefined` when it has no provider part. */
export function parseModelRef(ref: string): ModelRef | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { provider: ref.slice(0, slash), model: ref.slice(slash + 1) };
}

/** A problem found by {@link checkReferences}: a field path and what was expected there. */
export interface ReferenceProblem {
  path: (string | number)[];
  expected: string;
}

/**
 * Checks that need the whole, merged config: model refs name a declared
 * provider, model entries name a provider, and a model the catalog does not
 * know declares its context window and max output.
 */
export function checkReferences(
  config: ConfigShape,
  catalog: readonly ModelInfo[] = MODEL_CATALOG,
): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const names = Object.keys(config.providers);
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.kind === undefined)
      problems.push({ path: ["providers", name, "kind"], expected: `one of ${kindList}` });
  }
  const declared = `a provider declared in \`providers\` (${names.map((n) => `"${n}"`).join(", ")})`;
  const checkRef = (ref: string | null | undefined, path: string[]) => {
    if (ref == null) return;
    const parsed = parseModelRef(ref);
    if (parsed && !names.includes(parsed.provider))
      problems.push({ path, expected: `${declared} before the "/"` });
  };
  checkRef(config.model, ["model"]);
  checkRef(config.compaction.model, ["compaction", "model"]);
  for (const [id, entry] of Object.entries(config.models)) {
    const kind = providerKindOf(config, entry.provider);
    if (!kind) {
      problems.push({
        path: ["models", id, "provider"],
        expected: `${declared} or a provider kind (${kindList})`,
      });
      continue;
    }
    if (findModel(kind, id, catalog)) continue;
    for (const field of ["contextWindow", "maxOutputTokens"] as const) {
      if (entry[field] === undefined) {
        problems.push({
          path: ["models", id, field],
          expected: `a positive integer (required: "${id}" is not in the built-in catalog)`,
        });
      }
    }
  }
  return problems;
}

/** The kind of a provider name from `providers`, or the name itself when it is a kind. */
export function providerKindOf(
  config: Pick<ConfigShape, "providers">,
  provider: string,
): ProviderKind | undefined {
  const declared = Object.hasOwn(config.providers, provider) ? config.providers[provider] : undefined;
  if (declared) return declared.kind;
  return (PROVIDER_KINDS as readonly string[]).includes(provider) ? (provider as ProviderKind) : undefined;
}

/**
 * The yoi configuration schema (zod 4): strict objects, so an unknown key is an
 * error; every field has its documented default, so `ConfigSchema.parse({})`
 * is the default config. Cross-field references (a model naming a declared
 * provider) are checked too.
 */
export const ConfigSchema = z.preprocess(
  withBuiltinProviders,
  ConfigLayerSchema.superRefine((config, ctx) => {
    for (const p of checkReferences(config))
      ctx.addIssue({ code: "custom", path: p.path, message: p.expected });
  }),
) as unknown as z.ZodType<Config, ConfigInput>;
// The cast narrows `providers[*].kind` to required, which the refinement above guarantees.

/** The built-in providers stay declared when a config adds its own (an entry may change one field of one). */
function withBuiltinProviders(input: unknown): unknown {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return input;
  const given = (input as { providers?: unknown }).providers;
  if (given === undefined) return input;
  if (given === null || typeof given !== "object" || Array.isArray(given)) return input;
  const providers: Record<string, unknown> = builtinProviderConfigs();
  for (const [name, entry] of Object.entries(given)) {
    const builtin = providers[name];
    providers[name] =
      builtin && entry !== null && typeof entry === "object" && !Array.isArray(entry)
        ? { ...builtin, ...entry }
        : entry;
  }
  return { ...input, providers };
}

/** The effective configuration, every default filled in. */
export type Config = Omit<ConfigShape, "providers"> & { providers: Record<string, ProviderConfig> };
/** One entry of `providers`. */
export type ProviderConfig = ConfigShape["providers"][string] & { kind: ProviderKind };
/** One entry of `models`: extends or overrides the built-in catalog. */
export type ModelEntryConfig = Config["models"][string];
export type WorkerConfig = Config["worker"];
export type ToolOutputConfig = Config["toolOutput"];
/**
 * The `toolOutputCache` section, defaults filled (the output of {@link ToolOutputCacheSchema};
 * docs/design/context-management.md#the-tool-output-cache).
 */
export type ToolOutputCacheConfig = Config["toolOutputCache"];
/**
 * The `compaction` section, defaults filled (the output of {@link CompactionSchema};
 * docs/design/context-management.md#compaction).
 */
export type CompactionConfig = Config["compaction"];
/** The `toolOutputCache` section as a caller writes it: every field optional. */
export type ToolOutputCacheConfigInput = z.input<typeof ToolOutputCacheSchema>;
/** The `compaction` section as a caller writes it: every field optional. */
export type CompactionConfigInput = z.input<typeof CompactionSchema>;
export type PermissionsConfig = Config["permissions"];
export type PermissionRule = PermissionsConfig["rules"][number];
export type ScopeConfig = Config["scope"];
export type SandboxConfig = Config["sandbox"];
export type SessionConfig = Config["session"];
export type TaskConfig = Config["task"];
export type StatusLineConfig = NonNullable<Config["statusLine"]>;
export type NotificationsConfig = Config["notifications"];
export type LspConfig = Config["lsp"];
export type LspServerConfig = LspConfig["servers"][string];
