/** Options of a scrape-time data source (queue counts, DLQ depth). */
export interface SourceOptions {
  /** How long one answer serves every scrape; default 2000 ms, so a scrape storm does not hammer Redis. */
  cacheMs?: number;
  /** A source slower than this counts as failed for this round; default 5000 ms (below Prometheus' 10 s scrape timeout). */
  timeoutMs?: number;
  /** Told about a failed or timed-out fetch (once per fetch, not per scrape). */
  onError?: (err: unknown) => void;
  /** Clock, for tests. */
  now?: () => number;
}

export type SourceResult<T> = { ok: true; value: T } | { ok: false };

/**
 * Calls `fetch` at most once per `cacheMs` (counted from its answer);
 * concurrent scrapes share the call in flight. Never rejects: a failure is
 * reported to `onError` and answered with `{ ok: false }`, so one broken
 * source cannot fail the whole scrape.
 */
export function cachedSource<T>(fetch: () => Promise<T>, options: SourceOptions = {}): () => Promise<SourceResult<T>> {
  const cacheMs = options.cacheMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  // `settledAt` stays undefined while the fetch is in flight: a slow source is shared, never stacked.
  let cached: { settledAt: number | undefined; result: Promise<SourceResult<T>> } | undefined;

  const run = async (): Promise<SourceResult<T>> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`metrics source timed out after ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      return { ok: true, value: await Promise.race([fetch(), timeout]) };
    } catch (err) {
      options.onError?.(err);
      return { ok: false };
    } finally {
      clearTimeout(timer);
    }
  };

  return () => {
    if (cached && (cached.settledAt === undefined || now() - cached.settledAt < cacheMs)) return cached.result;
    const entry: { settledAt: number | undefined; result: Promise<SourceResult<T>> } = { settledAt: undefined, result: run() };
    void entry.result.then(() => {
      entry.settledAt = now();
    });
    cached = entry;
    return entry.result;
  };
}
