/**
 * The one retry policy of every provider. The SDKs' own retries are turned
 * off (`maxRetries: 0`), so this is the only place that decides whether and
 * when a request is sent again. A request is only retried before its stream
 * has produced its first event: once the caller has seen output, a failure
 * is reported, never silently replayed.
 */
import { setTimeout as delay } from "node:timers/promises";
import { LlmError } from "./errors.ts";
import type { RetryOptions } from "./request.ts";

/** {@link RetryOptions} with every default filled in. */
export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  initialDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
  totalBudgetMs: 120_000,
};

export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY };
  if (options === undefined) return policy;
  for (const key of Object.keys(DEFAULT_RETRY) as (keyof RetryPolicy)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) {
      throw new LlmError(
        "config",
        `retry.${key} must be a non-negative number of ${unitOf(key)}, got ${value}`,
      );
    }
    policy[key] = value;
  }
  if (policy.maxAttempts < 1) throw new LlmError("config", "retry.maxAttempts must be at least 1");
  return policy;
}

function unitOf(key: keyof RetryPolicy): string {
  return key === "maxAttempts" ? "attempts" : "milliseconds";
}

/**
 * Backoff before attempt `attempt + 1` (attempt counts from 1): exponential
 * from `initialDelayMs`, capped at `maxDelayMs`, with jitter in the upper
 * half so concurrent clients spread out but never retry at once.
 */
export function backoffDelay(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exp = policy.initialDelayMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(policy.maxDelayMs, exp);
  return Math.round(capped / 2 + (random() * capped) / 2);
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; error: LlmError };

/**
 * Decides what to do after attempt `attempt` failed with `error`, `elapsedMs`
 * after the first attempt started. A server `retry-after` is honoured as
 * given when it is within `maxRetryAfterMs`; above it the call fails at once
 * with a message that says so (waiting minutes inside an agent turn is worse
 * than telling the user). A rate limit given up on that way, or because the
 * wait would pass `totalBudgetMs`, carries its reset time (`resetAt`), so a
 * caller can offer to wait for it.
 */
export function decideRetry(
  error: LlmError,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy,
  random?: () => number,
  now: number = Date.now(),
): RetryDecision {
  if (!error.retryable) return { retry: false, error };
  if (attempt >= policy.maxAttempts) {
    if (policy.maxAttempts === 1) return { retry: false, error };
    return {
      retry: false,
      error: rewrap(
        error,
        `${error.message} (gave up after ${attempt} attempts; retry.maxAttempts is ${policy.maxAttempts})`,
      ),
    };
  }
  let delayMs: number;
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > policy.maxRetryAfterMs) {
      const wait = `the server asked to wait ${formatMs(error.retryAfterMs)} before retrying`;
      return {
        retry: false,
        error: rewrap(
          error,
          `${error.message} (${wait}${resetsAt(error, now)}, more than retry.maxRetryAfterMs = ${formatMs(policy.maxRetryAfterMs)}; not waiting. ` +
            "Try again later or raise retry.maxRetryAfterMs)",
          resetOf(error, now),
        ),
      };
    }
    delayMs = error.retryAfterMs;
  } else {
    delayMs = backoffDelay(attempt, policy, random);
  }
  if (elapsedMs + delayMs > policy.totalBudgetMs) {
    return {
      retry: false,
      error: rewrap(
        error,
        `${error.message} (retry budget of ${formatMs(policy.totalBudgetMs)} exhausted after ${attempt} attempts${resetsAt(error, now)}; ` +
          "see retry.totalBudgetMs)",
        resetOf(error, now),
      ),
    };
  }
  return { retry: true, delayMs };
}

/** When a rate limit the server timed resets, for the error that gives up on it. */
function resetOf(error: LlmError, now: number): number | undefined {
  if (error.code !== "rate_limit" || error.retryAfterMs === undefined) return undefined;
  return now + error.retryAfterMs;
}

function resetsAt(error: LlmError, now: number): string {
  const at = resetOf(error, now);
  return at === undefined ? "" : `; the limit resets at ${new Date(at).toISOString()}`;
}

function rewrap(error: LlmError, message: string, resetAt?: number): LlmError {
  return new LlmError(error.code, message, {
    retryable: error.retryable,
    status: error.status,
    retryAfterMs: error.retryAfterMs,
    ...(resetAt !== undefined ? { resetAt } : {}),
    ...(error.networkReason !== undefined ? { networkReason: error.networkReason } : {}),
    provider: error.provider,
    cause: error,
  });
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`;
}

/**
 * The one retry-after parser: the delay a server asked for, from
 * `retry-after-ms` (OpenAI, Anthropic) or `retry-after` (seconds or an HTTP
 * date), else from the providers' rate-limit reset headers (see
 * {@link rateLimitResetFromHeaders}), in milliseconds. Undefined when
 * absent or invalid.
 */
export function retryAfterFromHeaders(
  headers: { get(name: string): string | null } | undefined,
  now: number = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get("retry-after");
  if (after !== null) {
    const seconds = Number(after.trim());
    if (after.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  return rateLimitResetFromHeaders(headers, now);
}

/** The limits a provider reports on every response: the remaining count and when it resets. */
const RESET_HEADERS: readonly { remaining: string; reset: string }[] = [
  // Anthropic: RFC 3339 timestamps.
  ...["requests", "tokens", "input-tokens", "output-tokens"].map((kind) => ({
    remaining: `anthropic-ratelimit-${kind}-remaining`,
    reset: `anthropic-ratelimit-${kind}-reset`,
  })),
  // OpenAI: durations (`1s`, `6m0s`, `20ms`).
  ...["requests", "tokens"].map((kind) => ({
    remaining: `x-ratelimit-remaining-${kind}`,
    reset: `x-ratelimit-reset-${kind}`,
  })),
];

/**
 * Milliseconds until the rate limit that is used up resets, from the
 * providers' rate-limit headers (Anthropic's `anthropic-ratelimit-*-reset`,
 * OpenAI's `x-ratelimit-reset-*`): the latest reset among the limits whose
 * remaining count is 0, or among all of them when none says so.
 */
export function rateLimitResetFromHeaders(
  headers: { get(name: string): string | null },
  now: number = Date.now(),
): number | undefined {
  let exhausted: number | undefined;
  let any: number | undefined;
  for (const { remaining, reset } of RESET_HEADERS) {
    const value = headers.get(reset);
    if (value === null) continue;
    const ms = resetDelay(value.trim(), now);
    if (ms === undefined) continue;
    any = Math.max(any ?? 0, ms);
    if (headers.get(remaining)?.trim() === "0") exhausted = Math.max(exhausted ?? 0, ms);
  }
  return exhausted ?? any;
}

/** `2026-11-27T10:05:00Z` or `6m0s` / `1.5s` / `20ms` / `1h2m` as milliseconds from `now`. */
function resetDelay(value: string, now: number): number | undefined {
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : Math.max(0, at - now);
  }
  const parts =
    /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(
      value,
    );
  if (parts === null || value === "") return undefined;
  const [, h, m, sec, ms] = parts.map((p) => (p === undefined ? 0 : Number(p)));
  return Math.round(((h ?? 0) * 3600 + (m ?? 0) * 60 + (sec ?? 0)) * 1000 + (ms ?? 0));
}

/** Waits `ms`; resolves `false` at once when `signal` aborts (before or during the wait). */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, undefined, { signal }).then(
    () => true,
    () => false,
  );
}
