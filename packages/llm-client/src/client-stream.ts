/**
 * The iterator `LlmClient.stream` returns: the one place that holds the
 * stream contract of `event.ts` and the one owner of retries.
 */
import type { Context } from "@opentelemetry/api";
import type { ModelCapabilities } from "@yoi/manifest";
import { errorMessage } from "@yoi/manifest/errors";
import type { Normalizer, ProviderAdapter } from "./adapters/adapter.ts";
import { cancellation, errorEvent, OpenBlocks } from "./adapters/stream-end.ts";
import { applyCapabilities } from "./capabilities.ts";
import { LlmError } from "./errors.ts";
import type { ErrorEvent, Event, RetryEvent } from "./event.ts";
import { type PairingCheck, pairToolResults } from "./history.ts";
import { redactSecrets } from "./redact.ts";
import type { ClientOptions, ClientWarning, Request, StreamOptions } from "./request.ts";
import { decideRetry, type RetryPolicy, sleep } from "./retry.ts";
import { activeContext, CallTelemetry } from "./telemetry.ts";
import { Watchdog } from "./watchdog.ts";

/** What a stream needs from its client. */
export interface StreamSettings {
  options: ClientOptions;
  policy: RetryPolicy;
  firstEventMs: number;
  idleMs: number;
  getAdapter(): Promise<ProviderAdapter>;
  /** The client's pairing check, which scans only what its last request's history did not have. */
  pairing: PairingCheck;
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

export function asLlmError(error: unknown, provider: string): LlmError {
  if (LlmError.isInstance(error)) return error;
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
 * - `follow`: pulls the provider's payloads and maps each through the
 *   adapter's normalizer, with constant work per event (hand-written rather
 *   than an async generator: this is the per-delta hot path, one promise per
 *   payload), holding the contract when the adapter does not (a throw, a
 *   missing terminal status, a timeout reported as a cancellation). A
 *   retryable failure here is retried from the start while nothing is
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
  /** The client's and this call's warning listeners. */
  private readonly warn: (warning: ClientWarning) => void;
  private readonly provider: string;
  private readonly onRawEvent: ((payload: unknown) => void) | undefined;
  private phase: "start" | "attempt" | "follow" | "backoff" | "done" = "start";
  /** Events ready for the caller. */
  private readonly queue: Event[] = [];
  private head = 0;
  /** The normalizer's output for one payload, before the contract has seen it. */
  private readonly raw: Event[] = [];
  private request: Request | undefined;
  private adapter: ProviderAdapter | undefined;
  /** The current attempt's payloads and their normalizer. */
  private source: AsyncIterator<unknown> | undefined;
  private normalizer: Normalizer | undefined;
  /** The current attempt's normalizer has ended (`end` or `fail` was called): nothing more is read. */
  private ended = false;
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
  /** Where the call's span hangs: the context active when `stream` was called. */
  private readonly parentContext: Context;
  /** The call's span and metrics, from the moment the request is ready. */
  private telemetry: CallTelemetry | undefined;

  constructor(
    settings: StreamSettings,
    capabilities: ModelCapabilities | undefined,
    input: Request,
    call: StreamOptions | undefined,
  ) {
    this.settings = settings;
    this.capabilities = capabilities;
    this.input = input;
    this.signal = call?.signal;
    const listeners = [settings.options.onWarning, call?.onWarning].filter((l) => l !== undefined);
    this.warn = (warning) => {
      for (const listener of listeners) listener(warning);
    };
    this.provider = settings.options.provider;
    this.onRawEvent = settings.options.onRawEvent;
    this.parentContext = activeContext();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Event> {
    return this;
  }

  next(): Promise<IteratorResult<Event>> {
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    switch (this.phase) {
      case "follow":
        this.watchdog!.waiting = true;
        return this.source!.next().then(this.received, this.threw);
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
    const source = this.source;
    const following = this.phase === "follow";
    this.phase = "done";
    this.queue.length = 0;
    this.head = 0;
    this.raw.length = 0;
    this.release();
    this.telemetry?.end();
    if (following) await source?.return?.();
    return DONE;
  }

  private take(): IteratorResult<Event> {
    const value = this.queue[this.head++]!;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    this.telemetry?.event(value);
    return { value, done: false };
  }

  /** Tears the attempt down: timers, the caller's abort listener and the HTTP request. */
  private release(): void {
    this.watchdog?.stop();
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    this.onAbort = undefined;
    this.controller?.abort(cancellation());
  }

  /** The attempt is over: release it and let the SDK release what it holds. */
  private closeAttempt(): void {
    this.release();
    const source = this.source;
    this.source = undefined;
    void source?.return?.()?.catch(() => undefined);
  }

  private sendStarted(started?: Event): void {
    if (this.startedSent) return;
    this.startedSent = true;
    this.queue.push(started ?? { type: "status", status: "started" });
  }

  /**
   * Maps one pulled payload (or the end of the payloads) through the
   * normalizer into `raw`. A throwing normalizer is the adapter's bug: the
   * attempt breaks with it.
   */
  private normalize(result: IteratorResult<unknown>): LlmError | undefined {
    const normalizer = this.normalizer!;
    const raw = this.raw;
    try {
      if (result.done) {
        this.ended = true;
        normalizer.end(raw);
        return undefined;
      }
      this.onRawEvent?.(result.value);
      if (normalizer.payload(result.value, raw)) {
        // The provider's terminal marker: stop reading there.
        this.ended = true;
        normalizer.end(raw);
      }
    } catch (error) {
      raw.length = 0;
      this.ended = true;
      return asLlmError(error, this.provider);
    }
    return undefined;
  }

  /** Reading the payloads threw: the normalizer says how the stream ends. */
  private normalizeFailure(error: unknown): LlmError | undefined {
    this.ended = true;
    try {
      this.normalizer!.fail(error, this.raw);
    } catch {
      this.raw.length = 0;
    }
    return this.raw.length === 0 ? asLlmError(error, this.provider) : undefined;
  }

  private readonly received = (
    result: IteratorResult<unknown>,
  ): IteratorResult<Event> | Promise<IteratorResult<Event>> => {
    this.watchdog!.pulled();
    if (this.phase !== "follow") return DONE; // return() was called while waiting
    const failure = this.normalize(result);
    if (failure) return this.broke(this.watchdog!.timedOut ?? failure);
    const raw = this.raw;
    // The common case, one text or argument delta per payload: nothing to track, no queue.
    if (raw.length === 1 && raw[0]!.type === "block_delta" && !this.ended) {
      const value = raw.pop()!;
      if (this.telemetry?.wantsDeltas) this.telemetry.event(value);
      return { value, done: false };
    }
    return this.serve();
  };

  private readonly threw = (error: unknown): Promise<IteratorResult<Event>> => {
    this.watchdog?.pulled();
    if (this.phase !== "follow") return Promise.resolve(DONE);
    const failure = this.normalizeFailure(error);
    if (failure) return this.broke(this.watchdog?.timedOut ?? failure);
    return this.serve();
  };

  /**
   * Passes the normalizer's events (`raw`) to the caller through the
   * contract: block bookkeeping, one `started`, the first terminal status
   * ends the attempt, an error breaks it. Then the next event, or the next
   * payload when these produced none.
   */
  private serve(): Promise<IteratorResult<Event>> {
    const raw = this.raw;
    const watchdog = this.watchdog!;
    for (let i = 0; i < raw.length && this.phase === "follow"; i++) {
      const event = raw[i]!;
      let failure: LlmError | undefined;
      switch (event.type) {
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
          failure =
            watchdog.timedOut && event.code === "aborted"
              ? watchdog.timedOut
              : errorFromEvent(event, this.provider);
          break;
        case "status":
          if (event.status === "started") continue; // one start per stream
          if (event.status === "cancelled" && watchdog.timedOut) {
            failure = watchdog.timedOut;
            break;
          }
          this.phase = "done";
          this.closeAttempt();
          break;
        default:
          break;
      }
      if (failure) {
        raw.length = 0;
        return this.broke(failure);
      }
      this.queue.push(event);
    }
    raw.length = 0;
    if (this.phase === "follow" && this.ended) {
      return this.broke(
        watchdog.timedOut ??
          new LlmError("incomplete_stream", `${this.provider}: the stream ended without a terminal status`, {
            provider: this.provider,
          }),
      );
    }
    return this.next();
  }

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
    for (const warning of checked.warnings) this.warn(warning);
    let request = checked.request;
    const paired = pairToolResults(request.items, this.settings.pairing);
    if (paired.repairs.length > 0) {
      request = { ...request, items: paired.items };
      this.warn({
        code: "repaired_history",
        message: `${provider}: repaired tool-call pairing in the history (${paired.repairs
          .map((r) => `${r.kind} ${r.callId}`)
          .join(", ")})`,
        detail: { repairs: paired.repairs },
      });
    }
    this.request = request;
    if (this.signal?.aborted) return this.cancel();
    const { provider: kind, model, baseURL } = options;
    this.telemetry = new CallTelemetry({ provider: kind, model, baseURL }, request, this.parentContext);
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
    this.ended = false;
    const raw = this.raw;
    let failure: LlmError | undefined;
    let cancelled = false;
    const held: Event[] = [];
    try {
      const open = () => this.adapter!.open(this.request!, controller.signal, this.warn);
      const stream = await (this.telemetry ? this.telemetry.within(open) : open());
      this.source = stream.payloads[Symbol.asyncIterator]();
      this.normalizer = stream.normalizer;
      let first = true;
      pull: for (;;) {
        watchdog.waiting = true;
        let result: IteratorResult<unknown> | undefined;
        try {
          result = await this.source.next();
        } catch (error) {
          failure = this.normalizeFailure(error);
        }
        watchdog.pulled();
        if (first) {
          watchdog.firstEvent();
          first = false;
        }
        if (result) failure = this.normalize(result);
        if (failure) break;
        for (let i = 0; i < raw.length; i++) {
          const event = raw[i]!;
          if (event.type === "error") {
            failure = errorFromEvent(event, provider);
            break pull;
          }
          if (event.type === "status" && event.status === "cancelled") {
            cancelled = true;
            break pull;
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
          // Committed: from here on the events are served.
          const started = held.find((h) => h.type === "status");
          this.sendStarted(started);
          for (const h of held) if (h !== started) this.queue.push(h);
          raw.splice(0, i);
          this.phase = "follow";
          return this.serve();
        }
        raw.length = 0;
        if (this.ended) {
          failure = new LlmError("incomplete_stream", `${provider}: the stream ended before any output`, {
            provider,
          });
          break;
        }
      }
    } catch (error) {
      failure = asLlmError(error, provider);
    }
    // Not committed: the attempt failed or was cancelled before any output.
    raw.length = 0;
    this.release();
    const source = this.source;
    this.source = undefined;
    await source?.return?.()?.catch(() => undefined);
    if (watchdog.timedOut) failure = watchdog.timedOut;
    else if (signal?.aborted || cancelled) return this.cancel();
    failure ??= new LlmError("server", `${provider}: the attempt failed without a cause`, { provider });
    return this.retryOrFail(failure);
  }
}
