/**
 * From flags, environment and config files to a ready model: which provider
 * and model, its base URL and key, the context window, and where sessions
 * live. Every way this can fail is a CliError that says what to set.
 */
import { statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { type ClientWarning, createClient, type LlmClient, registerClientSecrets } from "@yoi/llm-client";
import {
  type Config,
  type ConfigInput,
  DEFAULT_PROVIDERS,
  ENV_PATH_PREFIX,
  type LoadedConfig,
  loadConfig,
  MODEL_CATALOG,
  type ProviderKind,
  parseModelRef,
  qualifyModelRef,
  type ResolvedModel,
  readConfigFiles,
  resolveModel,
} from "@yoi/manifest";
import type { SessionFlags } from "./args.ts";
import { CliError, usageError } from "./cli-error.ts";
import { EXIT } from "./exit-codes.ts";
import { groupDigits } from "./format-number.ts";
import { applyPermissionFlags } from "./permission-flags.ts";
import {
  isTrusted,
  type ProjectSettings,
  rememberTrust,
  sensitiveProjectSettings,
  withoutProjectSettings,
} from "./project-trust.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Context window assumed for a model the catalog does not know on a custom server. */
export const UNKNOWN_MODEL_CONTEXT_WINDOW = 131_072;

/** Key sent to a custom server when no key is set (Ollama, llama.cpp and vLLM ignore it). */
export const PLACEHOLDER_API_KEY = "yoi-no-key";

/** The usual variables of each provider kind. */
const PROVIDER_ENV: Record<ProviderKind, { key: string; baseURL: string; example: string }> = {
  anthropic: { key: "ANTHROPIC_API_KEY", baseURL: "ANTHROPIC_BASE_URL", example: "sk-ant-..." },
  "openai-responses": { key: "OPENAI_API_KEY", baseURL: "OPENAI_BASE_URL", example: "sk-..." },
  "openai-chat": { key: "OPENAI_API_KEY", baseURL: "OPENAI_BASE_URL", example: "sk-..." },
  gemini: { key: "GEMINI_API_KEY", baseURL: "GOOGLE_GEMINI_BASE_URL", example: "AIza..." },
};

/** Built-in provider names and the environment variable of their base URL. */
const BUILTIN_BASE_URL_ENV: Record<string, string> = {
  openai: "OPENAI_BASE_URL",
  anthropic: "ANTHROPIC_BASE_URL",
  gemini: "GOOGLE_GEMINI_BASE_URL",
};

/** Picked when only a key is set, in this order. */
const DEFAULT_MODELS: { env: string; model: string }[] = [
  { env: "ANTHROPIC_API_KEY", model: "anthropic/claude-opus-4-5" },
  { env: "OPENAI_API_KEY", model: "openai/gpt-5" },
  { env: "GEMINI_API_KEY", model: "gemini/gemini-2.5-pro" },
];

const OFFICIAL_HOSTS = new Set(["api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com"]);

export interface SetupOptions {
  /** Drop the project file's sensitive settings (an untrusted project; see project-trust.ts). */
  untrustedProject?: boolean;
  env?: Env;
  homeDir?: string;
  /** Default `process.cwd()`. */
  cwd?: string;
}

/** The effective config plus where values set by the CLI came from. */
export interface CliConfig {
  loaded: LoadedConfig;
  config: Config;
  /** `sources` with the CLI's own overrides named (`flag:--model`, `env:OPENAI_BASE_URL`, `auto`). */
  sources: Record<string, string>;
  cwd: string;
  homeDir: string;
  /** `<session.dir>` or `~/.yoi`: sessions and blobs live below it. */
  dataDir: string;
  /** `--dangerously-bypass-without-sandbox` was given. */
  allowUnsandboxedBypass?: boolean;
}

export interface ModelSetup extends CliConfig {
  resolved: ResolvedModel;
  /** The provider's base URL, when one is set. */
  baseURL: string | undefined;
  /** The base URL points at a server other than the provider's own API. */
  customServer: boolean;
  apiKey: string;
  /** Variable the key comes from (for messages; never the key). */
  keyEnv: string | undefined;
  /** Set for a model the catalog does not know (custom servers). */
  contextWindow: number | undefined;
  /** The window used for the context-fill display. */
  window: number;
  /** Things to tell the user once (an assumed window, an auto-picked model). */
  notes: string[];
}

/** Loads the config with the CLI's overrides (flags, provider env variables). Throws CliError/ConfigError. */
export async function loadCliConfig(flags: SessionFlags, options: SetupOptions = {}): Promise<CliConfig> {
  let env = options.env ?? process.env;
  const homeDir = path.resolve(options.homeDir ?? env.HOME ?? homedir());
  const cwd = path.resolve(options.cwd ?? process.cwd(), flags.cwd ?? ".");
  // statSync: one call, where an asynchronous one costs the way to the first request far more CPU.
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(cwd, { throwIfNoEntry: false });
  } catch {}
  if (!info?.isDirectory()) throw usageError(`--cwd: ${cwd} is not a directory`);
  // Read once for the two or three loads below.
  const files = await readConfigFiles({ cwd, homeDir });

  const overrides: ConfigInput & { providers?: Record<string, Record<string, string>> } = {};
  const cliSources: Record<string, string> = {};
  const providers: Record<string, Record<string, string>> = {};
  for (const [name, variable] of Object.entries(BUILTIN_BASE_URL_ENV)) {
    const value = env[variable]?.trim();
    if (!value) continue;
    providers[name] = { baseURL: value };
    cliSources[`providers.${name}.baseURL`] = `env:${variable}`;
  }
  let ref = flags.model ?? env.YOI_MODEL;
  if (ref !== undefined && !ref.includes("/")) {
    // A bare name (`gpt-5`): the catalog says which declared provider serves it.
    const bare = ref;
    const base = await loadConfig({
      files,
      env: { ...env, YOI_MODEL: undefined },
      overrides: { providers },
    });
    ref = qualifyModelRef(base.config, bare);
    if (ref === undefined) {
      throw usageError(
        `unknown model "${bare}": not in yoi's catalog or the config's "models"; write it as "<provider>/<model>", e.g. anthropic/claude-sonnet-4-5 or openai-chat/${bare}`,
      );
    }
    if (flags.model !== undefined) flags = { ...flags, model: ref };
    else env = { ...env, YOI_MODEL: ref };
  }
  const parsed = ref === undefined ? undefined : parseModelRef(ref);
  if (ref !== undefined && parsed === undefined) {
    throw usageError(
      `--model must be "<provider>/<model>" or a model name from the catalog, e.g. anthropic/claude-sonnet-4-5, gpt-5 or openai-chat/llama3.1; got "${ref}"`,
    );
  }
  if (flags.model !== undefined) {
    overrides.model = flags.model;
    cliSources.model = "flag:--model";
  }
  // A first pass, without a kind-named model ref (`openai-chat/llama3.1`) whose provider is declared below,
  // says which model the config names and whether a kind-named provider is declared. Not needed with a
  // ref when that is known without it: the provider is not a kind, or always declared (a built-in one),
  // or only the defaults declare providers (no config file, no YOI_CONFIG__providers variable).
  const kindRef = parsed !== undefined && isKind(parsed.provider);
  const onlyDefaultProviders =
    files.found.length === 0 && !Object.keys(env).some((k) => k.startsWith(`${ENV_PATH_PREFIX}providers`));
  const firstEnv = kindRef && flags.model === undefined ? { ...env, YOI_MODEL: undefined } : env;
  const first =
    parsed !== undefined &&
    (!kindRef || Object.hasOwn(DEFAULT_PROVIDERS, parsed.provider) || onlyDefaultProviders)
      ? undefined
      : await loadConfig({
          files,
          env: firstEnv,
          overrides: { ...(kindRef ? {} : overrides), providers },
        });
  const declared = (name: string) =>
    first
      ? Object.hasOwn(first.config.providers, name)
      : Object.hasOwn(DEFAULT_PROVIDERS, name) || Object.hasOwn(providers, name);
  // `openai-chat/<model>` etc.: a provider of that kind, keyed and based like the provider's usual variables.
  const modelRef = ref ?? first?.config.model;
  const providerName = modelRef === undefined ? undefined : parseModelRef(modelRef)?.provider;
  if (providerName && isKind(providerName) && !declared(providerName)) {
    const vars = PROVIDER_ENV[providerName];
    const baseURL = env[vars.baseURL]?.trim();
    providers[providerName] = { kind: providerName, apiKeyEnv: vars.key, ...(baseURL ? { baseURL } : {}) };
    cliSources[`providers.${providerName}.kind`] = "flag:--model";
    cliSources[`providers.${providerName}.apiKeyEnv`] = "flag:--model";
    if (baseURL) cliSources[`providers.${providerName}.baseURL`] = `env:${vars.baseURL}`;
  }
  if (flags.baseURL !== undefined) {
    if (providerName === undefined) {
      const served = await serverModels(flags.baseURL);
      throw usageError(
        `--base-url needs a model to apply to: add --model, e.g. --model openai-chat/${served[0] ?? "llama3.1"} --base-url ${flags.baseURL}${modelList(served)}`,
      );
    }
    providers[providerName] = { ...providers[providerName], baseURL: flags.baseURL };
    cliSources[`providers.${providerName}.baseURL`] = "flag:--base-url";
  }
  const loaded = await loadConfig({ files, env, overrides: { ...overrides, providers } });
  const sources: Record<string, string> = { ...loaded.sources };
  for (const [key, source] of Object.entries(cliSources))
    if (sources[key] === "override") sources[key] = source;
  const dataDir = loaded.config.session.dir ?? path.join(homeDir, ".yoi");
  const cli: CliConfig = { loaded, config: loaded.config, sources, cwd, homeDir, dataDir };
  return applyPermissionFlags(options.untrustedProject ? await withoutProjectSettings(cli, env) : cli, flags);
}

/** Loads the config and resolves the model, its key and window. Throws CliError (exit 2) when something is missing. */
export async function setupModel(flags: SessionFlags, options: SetupOptions = {}): Promise<ModelSetup> {
  const env = options.env ?? process.env;
  let cli = await loadCliConfig(flags, options);
  const notes: string[] = [];
  if (cli.config.model === undefined) {
    const picked = DEFAULT_MODELS.find((d) => env[d.env]?.trim());
    if (picked === undefined) {
      const base = env.OPENAI_BASE_URL?.trim();
      throw new CliError(nothingConfigured(env, base ? await serverModels(base) : []), EXIT.usage);
    }
    cli = await loadCliConfig({ ...flags, model: picked.model }, options);
    cli.sources.model = `auto (${picked.env} is set)`;
    notes.push(`using ${picked.model} (${picked.env} is set; choose another with --model)`);
  }
  const resolved = resolveModel(cli.config);
  const baseURL = resolved.provider.baseURL;
  const customServer = baseURL !== undefined && !OFFICIAL_HOSTS.has(hostOf(baseURL));
  let contextWindow: number | undefined;
  if (resolved.info === undefined) {
    if (!customServer) throw usageError(unknownModel(resolved));
    contextWindow = UNKNOWN_MODEL_CONTEXT_WINDOW;
    notes.push(
      `model "${resolved.model}" is not in yoi's catalog; assuming a ${groupDigits(contextWindow)}-token context window (set its real one in .yoi/config.jsonc "models")`,
    );
  }
  const keyEnv = resolved.provider.apiKeyEnv;
  let apiKey = keyEnv === undefined ? undefined : env[keyEnv]?.trim();
  if (!apiKey) {
    if (!customServer) {
      const example = PROVIDER_ENV[resolved.kind].example;
      throw usageError(
        keyEnv === undefined
          ? `provider "${resolved.providerName}" has no apiKeyEnv: set providers.${resolved.providerName}.apiKeyEnv in .yoi/config.jsonc to the variable that holds its key`
          : `no API key for ${resolved.providerName}: set ${keyEnv} (export ${keyEnv}=${example}), or try yoi demo without one`,
      );
    }
    apiKey = PLACEHOLDER_API_KEY;
  }
  const window = contextWindow ?? resolved.info?.maxInputTokens ?? resolved.info?.contextWindow ?? 0;
  // From here on no stderr line, stream-json line or session record may show these.
  registerClientSecrets({ apiKey, headers: resolved.provider.headers, baseURL });
  return { ...cli, resolved, baseURL, customServer, apiKey, keyEnv, contextWindow, window, notes };
}

/** The client for a setup (the provider's SDK loads on the first request). */
export function createModelClient(
  setup: ModelSetup,
  onWarning?: (warning: ClientWarning) => void,
): LlmClient {
  const { resolved } = setup;
  return createClient({
    provider: resolved.kind,
    model: resolved.model,
    apiKey: setup.apiKey,
    ...(setup.baseURL ? { baseURL: setup.baseURL } : {}),
    ...(resolved.provider.headers ? { headers: resolved.provider.headers } : {}),
    ...(onWarning ? { onWarning } : {}),
    // A capability declared in the catalog or config overrides the adapter's default.
    ...(resolved.info?.capabilities.systemMessagesAnywhere === undefined
      ? {}
      : { systemMessagesAnywhere: resolved.info.capabilities.systemMessagesAnywhere }),
  });
}

function isKind(name: string): name is ProviderKind {
  return Object.hasOwn(PROVIDER_ENV, name);
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

function unknownModel(resolved: ResolvedModel): string {
  const known = MODEL_CATALOG.filter((m) => m.providers.includes(resolved.kind))
    .slice(0, 4)
    .map((m) => m.id);
  return (
    `unknown model "${resolved.model}" for ${resolved.providerName} (known: ${known.join(", ")}, ...); ` +
    `to use it anyway declare it in .yoi/config.jsonc: "models": { "${resolved.model}": { "provider": "${resolved.providerName}", "contextWindow": 200000, "maxOutputTokens": 8192 } }`
  );
}

/**
 * Model ids an OpenAI-compatible server offers (`GET <base>/models`), to
 * suggest one; empty when it does not answer within a moment.
 */
async function serverModels(baseURL: string): Promise<string[]> {
  try {
    const response = await fetch(`${baseURL.replace(/\/+$/, "")}/models`, {
      signal: AbortSignal.timeout(1500),
    });
    if (!response.ok) return [];
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    return (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === "string");
  } catch {
    return [];
  }
}

function modelList(ids: readonly string[]): string {
  if (ids.length === 0) return "";
  const shown = ids.slice(0, 8).join(", ");
  return ` (the server offers: ${shown}${ids.length > 8 ? `, and ${ids.length - 8} more` : ""})`;
}

function nothingConfigured(env: Env, served: readonly string[] = []): string {
  const lines = [
    "no model is configured. Set one of:",
    "  export ANTHROPIC_API_KEY=sk-ant-...    # then yoi uses anthropic/claude-opus-4-5",
    "  export OPENAI_API_KEY=sk-...           # then yoi uses openai/gpt-5",
    "  export GEMINI_API_KEY=AIza...          # then yoi uses gemini/gemini-2.5-pro",
    "  yoi --model openai-chat/llama3.1 --base-url http://127.0.0.1:11434/v1   # a local OpenAI-compatible server (Ollama, llama.cpp, vLLM); no key needed",
    'or choose a model in ~/.yoi/config.jsonc ("model": "anthropic/claude-sonnet-4-5"), .yoi/config.jsonc, YOI_MODEL or --model.',
    "No key at hand? yoi demo runs a scripted session offline.",
  ];
  if (env.OPENAI_BASE_URL?.trim()) {
    lines.splice(
      1,
      0,
      `  (OPENAI_BASE_URL is set: add --model openai-chat/${served[0] ?? "<model>"} to use the server at ${env.OPENAI_BASE_URL.trim()}${modelList(served)})`,
    );
  }
  return lines.join("\n");
}

/**
 * Applies the project's sensitive settings only when the project is
 * trusted: remembered, YOI_TRUST_PROJECT=1, or `ask` says yes (remembered).
 * Otherwise the setup is rebuilt without them and `onIgnored` is told.
 */
export async function enforceProjectTrust(
  setup: ModelSetup,
  flags: SessionFlags,
  options: SetupOptions & {
    ask?: (settings: ProjectSettings) => Promise<boolean>;
    onIgnored?: (settings: ProjectSettings) => void;
  } = {},
): Promise<ModelSetup> {
  const settings = sensitiveProjectSettings(setup);
  if (settings === undefined) return setup;
  const env = options.env ?? process.env;
  if (env.YOI_TRUST_PROJECT === "1" || (await isTrusted(setup.homeDir, settings))) return setup;
  if (options.ask && (await options.ask(settings))) {
    await rememberTrust(setup.homeDir, settings);
    return setup;
  }
  options.onIgnored?.(settings);
  return setupModel(flags, { ...options, untrustedProject: true });
}
