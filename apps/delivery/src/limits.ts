import type { DeliverJobData } from '@singleshot/core';
import type { Admission, LimitScope } from '@singleshot/store';
import type { RecipientLimits } from './deliver-types';

export type { RecipientLimits } from './deliver-types';

/**
 * Reads the per-recipient limits of an operation before its claim, which
 * answers them (docs/protocol.md, invariant 3): over a limit, the operation's
 * first claim ends it `suppressed` (reason `rate_limit`), journaled, counted
 * and replayable, never a silent drop. The windows count operation keys, so
 * an operation that was let through once is let through again on a retry or
 * reclaim. The read cannot happen inside the claim: a window's key is per
 * scope and recipient, in another cluster slot than the operation.
 *
 * Returns undefined, with no promise and no Redis command, when no limit
 * applies (the common case). Otherwise the admission goes into the claim (its
 * `over` as the claim's `limit`) and is squared with the verdict afterwards
 * (`RateLimiter.settle`: slots given back, or a replay's slot taken).
 */
export function admitLimits(job: DeliverJobData, limits: RecipientLimits | undefined): Promise<Admission> | undefined {
  if (!limits) return undefined;
  const scopes: LimitScope[] = [];
  const routeLimit = limits.route(job.route);
  if (routeLimit) scopes.push({ scope: `route:${job.route}`, max: routeLimit.max, windowMs: routeLimit.windowSeconds * 1000 });
  if (limits.perRecipient) scopes.push({ scope: 'global', max: limits.perRecipient.max, windowMs: limits.perRecipient.windowSeconds * 1000 });
  return scopes.length === 0 ? undefined : limits.limiter.admit(job.recipient, job.operationKey, scopes);
}
