/**
 * The iterator `LlmClient.stream` returns: the one place that holds the
 * stream contract of `event.ts` and the one owner of retries.
 */
import type { ModelCapabilities } from "@yoi/manifest";
import type { ProviderAdapter } from "./adapters/adapter.ts";
import { cancellation, errorEvent, OpenBlocks } from "./adapters/stream-end.ts";
import { applyCapabilities } from "./capabilities.ts";
import { errorMessage } from "./error-message.ts";
import { LlmError } from "./errors.ts";
import type { ErrorEvent, Event, RetryEvent } from "./event.ts";
import { pairToolResults } from "./history.ts";
import { redactSecrets } from "./redact.ts";
import type { ClientOptions, ClientWarning, Request } from "./request.ts";
import { decideRetry, type RetryPolicy, sleep } from "./retry.ts";
import { Watchdog } from "./watchdog.ts";

/** What a stream needs from its client. */
export interface StreamSettings {
  options: ClientOptions;
  policy: RetryPolicy;
  firstEventMs: number;
  idleMs: number;
  getAdapter(): Promise<ProviderAdapter>;
}

const DONE: IteratorResult<Event> = Object.freeze({ value: undefined, done: true }) as IteratorResult<Event>;
const NEVER = new AbortController().signal;

function isPreamble(event: Event): boolean {
  return (
    event.type === "ping" || event.type === "usage" || (event.type === "status" && event.status === "started")
  );
}

function errorFromEvent(event: ErrorEvent, provider: string): LlmError {
  return new LlmError(event.code, event.message, {
    retryable: event.retryable,
    status: event.status,
    retryAfterMs: event.retryAfterMs,
    provider,
  });
}

function warnAll(options: ClientOptions, warnings: ClientWarning[]): void {
  if (!options.onWarning) return;
  for (const warning of warnings) options.onWarning(warning);
}

export function asLlmError(error: unknown, provider: string): LlmError {
  if (error instanceof LlmError) return error;
  return new LlmError(
    "server",
    `${provider}: unexpected failure in the adapter (${redactSecrets(errorMessage(error))})`,
    { provider, retryable: false, cause: error },
  );
}

/**
 * Phases:
 *
 * - `start` (once): applies capabilities, repairs pairing, loads the adapter.
 * - `attempt`: sends the request and reads until the attempt commits — its
 *   first content event or terminal status. Until then `started`, `usage`
 *   and `ping` are held back, so a failure there is retried without the
 *   caller seeing anything but one `started` and a `retry` event.
 * - `follow`: passes the adapter's events through with constant work per
 *   event (hand-written rather than an async generator: this is the
 *   per-delta hot path), holding the contract when the adapter does not (a
 *   throw, a missing terminal status, a timeout reported as a cancellation).
 *   A retryable failure here is retried from the start while nothing is
 *   committed (no tool call has completed): open blocks are aborted and a
 *   `retry` event with `discarded: true` tells the caller to drop what the
 *   broken attempt streamed.
 * - `backoff`: waits the retry delay (cancellable), then `attempt` again.
 *
 * Every retry happens within `retry.totalBudgetMs` of the first attempt;
 * a stalled attempt fails after `timeout.idleMs`, so a stream that stalls
 * mid-output fails within the idle timeout plus the budget.
 */
export class ClientStream implements AsyncIterableIterator<Event> {
  private readonly settings: StreamSettings;
  private readonly capabilities: ModelCapabilities | undefined;
  private readonly input: Request;
  private readonly signal: AbortSignal | undefined;
  private readonly provider: string;
  private phase: "start" | "attempt" | "follow" | "backoff" | "done" = "start";
  private readonly queue: Event[] = [];
  private head = 0;
  private request: Request | undefined;
  private adapter: ProviderAdapter | undefined;
  private inner: AsyncIterator<Event> | undefined;
  private watchdog: Watchdog | undefined;
  private controller: AbortController | undefined;
  private onAbort: (() => void) | undefined;
  private readonly blocks = new OpenBlocks();
  /** Attempt number (from 1) of the attempt running or about to run. */
  private attempt = 1;
  private startedAt = 0;
  private startedSent = false;
  /** A tool call completed: the caller may have acted on it, so a failure is no longer retried. */
  private committed = false;
  /** The current attempt delivered block events (a retry discards them). */
  private output = false;
  private delayMs = 0;

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
    switch (this.phase) {
      case "follow":
        this.watchdog!.waiting = true;
        return this.inner!.next().then(this.received, this.threw);
      case "done":
        return Promise.resolve(DONE);
      case "start":
        return this.start();
      case "attempt":
        return this.runAttempt();
      case "backoff":
        return this.backoff();
    }
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

  /** Tears the attempt down: timers, the caller's abort listener and the HTTP request. */
  private release(): void {
    this.watchdog?.stop();
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    this.onAbort = undefined;
    this.controller?.abort(cancellation());
  }

  /** The attempt is over: release it and let the adapter release what it holds. */
  private closeAttempt(): void {
    this.release();
    const inner = this.inner;
    this.inner = undefined;
    void inner?.return?.()?.catch(() => undefined);
  }

  private sendStarted(started?: Event): void {
    if (this.startedSent) return;
    this.startedSent = true;
    this.queue.push(started ?? { type: "status", status: "started" });
  }

  private readonly received = (
    result: IteratorResult<Event>,
  ): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    const watchdog = this.watchdog!;
    watchdog.pulled();
    if (this.phase !== "follow") return DONE; // return() was called while waiting
    if (result.done) {
      return this.broke(
        watchdog.timedOut ??
          new LlmError("incomplete_stream", `${this.provider}: the stream ended without a terminal status`, {
            provider: this.provider,
          }),
      );
    }
    const event = result.value;
    switch (event.type) {
      case "block_delta":
        return { value: event, done: false };
      case "block_start":
        this.output = true;
        this.blocks.start(event.index, event.block);
        break;
      case "block_stop":
        if (event.block === "tool_use") this.committed = true;
        this.blocks.stop(event.index);
        break;
      case "block_abort":
        this.blocks.stop(event.index);
        break;
      case "error":
        return this.broke(
          watchdog.timedOut && event.code === "aborted"
            ? watchdog.timedOut
            : errorFromEvent(event, this.provider),
        );
      case "status":
        if (event.status === "started") return this.next(); // one start per stream
        if (event.status === "cancelled" && watchdog.timedOut) return this.broke(watchdog.timedOut);
        this.phase = "done";
        this.closeAttempt();
        break;
      default:
        break;
    }
    return { value: event, done: false };
  };

  private readonly threw = (error: unknown): Promise<IteratorResult<Event>> => {
    this.watchdog?.pulled();
    if (this.phase !== "follow") return Promise.resolve(DONE);
    return this.broke(this.watchdog?.timedOut ?? asLlmError(error, this.provider));
  };

  /**
   * A committed attempt broke. Cancelled when the caller aborted (and no
   * timeout fired); retried from the start when the policy allows and
   * nothing is committed; otherwise failed: open blocks aborted, the
   * error, `status: failed`.
   */
  private broke(error: LlmError): Promise<IteratorResult<Event>> {
    this.closeAttempt();
    if (this.signal?.aborted && !this.watchdog?.timedOut) {
      for (const e of this.blocks.abortAll("cancelled")) this.queue.push(e);
      this.queue.push({ type: "status", status: "cancelled" });
      this.phase = "done";
      return this.next();
    }
    for (const e of this.blocks.abortAll(error.code)) this.queue.push(e);
    if (this.committed) return this.fail(error, false);
    return this.retryOrFail(error);
  }

  private fail(error: LlmError, beforeOutput: boolean): Promise<IteratorResult<Event>> {
    this.sendStarted();
    const event: ErrorEvent = errorEvent(error);
    if (beforeOutput) event.beforeOutput = true;
    this.queue.push(event, { type: "status", status: "failed", stopReason: "error" });
    this.phase = "done";
    return this.next();
  }

  private cancel(): Promise<IteratorResult<Event>> {
    this.sendStarted();
    this.queue.push({ type: "status", status: "cancelled" });
    this.phase = "done";
    this.release();
    return this.next();
  }

  /** The attempt failed: a `retry` event and a backoff when the policy allows, else the failure. */
  private retryOrFail(failure: LlmError): Promise<IteratorResult<Event>> {
    const { policy } = this.settings;
    const discarded = this.output;
    const decision = decideRetry(failure, this.attempt, performance.now() - this.startedAt, policy);
    if (!decision.retry) return this.fail(decision.error, !discarded);
    this.sendStarted();
    const retry: RetryEvent = {
      type: "retry",
      attempt: this.attempt + 1,
      maxAttempts: policy.maxAttempts,
      delayMs: decision.delayMs,
      code: failure.code,
      message: failure.message,
      discarded,
    };
    if (failure.status !== undefined) retry.status = failure.status;
    this.queue.push(retry);
    this.delayMs = decision.delayMs;
    this.phase = "backoff";
    return this.next();
  }

  private async backoff(): Promise<IteratorResult<Event>> {
    this.phase = "done"; // until the wait is over
    if (!(await sleep(this.delayMs, this.signal ?? NEVER))) return this.cancel();
    this.attempt++;
    this.output = false;
    return this.runAttempt();
  }

  private async start(): Promise<IteratorResult<Event>> {
    this.phase = "done"; // until an attempt runs
    const { options } = this.settings;
    const provider = this.provider;
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
    this.request = request;
    if (this.signal?.aborted) return this.cancel();
    try {
      this.adapter = await this.settings.getAdapter();
    } catch (error) {
      return this.fail(asLlmError(error, provider), true);
    }
    this.startedAt = performance.now();
    return this.runAttempt();
  }

  /** One attempt, up to its commit (then `follow`) or its failure (then a retry or the end). */
  private async runAttempt(): Promise<IteratorResult<Event>> {
    this.phase = "done"; // until the attempt commits
    const provider = this.provider;
    const signal = this.signal;
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
      const iterable = await this.adapter!.open(this.request!, controller.signal);
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
          if (event.type !== "ping" && !(event.type === "status" && held.some((h) => h.type === "status"))) {
            held.push(event);
          }
          continue;
        }
        // Committed: from here on the adapter's events are served.
        this.inner = iterator;
        const started = held.find((h) => h.type === "status");
        this.sendStarted(started);
        for (const h of held) if (h !== started) this.queue.push(h);
        this.phase = "follow";
        watchdog.waiting = true; // received() counts this event as pulled
        const firstResult = this.received({ value: event, done: false });
        if (firstResult instanceof Promise) return firstResult;
        if (firstResult.done) return firstResult;
        this.queue.push(firstResult.value);
        return this.next();
      }
    } catch (error) {
      failure = asLlmError(error, provider);
    }
    // Not committed: the attempt failed or was cancelled before any output.
    this.release();
    await iterator?.return?.();
    if (watchdog.timedOut) failure = watchdog.timedOut;
    else if (signal?.aborted || cancelled) return this.cancel();
    failure ??= new LlmError("server", `${provider}: the attempt failed without a cause`, { provider });
    return this.retryOrFail(failure);
  }
}
