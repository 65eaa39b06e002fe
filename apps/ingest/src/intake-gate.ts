import type { ServerResponse } from 'node:http';
import { InFlightGate, TokenBuckets, sendError } from '@singleshot/http';
import type { IngestContext } from './context';
import type { Producer } from './producer-auth';

/**
 * What every intake request passes before its body is looked at: the
 * in-flight cap (503 OVERLOADED), producer authentication (401) and the
 * per-key rate limit (429 with Retry-After). One per ingest server, shared by
 * every route, so the cap and each key's bucket count requests of all.
 */
export class IntakeGate {
  /** At most `ingest.maxRequestsInFlight` intake requests at once. */
  readonly inFlight: InFlightGate;
  private readonly buckets = new TokenBuckets();

  constructor(private readonly ctx: IngestContext) {
    this.inFlight = new InFlightGate(ctx.limits.maxRequestsInFlight, 1);
  }

  /** The producer of a request, or undefined once it was answered 401 (with a `WWW-Authenticate` challenge). */
  authenticate(res: ServerResponse, authorization: string | undefined, signature: string | undefined, body: Buffer): Producer | undefined {
    const outcome = this.ctx.auth.authenticate(authorization, signature, body);
    if (outcome.ok) return outcome.producer;
    this.ctx.counters.received('unknown', 'invalid');
    res.setHeader('www-authenticate', 'Bearer realm="singleshot"');
    sendError(res, 401, outcome.code, outcome.message);
    return undefined;
  }

  /** True when `producer` is within its rate; else answers 429 `RATE_LIMITED` with `Retry-After` and returns false. */
  withinRate(res: ServerResponse, producer: Producer): boolean {
    const wait = this.buckets.take(producer.name, producer.rate);
    if (wait <= 0) return true;
    res.setHeader('retry-after', String(wait));
    sendError(res, 429, 'RATE_LIMITED', `producer "${producer.name}" is over its rate limit; retry later`, { retryAfterSeconds: wait });
    return false;
  }
}
