/**
 * `createClient`: one streaming client over every provider. It owns what is
 * the same for all of them — applying model capabilities, repairing tool-call
 * pairing, the retry policy, the first-event and idle timeouts, cancellation
 * and the stream contract of `event.ts` — and loads the provider's adapter
 * (and with it the provider's SDK) lazily, on the first `stream` call.
 */
import { type ModelCapabilities, providerOfKind } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import type { AdapterFactory, ProviderAdapter } from "./adapters/adapter.ts";
import { ClientStream, type StreamSettings } from "./client-stream.ts";
import { LlmError } from "./errors.ts";
import type { Event } from "./event.ts";
import { PairingCheck } from "./history.ts";
import type { ProviderKind } from "./item.ts";
import { findModelCapabilities, isProviderKind } from "./model-info.ts";
import { redactSecrets, registerClientSecrets } from "./redact.ts";
import type { ClientOptions, LlmClient, Request, StreamOptions } from "./request.ts";
import { resolveRetryPolicy } from "./retry.ts";

/** Defaults of {@link TimeoutOptions}. */
export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/**
 * Each provider's adapter, imported on its first request. The adapter
 * imports its SDK, an optional peer dependency: an application installs
 * only the SDKs of the providers it uses (see `PROVIDER_REGISTRY`'s
 * `sdkPackage`), and a missing one is {@link missingSdkError}.
 */
const PROVIDERS: Record<ProviderKind, () => Promise<AdapterFactory>> = {
  anthropic: () =>
    withSdk("anthropic", async () => (await import("./adapters/anthropic/index.ts")).createAnthropicAdapter),
  "openai-chat": () =>
    withSdk(
      "openai-chat",
      async () => (await import("./adapters/openai-chat/index.ts")).createOpenAIChatAdapter,
    ),
  "openai-responses": () =>
    withSdk(
      "openai-responses",
      async () => (await import("./adapters/openai-responses/index.ts")).createOpenAIResponsesAdapter,
    ),
  gemini: () =>
    withSdk("gemini", async () => (await import("./adapters/gemini/index.ts")).createGeminiAdapter),
};

/** Loads an adapter; the SDK it imports not being installed becomes {@link missingSdkError}. */
async function withSdk(kind: ProviderKind, load: () => Promise<AdapterFactory>): Promise<AdapterFactory> {
  try {
    return await load();
  } catch (error) {
    const sdk = providerOfKind(kind).sdkPackage;
    if (isMissingPackage(error, sdk)) throw missingSdkError(kind, sdk, error);
    throw error;
  }
}

/** Node's "Cannot find package 'openai' imported from ..." for this package (a subpath import names the package too). */
function isMissingPackage(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return errorMessage(error).includes(`'${name}'`) || errorMessage(error).includes(`"${name}"`);
}

/**
 * A provider whose SDK is not installed: raised on the client's first
 * request, before anything is sent, naming the package and how to add it.
 */
function missingSdkError(kind: ProviderKind, sdk: string, cause: unknown): LlmError {
  return new LlmError(
    "missing_sdk",
    `${kind}: the provider's SDK is not installed (the package ${sdk}, an optional peer dependency of ` +
      `@yoi/llm-client); install it in your project: npm install ${sdk}`,
    { provider: kind, retryable: false, cause },
  );
}

/** The provider kinds `createClient` accepts. */
export const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

/**
 * Creates a client for one provider and model. Throws `LlmError("config")`
 * at once for options that cannot work (unknown provider, empty model,
 * negative timeouts); everything else is reported on the stream.
 */
export function createClient(options: ClientOptions): LlmClient {
  if (!isProviderKind(options.provider)) {
    throw new LlmError(
      "config",
      `unknown provider ${JSON.stringify(options.provider)}; use one of ${PROVIDER_KINDS.join(", ")} ` +
        "(a provider that is not built in plugs in with createClientWithAdapter from @yoi/llm-client/adapter)",
    );
  }
  return createClientWithAdapter(options, PROVIDERS[options.provider]);
}

/**
 * `createClient` over a given adapter factory: the retry policy, timeouts
 * and stream contract around an adapter that is not built in (tests, a
 * provider under development). `options.provider` may be the adapter's own
 * name. Exported from `@yoi/llm-client/adapter`, not the package index.
 */
export function createClientWithAdapter(
  options: ClientOptions,
  load: () => Promise<AdapterFactory>,
): LlmClient {
  if (typeof options.model !== "string" || options.model.trim() === "") {
    throw new LlmError(
      "config",
      `${options.provider}: options.model must name a model, e.g. the provider's model id`,
    );
  }
  // Before anything can fail: no message, log or record may show these.
  registerClientSecrets(options);
  rejectUserinfo(options);
  const policy = resolveRetryPolicy(options.retry);
  const firstEventMs = timeoutSetting(
    options.timeout?.firstEventMs,
    "firstEventMs",
    DEFAULT_FIRST_EVENT_TIMEOUT_MS,
  );
  const idleMs = timeoutSetting(options.timeout?.idleMs, "idleMs", DEFAULT_IDLE_TIMEOUT_MS);
  let adapter: Promise<ProviderAdapter> | undefined;
  let capabilities: ModelCapabilities | undefined | null = null;
  const getAdapter = (): Promise<ProviderAdapter> => {
    adapter ??= load().then(
      (factory) => factory(options),
      (error: unknown) => {
        adapter = undefined;
        if (LlmError.isInstance(error)) throw error;
        throw new LlmError(
          "config",
          `${options.provider}: the adapter could not be loaded (${redactSecrets(errorMessage(error))})`,
          {
            cause: error,
          },
        );
      },
    );
    return adapter;
  };
  const settings: StreamSettings = {
    options,
    policy,
    firstEventMs,
    idleMs,
    getAdapter,
    pairing: new PairingCheck(),
  };
  return {
    provider: options.provider,
    model: options.model,
    stream(request: Request, streamOptions?: StreamOptions): AsyncIterable<Event> {
      if (capabilities === null) capabilities = findModelCapabilities(options.provider, options.model);
      return runStream(settings, capabilities, request, streamOptions);
    },
    prepare: () =>
      getAdapter().then(
        () => undefined,
        () => undefined,
      ),
  };
}

/**
 * `https://user:password@host` cannot work: fetch refuses to send a URL with
 * credentials, so every attempt would fail as a network error (and be
 * retried). Say so at once, without showing the credentials.
 */
function rejectUserinfo(options: ClientOptions): void {
  if (options.baseURL === undefined) return;
  let url: URL;
  try {
    url = new URL(options.baseURL);
  } catch {
    return; // the SDK reports an unusable URL in its own words
  }
  if (url.username === "" && url.password === "") return;
  throw new LlmError(
    "config",
    `${options.provider}: the base URL ${redactSecrets(options.baseURL)} carries user:password@ credentials, ` +
      "which HTTP clients refuse to send; pass the credential as the API key or in headers instead",
    { provider: options.provider },
  );
}

function timeoutSetting(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new LlmError("config", `timeout.${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

/** One `stream` call: an async iterator over the Events of one model call (single use). */
function runStream(
  settings: StreamSettings,
  capabilities: ModelCapabilities | undefined,
  input: Request,
  call: StreamOptions | undefined,
): AsyncIterableIterator<Event> {
  return new ClientStream(settings, capabilities, input, call);
}
