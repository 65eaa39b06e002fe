/**
 * Retry delay: the configured schedule (the last entry repeats), full jitter
 * (AWS "Exponential Backoff and Jitter"), never below a provider's Retry-After,
 * and capped.
 */
export function retryDelayMs(input: {
  attempt: number;
  scheduleMs: readonly number[];
  retryAfterMs?: number;
  capMs?: number;
  random?: () => number;
}): number {
  const { attempt, scheduleMs, retryAfterMs, capMs = 10 * 60_000, random = Math.random } = input;
  const fallback = scheduleMs.length ? scheduleMs[scheduleMs.length - 1] : 1000;
  const base = scheduleMs[Math.max(0, attempt - 1)] ?? fallback ?? 1000;
  const jittered = Math.floor(random() * base) + 1;
  const floor = retryAfterMs && retryAfterMs > 0 ? retryAfterMs : 0;
  return Math.min(capMs, Math.max(floor, jittered));
}

/** Parses an HTTP Retry-After value (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
