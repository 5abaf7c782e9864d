/**
 * How an adapter's stream ends when it does not end normally: failures,
 * cancellation and timeouts all close the open blocks with `block_abort`
 * and finish with exactly one terminal status. Shared by every adapter so
 * the contract of `event.ts` holds the same way for all providers.
 */

import { LlmError } from "../errors.ts";
import type { BlockKind, ErrorEvent, Event } from "../event.ts";

/** Blocks that have started and not yet stopped, in start order. */
export class OpenBlocks {
  private readonly open = new Map<number, BlockKind>();

  start(index: number, block: BlockKind): void {
    this.open.set(index, block);
  }

  stop(index: number): void {
    this.open.delete(index);
  }

  has(index: number): boolean {
    return this.open.has(index);
  }

  get size(): number {
    return this.open.size;
  }

  /** `block_abort` for every open block, which are then forgotten. */
  *abortAll(reason: string): Generator<Event> {
    for (const [index, block] of this.open) yield { type: "block_abort", index, block, reason };
    this.open.clear();
  }
}

/** The abort reason the client uses when the caller cancels (as opposed to a timeout). */
export function cancellation(): LlmError {
  return new LlmError("aborted", "the request was cancelled by the caller");
}

/**
 * What an aborted signal means: the client aborts an attempt with an
 * `LlmError` (timeouts) to make the stream fail, and with an `aborted`
 * error (or any other reason) to cancel it.
 */
export function abortFailure(signal: AbortSignal): LlmError | undefined {
  const reason: unknown = signal.reason;
  return LlmError.isInstance(reason) && reason.code !== "aborted" ? reason : undefined;
}

export function errorEvent(error: LlmError): ErrorEvent {
  const event: ErrorEvent = {
    type: "error",
    code: error.code,
    message: error.message,
    retryable: error.retryable,
  };
  if (error.status !== undefined) event.status = error.status;
  if (error.retryAfterMs !== undefined) event.retryAfterMs = error.retryAfterMs;
  if (error.resetAt !== undefined) event.resetAt = error.resetAt;
  if (error.networkReason !== undefined) event.networkReason = error.networkReason;
  return event;
}

/** Ends a stream as failed: open blocks aborted, the error, `status: failed`. */
export function* failStream(error: LlmError, blocks: OpenBlocks): Generator<Event> {
  yield* blocks.abortAll(error.code);
  yield errorEvent(error);
  yield { type: "status", status: "failed", stopReason: "error" };
}

/** Ends a stream whose signal was aborted: failed for a timeout, cancelled otherwise. */
export function* endAborted(signal: AbortSignal, blocks: OpenBlocks): Generator<Event> {
  const failure = abortFailure(signal);
  if (failure) {
    yield* failStream(failure, blocks);
    return;
  }
  yield* blocks.abortAll("cancelled");
  yield { type: "status", status: "cancelled" };
}

/** The error for a stream that ended without the provider's terminal marker. */
export function incompleteStream(provider: string, missing: string): LlmError {
  return new LlmError(
    "incomplete_stream",
    `${provider}: the stream ended before ${missing}; the response is incomplete (the connection was probably cut)`,
    { provider },
  );
}
