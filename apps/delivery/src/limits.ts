import type { RateLimitConfig } from '@singleshot/config';
import type { ErrorCode } from '@singleshot/core';
import type { ClaimedAttempt } from './attempt';
import type { Ending, RecipientLimits } from './deliver-types';

export type { RecipientLimits } from './deliver-types';

/**
 * Applies the per-recipient limits once per operation, right after the claim
 * and before any provider call. Over a limit, the decision is `suppressed`
 * (reason `rate_limit`): the ending owner journals and counts it, never a
 * silent drop, and it can be replayed. Windows count operation keys, so an
 * operation that was let through once is let through again on a retry or
 * reclaim. A replay of a suppressed operation passes once (`limitBypass`),
 * and still takes its slot. Returns (or resolves to) undefined when the
 * operation may go on.
 */
export function applyRecipientLimits(a: ClaimedAttempt, limits: RecipientLimits | undefined): Promise<Ending | undefined> | undefined {
  if (!limits) return undefined;
  const { job, claim } = a;
  // Checked on the operation's first claim (or a claim of a released one); later
  // claims were counted then. A replay resets `attempts`, so it is checked again.
  if (claim.attempts > 1 && claim.previousStatus !== 'pending') return undefined;
  const scopes: { scope: string; limit: RateLimitConfig }[] = [];
  const routeLimit = limits.route(job.route);
  if (routeLimit) scopes.push({ scope: `route:${job.route}`, limit: routeLimit });
  if (limits.perRecipient) scopes.push({ scope: 'global', limit: limits.perRecipient });
  // No limit applies (the common case): decided without a promise.
  return scopes.length === 0 ? undefined : checkScopes(a, limits, scopes);
}

async function checkScopes(a: ClaimedAttempt, limits: RecipientLimits, scopes: { scope: string; limit: RateLimitConfig }[]): Promise<Ending | undefined> {
  const { job, claim } = a;
  const taken: string[] = [];
  for (const { scope, limit } of scopes) {
    const verdict = await limits.limiter.check({
      scope,
      recipient: job.recipient,
      operationKey: job.operationKey,
      max: limit.max,
      windowMs: limit.windowSeconds * 1000,
      force: claim.limitBypass,
    });
    if (verdict.allowed) {
      if (verdict.added) taken.push(scope);
      continue;
    }
    // Stopped by this scope: the slots it took in the others go back.
    await Promise.all(taken.map((s) => limits.limiter.release(s, job.recipient, job.operationKey)));
    const note = `${scope}: ${verdict.count} of ${limit.max} per ${limit.windowSeconds}s; a slot frees in ${Math.ceil(verdict.retryInMs / 1000)}s`;
    a.record({ step: 'rate_limit', outcome: 'suppressed', errorCode: 'RATE_LIMIT' satisfies ErrorCode, error: note });
    return {
      kind: 'suppressed',
      reason: 'rate_limit',
      error: { code: 'RATE_LIMIT' satisfies ErrorCode, message: note },
      details: { scope, count: verdict.count, max: limit.max },
    };
  }
  return undefined;
}
