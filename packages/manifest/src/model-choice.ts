/**
 * Choosing the model on a loaded config, without loading it again: a
 * command-line `--model`, a resumed session's model, a model picked for
 * the key that is set. A bare name (`gpt-5`) is qualified through the
 * effective catalog; a ref whose provider part is a provider kind that no
 * source declares (`openai-chat/llama3.1`) gets a provider of that kind
 * with the key and base-URL variables of the kind's registry row.
 */
import { qualifyModelRef } from "./bare-model-name.ts";
import { PROVIDER_KINDS, type ProviderKind } from "./catalog.ts";
import { ConfigError, type ConfigIssue, describeFound, makeIssue } from "./config-error.ts";
import { formatPath } from "./config-path.ts";
import {
  type Config,
  checkReferences,
  MODEL_REF_EXPECTED,
  MODEL_REF_PATTERN,
  type ProviderConfig,
  ProviderSchema,
} from "./config-schema.ts";
import { providerOfKind } from "./provider-registry.ts";

/** The model to use, and where the choice comes from. */
export interface ModelChoice {
  /**
   * `"<provider>/<model>"`, or a bare model name the effective catalog (or
   * the config's `models`) knows. Default: the config's own `model`.
   */
  ref?: string;
  /** Where `ref` comes from, for `sources` and messages (`flag:--model`, `env:YOI_MODEL`). Default `override`. */
  source?: string;
  /** A base URL for the chosen model's provider, above every source. */
  baseURL?: string;
  /** Where `baseURL` comes from. Default `override`. */
  baseURLSource?: string;
  /** Where a provider kind's base-URL variable is read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * `loaded` with `choice` applied: `model` set (bare names qualified), a
 * provider of the ref's kind added when the ref names a kind no source
 * declares, the base URL set on the model's provider, and `sources` saying
 * where each came from. Throws a {@link ConfigError} naming `choice.source`
 * when the ref cannot be used (an unknown bare name, an undeclared
 * provider) or the base URL is not an http(s) URL. Nothing else is checked
 * again: the rest of the config was valid when loaded.
 */
export function withModel<T extends { config: Config; sources: Readonly<Record<string, string>> }>(
  loaded: T,
  choice: ModelChoice,
): T {
  const source = choice.source ?? "override";
  const baseURLSource = choice.baseURLSource ?? "override";
  const env = choice.env ?? process.env;
  const wanted = choice.ref ?? loaded.config.model;
  if (wanted === undefined) {
    if (choice.baseURL === undefined) return loaded;
    fail({
      code: "missing_value",
      file: baseURLSource,
      path: ["model"],
      expected: 'a model ("<provider>/<model>") for the base URL to apply to',
    });
  }
  const ref = qualifyModelRef(loaded.config, wanted);
  if (ref === undefined) {
    fail({
      code: "invalid_value",
      file: source,
      path: ["model"],
      detail: `unknown model ${JSON.stringify(wanted)}: not in yoi's catalog or the config's "models"; write it as "<provider>/<model>", e.g. anthropic/claude-sonnet-4-5 or openai-chat/${wanted}`,
    });
  }
  if (!MODEL_REF_PATTERN.test(ref))
    fail({
      code: "invalid_value",
      file: source,
      path: ["model"],
      expected: MODEL_REF_EXPECTED,
      found: describeFound(ref),
    });
  const provider = ref.slice(0, ref.indexOf("/"));
  const providers: Record<string, ProviderConfig> = { ...loaded.config.providers };
  const sources: Record<string, string> = { ...loaded.sources, model: source };
  if (!Object.hasOwn(providers, provider) && isKind(provider)) {
    const row = providerOfKind(provider);
    const url = env[row.baseURLEnv]?.trim();
    if (url) checkBaseURL(url, `env:${row.baseURLEnv}`, provider);
    providers[provider] = { kind: provider, apiKeyEnv: row.apiKeyEnv, ...(url ? { baseURL: url } : {}) };
    sources[formatPath(["providers", provider, "kind"])] = source;
    sources[formatPath(["providers", provider, "apiKeyEnv"])] = source;
    if (url) sources[formatPath(["providers", provider, "baseURL"])] = `env:${row.baseURLEnv}`;
  }
  if (choice.baseURL !== undefined && Object.hasOwn(providers, provider)) {
    checkBaseURL(choice.baseURL, baseURLSource, provider);
    providers[provider] = { ...(providers[provider] as ProviderConfig), baseURL: choice.baseURL };
    sources[formatPath(["providers", provider, "baseURL"])] = baseURLSource;
  }
  const config: Config = { ...loaded.config, model: ref, providers };
  const problems = checkReferences(config);
  if (problems.length > 0) {
    throw new ConfigError(
      problems.map((p) =>
        makeIssue({
          code: "invalid_value",
          file: source,
          path: p.path,
          expected: p.expected,
          found: describeFound(ref),
        }),
      ),
    );
  }
  return { ...loaded, config, sources };
}

function isKind(name: string): name is ProviderKind {
  return (PROVIDER_KINDS as readonly string[]).includes(name);
}

function checkBaseURL(url: string, file: string, provider: string): void {
  const result = ProviderSchema.shape.baseURL.safeParse(url);
  if (result.success) return;
  fail({
    code: "invalid_value",
    file,
    path: ["providers", provider, "baseURL"],
    expected: result.error.issues[0]?.message ?? "an http(s) URL",
    found: describeFound(url),
  });
}

function fail(issue: Parameters<typeof makeIssue>[0]): never {
  const made: ConfigIssue = makeIssue(issue);
  throw new ConfigError([made]);
}
