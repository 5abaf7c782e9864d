import { LlmError } from "./errors.ts";

/**
 * Watches one attempt: aborts it with a `timeout` error when the first
 * event takes longer than `firstEventMs`, or the provider is silent for
 * `idleMs` while the caller waits on it (a slow consumer is not an idle
 * server). Per event it costs two field writes and an increment: a timer
 * ticking at a quarter of the limit notices silence, so a timeout fires
 * between the limit and 1.25x the limit.
 */
export class Watchdog {
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
