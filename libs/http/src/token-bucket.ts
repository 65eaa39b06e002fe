/** Rate of one bucket: `perSecond` refill, up to `burst` at once. */
export interface BucketRate {
  perSecond: number;
  burst: number;
}

/**
 * Token buckets by name (one per producer key), in this process. Per process
 * on purpose: a Redis round trip per request would cost more than the limit
 * protects, and N replicas allow N times the rate, as docs/configuration.md
 * says of `ingest.rateLimit`.
 * Buckets are created on first use; names are bounded (configured keys plus
 * `anonymous` and `hmac`), so the map cannot grow without bound.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Takes one token: 0 when allowed, else the seconds until one is available (for `Retry-After`). */
  take(name: string, rate: BucketRate): number {
    const t = this.now();
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = { tokens: rate.burst, at: t };
      this.buckets.set(name, bucket);
    }
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((t - bucket.at) / 1000) * rate.perSecond);
    bucket.at = t;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rate.perSecond));
  }
}
