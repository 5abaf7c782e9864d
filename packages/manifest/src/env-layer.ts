import type { ConfigIssue } from "./config-error.ts";
import { makeIssue } from "./config-error.ts";
import { formatPath, isPlainObject, type PathSegment } from "./config-path.ts";
import { ConfigLayerSchema } from "./config-schema.ts";
import { PROVIDER_REGISTRY } from "./provider-registry.ts";
import { leafKindAt } from "./schema-walk.ts";
import { isSecretPath } from "./validate-layer.ts";

/** One documented `YOI_*` variable and the config field it sets. */
export interface EnvVariable {
  name: string;
  /** Dotted path of the field it sets. */
  path: string;
}

/**
 * The named `YOI_*` variables. Any other field can be set with the path form
 * `YOI_CONFIG__<key>__<key>...` (keys as written in the file, case-sensitive),
 * e.g. `YOI_CONFIG__worker__maxTurns=10` or
 * `YOI_CONFIG__providers__local__baseURL=http://localhost:11434/v1`.
 *
 * Values are read by the field's type: numbers as numbers; booleans as
 * `true/false`, `1/0`, `yes/no`, `on/off`; `null` for fields that take null;
 * arrays and objects as JSON; strings as they are. An empty value counts as
 * unset. Other `YOI_*` variables are not config and are ignored.
 *
 * The built-in providers' own base-URL variables (`OPENAI_BASE_URL`,
 * `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`; see PROVIDER_REGISTRY),
 * which their SDKs honour too, set `providers.<name>.baseURL`, over a
 * `YOI_CONFIG__providers__<name>__baseURL`.
 */
export const ENV_VARIABLES: readonly EnvVariable[] = Object.freeze([
  { name: "YOI_MODEL", path: "model" },
  { name: "YOI_MAX_TOKENS", path: "worker.maxTokens" },
  { name: "YOI_MAX_TURNS", path: "worker.maxTurns" },
  { name: "YOI_TEMPERATURE", path: "worker.temperature" },
  { name: "YOI_TOP_P", path: "worker.topP" },
  { name: "YOI_REASONING_EFFORT", path: "worker.reasoning.effort" },
  { name: "YOI_REASONING_BUDGET_TOKENS", path: "worker.reasoning.budgetTokens" },
  { name: "YOI_TOOL_TIMEOUT_MS", path: "worker.toolTimeoutMs" },
  { name: "YOI_TOOL_OUTPUT_MAX_BYTES", path: "toolOutput.maxBytes" },
  { name: "YOI_TOOL_OUTPUT_CACHE_ENABLED", path: "toolOutputCache.enabled" },
  { name: "YOI_TOOL_OUTPUT_CACHE_BUDGET_TOKENS", path: "toolOutputCache.contextBudgetTokens" },
  { name: "YOI_COMPACTION_ENABLED", path: "compaction.enabled" },
  { name: "YOI_COMPACTION_AUTO", path: "compaction.auto" },
  { name: "YOI_COMPACTION_THRESHOLD_RATIO", path: "compaction.thresholdRatio" },
  { name: "YOI_COMPACTION_MODEL", path: "compaction.model" },
  { name: "YOI_SCOPE_ROOT", path: "scope.root" },
  { name: "YOI_SESSION_DIR", path: "session.dir" },
]);

/** Prefix of the path form; `__` separates keys. */
export const ENV_PATH_PREFIX = "YOI_CONFIG__";

/** A layer built from the environment, with the variable behind each field. */
export interface EnvLayer {
  value: Record<string, unknown>;
  /** Formatted field path -> variable name. */
  origins: Map<string, string>;
  issues: ConfigIssue[];
}

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Read the `YOI_*` variables into a config layer (not yet validated against the schema). */
export function readEnvLayer(env: Readonly<Record<string, string | undefined>>, home: string): EnvLayer {
  const value: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  const byName = new Map(ENV_VARIABLES.map((v) => [v.name, v.path.split(".")]));
  // Sorted so the result does not depend on the environment's order.
  for (const name of Object.keys(env).sort()) {
    const raw = env[name];
    if (raw === undefined || raw === "" || !name.startsWith("YOI_")) continue;
    const path: PathSegment[] | undefined = name.startsWith(ENV_PATH_PREFIX)
      ? name.slice(ENV_PATH_PREFIX.length).split("__")
      : byName.get(name);
    if (!path) continue;
    if (path.some((s) => s === "")) {
      issues.push(
        makeIssue(
          {
            code: "invalid_value",
            file: `env:${name}`,
            detail: `expected a variable name like YOI_CONFIG__worker__maxTurns (keys separated by "__"), found an empty key`,
          },
          home,
        ),
      );
      continue;
    }
    const converted = convert(raw, path);
    if (!converted.ok) {
      issues.push(
        makeIssue(
          { code: "syntax_error", file: `env:${name}`, path, detail: `expected JSON (${converted.error})` },
          home,
        ),
      );
      continue;
    }
    setAt(value, path, converted.value);
    origins.set(formatPath(path), name);
  }
  for (const provider of PROVIDER_REGISTRY) {
    const url = env[provider.baseURLEnv]?.trim();
    if (!url) continue;
    const path = ["providers", provider.name, "baseURL"];
    setAt(value, path, url);
    origins.set(formatPath(path), provider.baseURLEnv);
  }
  return { value, origins, issues };
}

function convert(
  raw: string,
  path: readonly PathSegment[],
): { ok: true; value: unknown } | { ok: false; error: string } {
  const leaf = leafKindAt(ConfigLayerSchema, path);
  const text = raw.trim();
  if (leaf?.nullable && text === "null") return { ok: true, value: null };
  switch (leaf?.kind) {
    case "number":
      return { ok: true, value: NUMBER.test(text) ? Number(text) : raw };
    case "boolean": {
      const lower = text.toLowerCase();
      return { ok: true, value: TRUE.has(lower) ? true : FALSE.has(lower) ? false : raw };
    }
    case "json":
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch (err) {
        // JSON.parse quotes the input in its message; a header object may hold a credential.
        if (isSecretPath(path)) return { ok: false, error: "not valid JSON; the value is not shown" };
        return { ok: false, error: (err as Error).message };
      }
    default:
      // Strings, enums, and unknown paths (the schema reports those as unknown keys).
      return { ok: true, value: raw };
  }
}

function setAt(target: Record<string, unknown>, path: readonly PathSegment[], value: unknown): void {
  let cur = target;
  for (const seg of path.slice(0, -1)) {
    const next = cur[seg];
    if (isPlainObject(next)) cur = next;
    else {
      const created: Record<string, unknown> = {};
      cur[seg] = created;
      cur = created;
    }
  }
  cur[path[path.length - 1] as string] = value;
}
