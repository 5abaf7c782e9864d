import { describe, expect, it } from "vitest";
import { LlmError } from "../src/errors.ts";
import {
  backoffDelay,
  DEFAULT_RETRY,
  decideRetry,
  rateLimitResetFromHeaders,
  resolveRetryPolicy,
  retryAfterFromHeaders,
  sleep,
} from "../src/retry.ts";

const headers = (h: Record<string, string>) => new Headers(h);

describe("retry policy", () => {
  it("backs off exponentially with jitter in the upper half, capped", () => {
    const policy = resolveRetryPolicy({ initialDelayMs: 100, maxDelayMs: 1000 });
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    expect(backoffDelay(10, policy, () => 0)).toBe(500);
  });

  it("does not retry a non-retryable error", () => {
    const auth = new LlmError("auth", "bad key", { status: 401 });
    expect(decideRetry(auth, 1, 0, DEFAULT_RETRY)).toEqual({ retry: false, error: auth });
  });

  it("honours retry-after within the cap and fails fast above it with a clear message", () => {
    const policy = resolveRetryPolicy({ maxRetryAfterMs: 10_000 });
    const soon = new LlmError("rate_limit", "slow down", { status: 429, retryAfterMs: 3000 });
    expect(decideRetry(soon, 1, 0, policy)).toEqual({ retry: true, delayMs: 3000 });
    const late = new LlmError("rate_limit", "slow down", { status: 429, retryAfterMs: 120_000 });
    const decision = decideRetry(late, 1, 0, policy);
    expect(decision.retry).toBe(false);
    if (decision.retry) return;
    expect(decision.error.code).toBe("rate_limit");
    expect(decision.error.status).toBe(429);
    expect(decision.error.message).toContain("asked to wait 120 s");
    expect(decision.error.message).toContain("retry.maxRetryAfterMs");
  });

  it("a rate limit given up on carries when it resets; other errors do not", () => {
    const policy = resolveRetryPolicy({ maxRetryAfterMs: 10_000, totalBudgetMs: 60_000 });
    const now = Date.UTC(2026, 10, 27, 10, 0, 0);
    const late = new LlmError("rate_limit", "slow down", { status: 429, retryAfterMs: 600_000 });
    const over = decideRetry(late, 1, 0, policy, undefined, now);
    expect(over.retry).toBe(false);
    if (over.retry) return;
    expect(over.error.resetAt).toBe(now + 600_000);
    expect(over.error.message).toContain("the limit resets at 2026-11-27T10:10:00.000Z");
    // Within the cap but past the total budget: given up on too, with the reset.
    const budget = decideRetry(
      new LlmError("rate_limit", "slow down", { status: 429, retryAfterMs: 9_000 }),
      2,
      55_000,
      policy,
      undefined,
      now,
    );
    expect(budget.retry).toBe(false);
    if (!budget.retry) expect(budget.error.resetAt).toBe(now + 9_000);
    // A 503 asking to wait long is not a rate limit: no reset to wait for.
    const busy = decideRetry(
      new LlmError("overloaded", "busy", { status: 503, retryAfterMs: 600_000 }),
      1,
      0,
      policy,
      undefined,
      now,
    );
    if (!busy.retry) expect(busy.error.resetAt).toBeUndefined();
  });

  it("reads the providers' rate-limit reset headers when there is no retry-after", () => {
    const now = Date.UTC(2026, 10, 27, 10, 0, 0);
    // Anthropic: RFC 3339; the exhausted limit decides, not the later one still open.
    const anthropic = headers({
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2026-11-27T10:02:00Z",
      "anthropic-ratelimit-tokens-remaining": "5000",
      "anthropic-ratelimit-tokens-reset": "2026-11-27T10:30:00Z",
    });
    expect(rateLimitResetFromHeaders(anthropic, now)).toBe(120_000);
    expect(retryAfterFromHeaders(anthropic, now)).toBe(120_000);
    // OpenAI: durations.
    expect(
      rateLimitResetFromHeaders(
        headers({ "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s" }),
        now,
      ),
    ).toBe(360_000);
    expect(rateLimitResetFromHeaders(headers({ "x-ratelimit-reset-requests": "1.5s" }), now)).toBe(1500);
    expect(rateLimitResetFromHeaders(headers({ "x-ratelimit-reset-requests": "20ms" }), now)).toBe(20);
    expect(rateLimitResetFromHeaders(headers({ "x-ratelimit-reset-requests": "1h2m3s" }), now)).toBe(
      3_723_000,
    );
    expect(rateLimitResetFromHeaders(headers({ "x-ratelimit-reset-requests": "soon" }), now)).toBeUndefined();
    // retry-after wins over them.
    expect(
      retryAfterFromHeaders(headers({ "retry-after": "7", "x-ratelimit-reset-requests": "6m0s" }), now),
    ).toBe(7000);
  });

  it("stops at maxAttempts and at the total budget, saying which", () => {
    const policy = resolveRetryPolicy({ maxAttempts: 3, totalBudgetMs: 1000, initialDelayMs: 400 });
    const e = new LlmError("overloaded", "busy", { status: 529 });
    const third = decideRetry(e, 3, 0, policy);
    expect(third.retry).toBe(false);
    if (!third.retry) expect(third.error.message).toContain("gave up after 3 attempts");
    const budget = decideRetry(e, 1, 900, policy, () => 1);
    expect(budget.retry).toBe(false);
    if (!budget.retry) expect(budget.error.message).toContain("retry budget");
  });

  it("rejects nonsense options", () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => resolveRetryPolicy({ initialDelayMs: -1 })).toThrow(/initialDelayMs/);
  });

  it("parses retry-after-ms, retry-after seconds and HTTP dates", () => {
    expect(retryAfterFromHeaders(headers({ "retry-after-ms": "1500" }))).toBe(1500);
    expect(retryAfterFromHeaders(headers({ "retry-after": "7" }))).toBe(7000);
    expect(retryAfterFromHeaders(headers({ "retry-after": "0.5" }))).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterFromHeaders(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }), now)).toBe(
      30_000,
    );
    expect(retryAfterFromHeaders(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterFromHeaders(headers({}))).toBeUndefined();
  });

  it("sleep returns false at once when aborted", async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort();
    expect(await pending).toBe(false);
    expect(await sleep(60_000, controller.signal)).toBe(false);
    expect(await sleep(1, new AbortController().signal)).toBe(true);
  });
});
