/**
 * A rate limit beyond the retry budget (llm-client's `resetAt`): when it
 * resets, said the same way in print mode, JSON results and the
 * interactive offer to wait.
 */

/** `10:42:05 (in 12m 30s)`, in local time. */
export function formatReset(resetAt: number, now: number = Date.now()): string {
  const at = new Date(resetAt);
  const clock = [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");
  return `${clock} (in ${formatCountdown(resetAt - now)})`;
}

/** `2h 5m`, `12m 30s`, `45s`. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}
