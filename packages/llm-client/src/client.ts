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
import { errorMessage } from "./error-message.ts";
import { LlmError } from "./errors.ts";
import type { Event } from "./event.ts";
import { pairToolResults } from "./history.ts";
import type { ProviderKind } from "./item.ts";
import { findModelCapabilities } from "./model-info.ts";
import { redactSecrets, registerClientSecrets } from "./redact.ts";
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
  return createClientWithAdapter(options, load);
}

/**
 * `createClient` over a given adapter factory: the retry policy, timeouts
 * and stream contract around an adapter that is not built in (tests, a
 * provider under development). Not re-exported from the package index.
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

interface StreamSettings {
  options: ClientOptions;
  policy: RetryPolicy;
  firstEventMs: number;
  idleMs: number;
  getAdapter(): Promise<ProviderAdapter>;
}

/**
 * Watches one attempt: aborts it with a `timeout` error when the first
 * event takes longer than `firstEventMs`, or the provider is silent for
 * `idleMs` while the caller waits on it (a slow consumer is not an idle
 * server). Per event it costs two field writes and an increment: a timer
 * ticking at a quarter of the limit notices silence, so a timeout fires
 * between the limit and 1.25x the limit.
 */
class Watchdog {
  /** Whether the stream is waiting on the provider right now. */
  waiting = true;
  /** Payloads received so far. */
  events = 0;
  timedOut: LlmError | undefined;
  private limit: number;
  private phase: "first" | "idle" = "first";
  private seen = 0;
  private quietSince: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly controller: AbortController;
  private readonly idleMs: number;
  private readonly provider: string;

  constructor(controller: AbortController, firstEventMs: number, idleMs: number, provider: string) {
    this.controller = controller;
    this.idleMs = idleMs;
    this.provider = provider;
    this.limit = firstEventMs;
    this.quietSince = performance.now();
    this.arm();
  }

  pulled(): void {
    this.waiting = false;
    this.events++;
  }

  /** The first event arrived: from now on the idle limit applies. */
  firstEvent(): void {
    this.phase = "idle";
    this.limit = this.idleMs;
    this.seen = this.events;
    this.quietSince = performance.now();
    this.stop();
    this.arm();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, Math.ceil(this.limit / 4)));
    this.timer.unref?.();
  }

  private check(): void {
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    const now = performance.now();
    if (this.events !== this.seen || !this.waiting) {
      this.seen = this.events;
      this.quietSince = now;
    } else if (now - this.quietSince >= this.limit) {
      this.fire();
      return;
    }
    this.arm();
  }

  private fire(): void {
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
  yield { ...errorEvent(error), beforeOutput: true };
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

/** One `stream` call: an async iterator over the Events of one model call (single use). */
function runStream(
  settings: StreamSettings,
  capabilities: ModelCapabilities | undefined,
  input: Request,
  signal: AbortSignal | undefined,
): AsyncIterableIterator<Event> {
  return new ClientStream(settings, capabilities, input, signal);
}

const DONE: IteratorResult<Event> = Object.freeze({ value: undefined, done: true }) as IteratorResult<Event>;
const NEVER = new AbortController().signal;

/**
 * The iterator `stream` returns. Two phases:
 *
 * - start (an async step, once): applies capabilities, repairs pairing and
 *   runs attempts until the stream commits — its first content event or
 *   terminal status. Until then `started`, `usage` and `ping` events are
 *   held back, so a failure there (an HTTP error, a timeout, an in-stream
 *   `overloaded` error) can be retried without the caller ever seeing two
 *   starts.
 * - follow: passes the adapter's events through with constant work per event
 *   (hand-written rather than an async generator: this is the per-delta hot
 *   path), holding the contract even when the adapter does not (a throw, a
 *   missing terminal status) and turning a timeout abort into a failure
 *   rather than a cancellation. After the commit, failures are events,
 *   never retries.
 */
class ClientStream implements AsyncIterableIterator<Event> {
  private readonly settings: StreamSettings;
  private readonly capabilities: ModelCapabilities | undefined;
  private readonly input: Request;
  private readonly signal: AbortSignal | undefined;
  private readonly provider: string;
  private phase: "start" | "follow" | "done" = "start";
  private readonly queue: Event[] = [];
  private head = 0;
  private inner: AsyncIterator<Event> | undefined;
  private watchdog: Watchdog | undefined;
  private controller: AbortController | undefined;
  private onAbort: (() => void) | undefined;
  private readonly blocks = new OpenBlocks();

  constructor(
    settings: StreamSettings,
    capabilities: ModelCapabilities | undefined,
    input: Request,
    signal: AbortSignal | undefined,
  ) {
    this.settings = settings;
    this.capabilities = capabilities;
    this.input = input;
    this.signal = signal;
    this.provider = settings.options.provider;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Event> {
    return this;
  }

  next(): Promise<IteratorResult<Event>> {
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    if (this.phase === "follow") {
      this.watchdog!.waiting = true;
      return this.inner!.next().then(this.received, this.threw);
    }
    if (this.phase === "done") return Promise.resolve(DONE);
    return this.start();
  }

  async return(): Promise<IteratorResult<Event>> {
    const inner = this.inner;
    const following = this.phase === "follow";
    this.phase = "done";
    this.queue.length = 0;
    this.head = 0;
    this.release();
    if (following) await inner?.return?.();
    return DONE;
  }

  private take(): IteratorResult<Event> {
    const value = this.queue[this.head++]!;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    return { value, done: false };
  }

  /**
   * Tears the attempt down: timers, the caller's abort listener and, unless
   * the adapter has already let go of it, the HTTP request.
   */
  private release(abortRequest = true): void {
    this.watchdog?.stop();
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    this.onAbort = undefined;
    if (abortRequest) this.controller?.abort(cancellation());
  }

  /** The stream has ended: release the timers and let the adapter release what it holds. */
  private finish(): void {
    this.phase = "done";
    this.release();
    void this.inner?.return?.()?.catch(() => undefined);
  }

  private readonly received = (
    result: IteratorResult<Event>,
  ): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    const watchdog = this.watchdog!;
    watchdog.pulled();
    if (this.phase !== "follow") return DONE; // return() was called while waiting
    if (result.done) {
      const error =
        watchdog.timedOut ??
        new LlmError("incomplete_stream", `${this.provider}: the stream ended without a terminal status`, {
          provider: this.provider,
        });
      this.failNow(error);
      return this.next();
    }
    const event = result.value;
    switch (event.type) {
      case "block_delta":
        return { value: event, done: false };
      case "block_start":
        this.blocks.start(event.index, event.block);
        break;
      case "block_stop":
      case "block_abort":
        this.blocks.stop(event.index);
        break;
      case "error":
        if (watchdog.timedOut && event.code === "aborted")
          return { value: errorEvent(watchdog.timedOut), done: false };
        break;
      case "status":
        if (event.status === "started") break;
        if (event.status === "cancelled" && watchdog.timedOut) {
          this.failNow(watchdog.timedOut);
          return this.next();
        }
        this.finish();
        break;
      default:
        break;
    }
    return { value: event, done: false };
  };

  private readonly threw = (error: unknown): Promise<IteratorResult<Event>> => {
    this.watchdog?.pulled();
    if (this.phase !== "follow") return Promise.resolve(DONE);
    this.failNow(this.watchdog?.timedOut ?? asLlmError(error, this.provider));
    return this.next();
  };

  /**
   * Ends a committed stream that broke: cancelled when the caller aborted
   * (and no timeout fired), otherwise failed with open blocks aborted, the
   * error, `status: failed`.
   */
  private failNow(error: LlmError): void {
    if (this.signal?.aborted && !this.watchdog?.timedOut) {
      for (const e of this.blocks.abortAll("cancelled")) this.queue.push(e);
      this.queue.push({ type: "status", status: "cancelled" });
      this.finish();
      return;
    }
    for (const e of this.blocks.abortAll(error.code)) this.queue.push(e);
    this.queue.push(errorEvent(error), { type: "status", status: "failed", stopReason: "error" });
    this.finish();
  }

  private end(events: Iterable<Event>): Promise<IteratorResult<Event>> {
    for (const e of events) this.queue.push(e);
    this.phase = "done";
    this.release();
    return this.next();
  }

  private async start(): Promise<IteratorResult<Event>> {
    this.phase = "done"; // until an attempt commits
    const { options, policy } = this.settings;
    const provider = this.provider;
    const signal = this.signal;
    const checked = applyCapabilities(options.provider, options.model, this.capabilities, this.input);
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
    if (signal?.aborted) return this.end(cancelledStream([]));

    let adapter: ProviderAdapter;
    try {
      adapter = await this.settings.getAdapter();
    } catch (error) {
      return this.end(failedStream(asLlmError(error, provider), []));
    }

    const startedAt = performance.now();
    for (let attempt = 1; ; attempt++) {
      const controller = new AbortController();
      const onAbort = () => controller.abort(cancellation());
      signal?.addEventListener("abort", onAbort, { once: true });
      const watchdog = new Watchdog(controller, this.settings.firstEventMs, this.settings.idleMs, provider);
      this.controller = controller;
      this.onAbort = onAbort;
      this.watchdog = watchdog;
      let iterator: AsyncIterator<Event> | undefined;
      let failure: LlmError | undefined;
      let cancelled = false;
      const held: Event[] = [];
      try {
        const iterable = await adapter.open(request, controller.signal);
        iterator = iterable[Symbol.asyncIterator]();
        let first = true;
        for (;;) {
          watchdog.waiting = true;
          const next = await iterator.next();
          watchdog.pulled();
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
            // Pings before the commit carry nothing worth replaying; a second start is dropped.
            if (
              event.type !== "ping" &&
              !(event.type === "status" && held.some((h) => h.type === "status"))
            ) {
              held.push(event);
            }
            continue;
          }
          // Committed: from here on the adapter's events are served.
          this.inner = iterator;
          if (!held.some((h) => h.type === "status")) this.queue.push({ type: "status", status: "started" });
          for (const h of held) this.queue.push(h);
          this.phase = "follow";
          watchdog.waiting = true; // received() counts this event as pulled
          const firstResult = this.received({ value: event, done: false });
          if (firstResult instanceof Promise) return firstResult;
          this.queue.push(firstResult.value as Event);
          return this.next();
        }
      } catch (error) {
        failure = asLlmError(error, provider);
      }
      // Not committed: the attempt failed or was cancelled before any output.
      this.release();
      await iterator?.return?.();
      if (watchdog.timedOut) failure = watchdog.timedOut;
      else if (signal?.aborted || cancelled) return this.end(cancelledStream(held));
      failure ??= new LlmError("server", `${provider}: the attempt failed without a cause`, { provider });
      const decision = decideRetry(failure, attempt, performance.now() - startedAt, policy);
      if (!decision.retry) return this.end(failedStream(decision.error, held));
      options.onWarning?.({
        code: "retry",
        message: `${failure.message}; retrying in ${decision.delayMs} ms (attempt ${attempt + 1} of ${policy.maxAttempts})`,
        detail: {
          attempt,
          nextAttempt: attempt + 1,
          delayMs: decision.delayMs,
          errorCode: failure.code,
          status: failure.status,
        },
      });
      if (!(await sleep(decision.delayMs, signal ?? NEVER))) return this.end(cancelledStream([]));
    }
  }
}

function asLlmError(error: unknown, provider: string): LlmError {
  if (error instanceof LlmError) return error;
  return new LlmError(
    "server",
    `${provider}: unexpected failure in the adapter (${redactSecrets(errorMessage(error))})`,
    {
      provider,
      retryable: false,
      cause: error,
    },
  );
}
