/** `Retry-After` as milliseconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface BackoffOptions {
  /** First delay's upper bound (ms). Default 200. */
  baseMs?: number;
  /** Largest delay (ms), whatever the attempt. Default 5000. */
  capMs?: number;
}

/**
 * "Full jitter" (a uniformly random delay up to an exponentially growing
 * bound): retries of many producers after one outage spread out instead of
 * arriving together. A server's `Retry-After` is a floor: never come back
 * earlier than asked.
 */
export function retryDelayMs(attempt: number, options: BackoffOptions, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  const base = options.baseMs ?? 200;
  const cap = options.capMs ?? 5_000;
  const bound = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * bound);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}
