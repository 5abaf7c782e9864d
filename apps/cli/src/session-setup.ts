/**
 * From flags, environment and config files to a ready model: the config is
 * loaded once per start (with the project's trust decided as it loads),
 * and the model is chosen on what was loaded (`--model` or `YOI_MODEL`, a
 * resumed session's, or the one whose key is set), with its key, window
 * and base URL. Every way this can fail is a CliError that says what to set.
 */
import { statSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { type ModelEndpoint, modelEndpoint, registerClientSecrets, registerSecret } from "@yoi/llm-client";
import {
  builtinProvider,
  type Config,
  type Credentials,
  CredentialsError,
  type LoadedConfig,
  loadConfig,
  MODEL_CATALOG,
  type ProviderInfo,
  parseModelRef,
  providerOfKind,
  qualifyModelRef,
  type ResolvedModel,
  readCredentials,
  resolveUserPath,
  withModel,
} from "@yoi/manifest";
import type { SessionFlags } from "./args.ts";
import { CliError, usageError } from "./cli-error.ts";
import { EXIT } from "./exit-codes.ts";
import { groupDigits } from "./format-number.ts";
import { applyPermissionFlags } from "./permission-flags.ts";
import { projectTrust, type TrustPrompt } from "./project-trust.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Context window assumed for a model the catalog does not know on a custom server. */
export const UNKNOWN_MODEL_CONTEXT_WINDOW = 131_072;

/** When nothing names a model, the first of these whose key is set gives it (its registry row's default model). */
const AUTO_PICK: readonly ProviderInfo[] = ["anthropic", "openai", "gemini"].map(
  (name) => builtinProvider(name) as ProviderInfo,
);

export interface SetupOptions {
  env?: Env;
  homeDir?: string;
  /** Default `process.cwd()`. */
  cwd?: string;
  /**
   * Whether the project file's settings that widen yoi's reach apply (see
   * @yoi/manifest `ProjectTrust`): `true`, `false`, or the CLI's rule (a
   * {@link TrustPrompt}): YOI_TRUST_PROJECT=1 or an earlier yes for these
   * very settings, else `ask` when given (a yes is remembered), else not.
   * Default `true`, for the commands that only show the config.
   */
  trust?: boolean | TrustPrompt;
  /** What the caller calls the model and base URL it was given (default: the CLI's flags). */
  names?: ModelInputNames;
}

/**
 * How the user gave the model and the base URL, for messages about them:
 * the CLI's flags, or the fields of `yoi serve`'s request body.
 */
export interface ModelInputNames {
  model: string;
  baseURL: string;
  /** Both as the user would write them, e.g. `--model openai-chat/llama3.1 --base-url http://...`. */
  example(model: string, baseURL?: string): string;
}

const FLAG_NAMES: ModelInputNames = {
  model: "--model",
  baseURL: "--base-url",
  example: (model, baseURL) => `--model ${model}${baseURL === undefined ? "" : ` --base-url ${baseURL}`}`,
};

/** The effective config plus where values set by the CLI came from. */
export interface CliConfig {
  loaded: LoadedConfig;
  config: Config;
  /** `sources` with the CLI's own choices named (`flag:--model`, `env:YOI_MODEL`, `auto (...)`). */
  sources: Readonly<Record<string, string>>;
  cwd: string;
  homeDir: string;
  /** `<session.dir>` or `~/.yoi`: sessions and blobs live below it. */
  dataDir: string;
  /** `--dangerously-bypass-without-sandbox` was given. */
  allowUnsandboxedBypass?: boolean;
  /** `--append-system-prompt`: added to the end of the session's system prompt. */
  appendSystem?: string;
  /** Keys `yoi setup` saved (`~/.yoi/credentials.json`), by variable; the environment wins over them. */
  credentials: Credentials;
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
  /** Whether the key came from the environment or from the keys `yoi setup` saved. */
  keySource: "env" | "credentials" | undefined;
  /** Set for a model the catalog does not know (custom servers). */
  contextWindow: number | undefined;
  /** The window used for the context-fill display. */
  window: number;
  /** Things to tell the user once (an assumed window, an auto-picked model). */
  notes: string[];
}

/**
 * The one config load of a start: the user and project files and the
 * environment, the project's trust decided (see {@link SetupOptions.trust};
 * what was left out is `loaded.ignored`). No model is chosen and no flag
 * applied yet: see {@link applySessionFlags}. Throws CliError/ConfigError.
 */
export async function loadProjectConfig(
  flags: Pick<SessionFlags, "cwd">,
  options: SetupOptions = {},
): Promise<CliConfig> {
  const env = options.env ?? process.env;
  const homeDir = path.resolve(options.homeDir ?? env.HOME ?? homedir());
  const cwd = path.resolve(options.cwd ?? process.cwd(), flags.cwd ?? ".");
  // statSync: one call, where an asynchronous one costs the way to the first request far more CPU.
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(cwd, { throwIfNoEntry: false });
  } catch {}
  if (!info?.isDirectory()) throw usageError(`--cwd: ${cwd} is not a directory`);
  const trust = options.trust ?? true;
  // The saved keys are read while the config loads (neither needs the other).
  const saved = loadCredentials(homeDir);
  saved.catch(() => {}); // awaited below, after the config's own errors
  const loaded = await loadConfig({
    cwd,
    homeDir,
    // YOI_MODEL is chosen like --model, on the loaded config (a bare name or a provider kind may be given).
    env: { ...env, YOI_MODEL: undefined },
    trust: typeof trust === "boolean" ? trust : projectTrust(homeDir, env, trust),
  });
  const dataDir = loaded.config.session.dir ?? path.join(homeDir, ".yoi");
  const credentials = await saved;
  // Every saved key is masked wherever yoi writes text, not only the one this session's provider uses.
  for (const key of Object.values(credentials)) registerSecret(key);
  return { loaded, config: loaded.config, sources: loaded.sources, cwd, homeDir, dataDir, credentials };
}

/** The saved keys; a damaged file is a usage error naming it (nothing is sent with a key half read). */
export async function loadCredentials(homeDir: string): Promise<Credentials> {
  try {
    return await readCredentials(homeDir);
  } catch (error) {
    if (CredentialsError.isInstance(error)) throw usageError(error.message);
    throw error;
  }
}

/**
 * The session flags on a loaded config: the model of `--model` (else
 * `YOI_MODEL`) with `--base-url` on its provider, then the permission
 * flags. Loads nothing. Throws CliError/ConfigError.
 */
export async function applySessionFlags(
  base: CliConfig,
  flags: SessionFlags,
  env: Env = process.env,
  names: ModelInputNames = FLAG_NAMES,
): Promise<CliConfig> {
  const fromEnv = env.YOI_MODEL?.trim() || undefined;
  const ref = flags.model ?? fromEnv;
  const refName = flags.model !== undefined ? names.model : "YOI_MODEL";
  if (ref?.includes("/") && parseModelRef(ref) === undefined) {
    throw usageError(
      `${refName} must be "<provider>/<model>" or a model name from the catalog, e.g. anthropic/claude-sonnet-4-5, gpt-5 or openai-chat/llama3.1; got "${ref}"`,
    );
  }
  if (ref !== undefined && qualifyModelRef(base.config, ref) === undefined) {
    throw usageError(
      `unknown model "${ref}": not in yoi's catalog or the config's "models"; write it as "<provider>/<model>", e.g. anthropic/claude-sonnet-4-5 or openai-chat/${ref}`,
    );
  }
  if (flags.baseURL !== undefined && (ref ?? base.config.model) === undefined) {
    const served = await serverModels(flags.baseURL);
    throw usageError(
      `${names.baseURL} needs a model to apply to: add ${names.model}, e.g. ${names.example(`openai-chat/${served[0] ?? "llama3.1"}`, flags.baseURL)}${modelList(served)}`,
    );
  }
  const chosen =
    ref === undefined && flags.baseURL === undefined
      ? base
      : withModel(base, {
          ...(ref !== undefined
            ? { ref, source: flags.model !== undefined ? `flag:${names.model}` : "env:YOI_MODEL" }
            : {}),
          ...(flags.baseURL !== undefined
            ? { baseURL: flags.baseURL, baseURLSource: `flag:${names.baseURL}` }
            : {}),
          env,
        });
  const withFlags = applyPermissionFlags(
    withAddedDirs(withMaxTurns(chosen, flags.maxTurns), flags.addDirs),
    flags,
  );
  return flags.appendSystem === undefined ? withFlags : { ...withFlags, appendSystem: flags.appendSystem };
}

/**
 * `--add-dir`: more write roots besides the scope's (the scope root itself,
 * or the configured `scope.writeRoots`), each an existing directory given
 * relative to where yoi was started. The sandbox binds them writable, with
 * their own protected paths.
 */
function withAddedDirs(cli: CliConfig, dirs: readonly string[] | undefined): CliConfig {
  if (dirs === undefined || dirs.length === 0) return cli;
  const added = dirs.map((dir) => {
    // As the shell gave it: relative to where yoi was started, not to -C.
    const abs = resolveUserPath(dir, process.cwd(), cli.homeDir);
    let info: ReturnType<typeof statSync> | undefined;
    try {
      info = statSync(abs, { throwIfNoEntry: false });
    } catch {}
    if (!info?.isDirectory()) throw usageError(`--add-dir: ${abs} is not a directory`);
    return abs;
  });
  const scope = cli.config.scope;
  return {
    ...cli,
    config: { ...cli.config, scope: { ...scope, writeRoots: [...(scope.writeRoots ?? ["."]), ...added] } },
    sources: { ...cli.sources, "scope.writeRoots": "flag:--add-dir" },
  };
}

/** `--max-turns` on the loaded config, over every file and variable that set `worker.maxTurns`. */
function withMaxTurns(cli: CliConfig, maxTurns: number | undefined): CliConfig {
  if (maxTurns === undefined) return cli;
  return {
    ...cli,
    config: { ...cli.config, worker: { ...cli.config.worker, maxTurns } },
    sources: { ...cli.sources, "worker.maxTurns": "flag:--max-turns" },
  };
}

/** {@link loadProjectConfig} and {@link applySessionFlags}: the config a command runs with. */
export async function loadCliConfig(flags: SessionFlags, options: SetupOptions = {}): Promise<CliConfig> {
  return applySessionFlags(
    await loadProjectConfig(flags, options),
    flags,
    options.env ?? process.env,
    options.names,
  );
}

/**
 * The model of a config with the flags applied (see {@link applySessionFlags}):
 * the one whose key is set when nothing names one, then its provider, key
 * and window. Loads nothing. Throws CliError (exit 2) when something is missing.
 */
export async function modelSetup(
  cli: CliConfig,
  env: Env = process.env,
  names: ModelInputNames = FLAG_NAMES,
): Promise<ModelSetup> {
  const notes: string[] = [];
  if (cli.config.model === undefined) {
    // A key in the environment first, then one `yoi setup` saved.
    const picked =
      AUTO_PICK.find((row) => env[row.apiKeyEnv]?.trim()) ??
      AUTO_PICK.find((row) => cli.credentials[row.apiKeyEnv]?.trim());
    if (picked === undefined) {
      const base = env.OPENAI_BASE_URL?.trim();
      throw new CliError(nothingConfigured(env, base ? await serverModels(base) : []), EXIT.usage);
    }
    const ref = `${picked.name}/${picked.defaultModel}`;
    const why = env[picked.apiKeyEnv]?.trim() ? `${picked.apiKeyEnv} is set` : "its key is saved (yoi setup)";
    cli = withModel(cli, { ref, source: `auto (${why})`, env });
    notes.push(`using ${ref} (${why}; choose another with ${names.model})`);
  }
  const endpoint: ModelEndpoint = modelEndpoint(cli.config, { env, credentials: cli.credentials });
  const { resolved, baseURL, customServer, keyEnv, keySource } = endpoint;
  let contextWindow: number | undefined;
  if (resolved.info === undefined) {
    if (!customServer) throw usageError(unknownModel(resolved));
    contextWindow = UNKNOWN_MODEL_CONTEXT_WINDOW;
    notes.push(
      `model "${resolved.model}" is not in yoi's catalog; assuming a ${groupDigits(contextWindow)}-token context window (set its real one in .yoi/config.jsonc "models")`,
    );
  }
  const apiKey = endpoint.apiKey;
  if (apiKey === undefined) {
    const example = providerOfKind(resolved.kind).keyExample;
    throw usageError(
      keyEnv === undefined
        ? `provider "${resolved.providerName}" has no apiKeyEnv: set providers.${resolved.providerName}.apiKeyEnv in .yoi/config.jsonc to the variable that holds its key`
        : `no API key for ${resolved.providerName}: run yoi setup, or set ${keyEnv} (export ${keyEnv}=${example}); yoi demo runs without one`,
    );
  }
  const window = contextWindow ?? resolved.info?.maxInputTokens ?? resolved.info?.contextWindow ?? 0;
  // From here on no stderr line, stream-json line or session record may show these.
  registerClientSecrets({ apiKey, headers: resolved.provider.headers, baseURL });
  return { ...cli, resolved, baseURL, customServer, apiKey, keyEnv, keySource, contextWindow, window, notes };
}

/**
 * Whether {@link modelSetup} would stop for want of a key that `yoi setup`
 * can save: nothing names a model and no built-in provider's key is set or
 * saved (`{}`), or the model's built-in provider has no key (`{ provider }`).
 * Undefined when a key is there, or when a set-up would not help (a custom
 * server, a provider of the config's own).
 */
export function missingKey(cli: CliConfig, env: Env = process.env): { provider?: ProviderInfo } | undefined {
  if (cli.config.model === undefined) {
    const any = AUTO_PICK.some((row) => env[row.apiKeyEnv]?.trim() || cli.credentials[row.apiKeyEnv]?.trim());
    return any || env.OPENAI_BASE_URL?.trim() ? undefined : {};
  }
  try {
    const endpoint = modelEndpoint(cli.config, { env, credentials: cli.credentials });
    if (endpoint.apiKey !== undefined) return undefined;
    const row = AUTO_PICK.find((r) => r.name === endpoint.resolved.providerName);
    return row === undefined ? undefined : { provider: row };
  } catch {
    return undefined;
  }
}

/** Loads the config and sets the model up: {@link loadCliConfig} and {@link modelSetup}. */
export async function setupModel(flags: SessionFlags, options: SetupOptions = {}): Promise<ModelSetup> {
  const env = options.env ?? process.env;
  return modelSetup(await loadCliConfig(flags, options), env, options.names);
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
    "no model is configured and no API key is set. Run yoi setup to save a key, or set one of:",
    ...AUTO_PICK.map(
      (row) =>
        `  ${`export ${row.apiKeyEnv}=${row.keyExample}`.padEnd(39)}# then yoi uses ${row.name}/${row.defaultModel}`,
    ),
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
