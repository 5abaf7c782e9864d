/**
 * `createClient`: one streaming client over every provider. It owns what is
 * the same for all of them — applying model capabilities, repairing tool-call
 * pairing, the retry policy, the first-event and idle timeouts, cancellation
 * and the stream contract of `event.ts` — and loads the provider's adapter
 * (and with it the provider's SDK) lazily, on the first `stream` call.
 */
import type { ModelCapabilities } from "@yoi/manifest";
import type { AdapterFactory, ProviderAdapter } from "./adapters/adapter.ts";
import { cancellation, errorEvent, OpenBlocks } from "./adapters/stream-end.ts";
import { applyCapabilities } from "./capabilities.ts";
import { LlmError } from "./errors.ts";
import type { Event } from "./event.ts";
import { pairToolResults } from "./history.ts";
import type { ProviderKind } from "./item.ts";
import { findModelCapabilities } from "./model-info.ts";
import type { ClientOptions, ClientWarning, LlmClient, Request, StreamOptions } from "./request.ts";
import { decideRetry, type RetryPolicy, resolveRetryPolicy, sleep } from "./retry.ts";

/** Defaults of {@link TimeoutOptions}. */
export const DEFAULT_FIRST_EVENT_TIMEOUT_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

const PROVIDERS: Record<ProviderKind, () => Promise<AdapterFactory>> = {
  anthropic: async () => (await import("./adapters/anthropic/index.ts")).createAnthropicAdapter,
  "openai-chat": async () => (await import("./adapters/openai-chat/index.ts")).createOpenAIChatAdapter,
  "openai-responses": async () =>
    (await import("./adapters/openai-responses/index.ts")).createOpenAIResponsesAdapter,
  gemini: async () => (await import("./adapters/gemini/index.ts")).createGeminiAdapter,
};

/** The provider kinds `createClient` accepts. */
export const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

/**
 * Creates a client for one provider and model. Throws `LlmError("config")`
 * at once for options that cannot work (unknown provider, empty model,
 * negative timeouts); everything else is reported on the stream.
 */
export function createClient(options: ClientOptions): LlmClient {
  const load = PROVIDERS[options.provider as ProviderKind] as (() => Promise<AdapterFactory>) | undefined;
  if (load === undefined) {
    throw new LlmError(
      "config",
      `unknown provider ${JSON.stringify(options.provider)}; use one of ${PROVIDER_KINDS.join(", ")}`,
    );
  }
  if (typeof options.model !== "string" || options.model.trim() === "") {
    throw new LlmError(
      "config",
      `${options.provider}: options.model must name a model, e.g. the provider's model id`,
    );
  }
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
        throw new LlmError(
          "config",
          `${options.provider}: the adapter could not be loaded (${String(error)})`,
          {
            cause: error,
          },
        );
      },
    );
    return adapter;
  };
  const settings: StreamSettings = { options, policy, firstEventMs, idleMs, getAdapter };
  return {
    provider: options.provider,
    model: options.model,
    stream(request: Request, streamOptions?: StreamOptions): AsyncIterable<Event> {
      if (capabilities === null) capabilities = findModelCapabilities(options.provider, options.model);
      return runStream(settings, capabilities, request, streamOptions?.signal);
    },
  };
}

function timeoutSetting(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new LlmError("config", `timeout.${name} must be a positive number of milliseconds, got ${value}`);
  }
  return value;
}

interface StreamSettings {
  options: ClientOptions;
  policy: RetryPolicy;
  firstEventMs: number;
  idleMs: number;
  getAdapter(): Promise<ProviderAdapter>;
}

/**
 * Watches one attempt: aborts it with a `timeout` error when the first
 * event takes longer than `firstEventMs` or the provider is silent for
 * `idleMs` while the caller waits. Only time spent waiting on the provider
 * counts (a slow consumer is not an idle server); the per-event cost is two
 * clock reads, the timer is re-armed lazily.
 */
class Watchdog {
  /** When the current wait on the provider began; -1 while not waiting. */
  waitingSince: number;
  timedOut: LlmError | undefined;
  private limit: number;
  private phase: "first" | "idle" = "first";
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly controller: AbortController;
  private readonly idleMs: number;
  private readonly provider: string;

  constructor(controller: AbortController, firstEventMs: number, idleMs: number, provider: string) {
    this.controller = controller;
    this.idleMs = idleMs;
    this.provider = provider;
    this.limit = firstEventMs;
    this.waitingSince = performance.now();
    this.arm(firstEventMs);
  }

  /** The first event arrived: from now on the idle limit applies. */
  firstEvent(): void {
    this.phase = "idle";
    this.limit = this.idleMs;
    this.stop();
    this.arm(this.idleMs);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, Math.ceil(ms)));
    this.timer.unref?.();
  }

  private check(): void {
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    if (this.waitingSince < 0) {
      this.arm(this.limit);
      return;
    }
    const waited = performance.now() - this.waitingSince;
    if (waited + 0.5 < this.limit) {
      this.arm(this.limit - waited);
      return;
    }
    const seconds = `${Math.round(this.limit / 100) / 10} s`;
    this.timedOut =
      this.phase === "first"
        ? new LlmError(
            "timeout",
            `${this.provider}: no response event within ${seconds} of sending the request (timeout.firstEventMs)`,
            { provider: this.provider },
          )
        : new LlmError(
            "timeout",
            `${this.provider}: the stream went silent for ${seconds} (timeout.idleMs); the response is incomplete`,
            { provider: this.provider },
          );
    this.controller.abort(this.timedOut);
  }
}

function isPreamble(event: Event): boolean {
  return (
    event.type === "ping" || event.type === "usage" || (event.type === "status" && event.status === "started")
  );
}

function errorFromEvent(event: Extract<Event, { type: "error" }>, provider: string): LlmError {
  return new LlmError(event.code, event.message, {
    retryable: event.retryable,
    status: event.status,
    retryAfterMs: event.retryAfterMs,
    provider,
  });
}

function startedOf(held: Event[]): Event {
  return held.find((h) => h.type === "status") ?? { type: "status", status: "started" };
}

function* failedStream(error: LlmError, held: Event[]): Generator<Event> {
  yield startedOf(held);
  yield errorEvent(error);
  yield { type: "status", status: "failed", stopReason: "error" };
}

function* cancelledStream(held: Event[]): Generator<Event> {
  yield startedOf(held);
  yield { type: "status", status: "cancelled" };
}

function warnAll(options: ClientOptions, warnings: ClientWarning[]): void {
  if (!options.onWarning) return;
  for (const warning of warnings) options.onWarning(warning);
}

/**
 * One `stream` call. Before the stream commits (its first content event or
 * terminal status), `started`, `usage` and `ping` events are held back, so a
 * failure there — an HTTP error, a timeout, an in-stream `overloaded` error —
 * can be retried without the caller ever seeing two starts. After the
 * commit, failures are events, never retries.
 */
async function* runStream(
  settings: StreamSettings,
  capabilities: ModelCapabilities | undefined,
  input: Request,
  signal: AbortSignal | undefined,
): AsyncGenerator<Event> {
  const { options, policy } = settings;
  const provider = options.provider;
  const checked = applyCapabilities(provider, options.model, capabilities, input);
  warnAll(options, checked.warnings);
  let request = checked.request;
  const paired = pairToolResults(request.items);
  if (paired.repairs.length > 0) {
    request = { ...request, items: paired.items };
    warnAll(options, [
      {
        code: "repaired_history",
        message: `${provider}: repaired tool-call pairing in the history (${paired.repairs
          .map((r) => `${r.kind} ${r.callId}`)
          .join(", ")})`,
        detail: { repairs: paired.repairs },
      },
    ]);
  }
  if (signal?.aborted) {
    yield* cancelledStream([]);
    return;
  }

  let adapter: ProviderAdapter;
  try {
    adapter = await settings.getAdapter();
  } catch (error) {
    yield* failedStream(asLlmError(error, provider), []);
    return;
  }

  const startedAt = performance.now();
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(cancellation());
    signal?.addEventListener("abort", onAbort, { once: true });
    const watchdog = new Watchdog(controller, settings.firstEventMs, settings.idleMs, provider);
    let iterator: AsyncIterator<Event> | undefined;
    let failure: LlmError | undefined;
    let cancelled = false;
    let delayMs = 0;
    const held: Event[] = [];
    let committed = false;
    try {
      try {
        const iterable = await adapter.open(request, controller.signal);
        iterator = iterable[Symbol.asyncIterator]();
        let first = true;
        for (;;) {
          const next = await iterator.next();
          if (first) {
            watchdog.firstEvent();
            first = false;
          }
          if (next.done) {
            failure = new LlmError("incomplete_stream", `${provider}: the stream ended before any output`, {
              provider,
            });
            break;
          }
          const event = next.value;
          if (event.type === "error") {
            failure = errorFromEvent(event, provider);
            break;
          }
          if (event.type === "status" && event.status === "cancelled") {
            cancelled = true;
            break;
          }
          if (isPreamble(event)) {
            if (!(event.type === "status" && held.some((h) => h.type === "status"))) held.push(event);
            watchdog.waitingSince = performance.now();
            continue;
          }
          committed = true;
          watchdog.waitingSince = -1;
          if (!held.some((h) => h.type === "status")) yield { type: "status", status: "started" };
          for (const h of held) yield h;
          yield* followStream(iterator, event, watchdog, provider);
          return;
        }
      } catch (error) {
        failure = asLlmError(error, provider);
      }
      // Not committed: the attempt failed or was cancelled before any output.
      if (watchdog.timedOut) failure = watchdog.timedOut;
      else if (signal?.aborted || cancelled) {
        yield* cancelledStream(held);
        return;
      }
      failure ??= new LlmError("server", `${provider}: the attempt failed without a cause`, { provider });
      const decision = decideRetry(failure, attempt, performance.now() - startedAt, policy);
      if (!decision.retry) {
        yield* failedStream(decision.error, held);
        return;
      }
      delayMs = decision.delayMs;
      options.onWarning?.({
        code: "retry",
        message: `${failure.message}; retrying in ${delayMs} ms (attempt ${attempt + 1} of ${policy.maxAttempts})`,
        detail: {
          attempt,
          nextAttempt: attempt + 1,
          delayMs,
          errorCode: failure.code,
          status: failure.status,
        },
      });
    } finally {
      watchdog.stop();
      signal?.removeEventListener("abort", onAbort);
      // Tears the HTTP request down whatever happened (done, failed, or the caller stopped reading).
      controller.abort(cancellation());
      if (!committed) await iterator?.return?.();
    }
    if (!(await sleep(delayMs, signal ?? NEVER))) {
      yield* cancelledStream([]);
      return;
    }
  }
}

const NEVER = new AbortController().signal;

function asLlmError(error: unknown, provider: string): LlmError {
  if (error instanceof LlmError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError("server", `${provider}: unexpected failure in the adapter (${message})`, {
    provider,
    retryable: false,
    cause: error,
  });
}

/**
 * After the commit: passes the adapter's events through, holding to the
 * contract even if the adapter does not (a throw, a missing terminal status)
 * and turning a timeout abort into a failure rather than a cancellation.
 */
async function* followStream(
  iterator: AsyncIterator<Event>,
  first: Event,
  watchdog: Watchdog,
  provider: string,
): AsyncGenerator<Event> {
  const blocks = new OpenBlocks();
  let event = first;
  let finished = false;
  try {
    for (;;) {
      switch (event.type) {
        case "block_start":
          blocks.start(event.index, event.block);
          break;
        case "block_delta":
          break;
        case "block_stop":
        case "block_abort":
          blocks.stop(event.index);
          break;
        case "error":
          if (watchdog.timedOut && event.code === "aborted") event = errorEvent(watchdog.timedOut);
          break;
        case "status":
          if (event.status === "started") break;
          if (event.status === "cancelled" && watchdog.timedOut) {
            yield* blocks.abortAll("timeout");
            yield errorEvent(watchdog.timedOut);
            yield { type: "status", status: "failed", stopReason: "error" };
          } else {
            yield event;
          }
          finished = true;
          return;
        default:
          break;
      }
      yield event;
      watchdog.waitingSince = performance.now();
      let next: IteratorResult<Event>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        yield* blocks.abortAll("error");
        yield errorEvent(watchdog.timedOut ?? asLlmError(error, provider));
        yield { type: "status", status: "failed", stopReason: "error" };
        return;
      }
      watchdog.waitingSince = -1;
      if (next.done) {
        finished = true;
        const error =
          watchdog.timedOut ??
          new LlmError("incomplete_stream", `${provider}: the stream ended without a terminal status`, {
            provider,
          });
        yield* blocks.abortAll(error.code);
        yield errorEvent(error);
        yield { type: "status", status: "failed", stopReason: "error" };
        return;
      }
      event = next.value;
    }
  } finally {
    watchdog.stop();
    if (!finished) await iterator.return?.();
  }
}
