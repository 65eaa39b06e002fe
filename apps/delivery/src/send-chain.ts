import { RetryableError, classifyError, describeError, type AnyErrorCode } from '@singleshot/core';
import { RECIPIENT_REFUSAL_CODES, budgetSpent, planChain, type BreakerPermit, type CircuitBreaker, type Provider, type SendRequest } from '@singleshot/providers';
import type { AttemptRecord } from '@singleshot/store';
import type { ClaimedAttempt } from './attempt';
import type { Ending, ErrorInfo } from './deliver-types';

/** Part of the lease kept free after a provider call's deadline, for the commit. */
export function commitMarginMs(leaseMs: number): number {
  return Math.min(2_000, Math.floor(leaseMs * 0.2));
}

const ALWAYS: BreakerPermit = { allowed: true, trial: false };

/**
 * Sends a claimed operation through its channel's fallback chain (see
 * `planChain` in @singleshot/providers for the rules). Each provider call gets
 * a deadline inside what is left of the lease at that moment, minus the commit
 * margin, so trying a second provider in the same claim never outlives the
 * lease; a holder that lost its lease stops before the next provider. Every
 * call, skip and failure is recorded; the decision it returns is carried out
 * (committed, counted) by `finish`, with those records as the history.
 */
export async function sendThroughChain(a: ClaimedAttempt, chain: Provider[], prior: AttemptRecord[]): Promise<Ending> {
  const { job, deps } = a;
  const perProvider = deps.policy.providerAttempts;
  const plan = planChain({ providers: chain.map((p) => p.name), history: prior.length > 0 ? [...prior, ...a.history] : a.history, perProviderAttempts: perProvider });
  const order = plan.order.map((name) => chain.find((p) => p.name === name) as Provider);
  // The same request for every provider of the chain: built once per attempt.
  const request: SendRequest = {
    operationKey: job.operationKey,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    subject: job.subject,
    text: job.text,
    data: job.data,
    route: job.route,
  };
  if (job.html !== undefined) request.html = job.html;
  if (a.listUnsubscribe) request.listUnsubscribe = a.listUnsubscribe;
  if (a.content) {
    request.attachments = a.content.attachments;
    request.documents = a.content.documents;
  }
  const debug = deps.logger.isLevelEnabled('debug');
  if (plan.pinnedTo) a.log.info({ event: 'in_doubt_pinned', provider: plan.pinnedTo }, 'unresolved in-doubt send: staying on this provider, no fallback');
  const margin = commitMarginMs(deps.policy.leaseMs);
  const switchTo = (from: Provider, to: Provider, why: string, error: { code: AnyErrorCode; message: string }) => {
    deps.metrics.fallbackSwitches.inc({ channel: job.channel, from: from.name, to: to.name });
    a.log.warn({ event: 'provider_fallback', provider: from.name, next: to.name, why, error }, 'falling back to the next provider');
  };

  for (let i = 0; i < order.length; i++) {
    const provider = order[i] as Provider;
    const next = order[i + 1];
    if (a.keeper.lost()) return { kind: 'stale' };

    const breaker: CircuitBreaker | undefined = deps.breakers?.get(job.channel, provider.name);
    const permit = takePermit(a, provider.name, breaker);
    if (!permit.allowed) {
      const error: ErrorInfo = { code: 'BREAKER_OPEN', message: `${provider.name}: circuit breaker open; skipped without a call` };
      a.record({ step: 'breaker_skip', outcome: 'failed', provider: provider.name, errorCode: error.code, error: error.message });
      if (next) {
        switchTo(provider, next, 'breaker_open', error);
        continue;
      }
      // The breaker opened after the gate let this attempt through. If no
      // provider was called in this claim, the claim is handed back and its
      // attempt refunded: waiting at a breaker never counts as an attempt.
      if (!a.history.some((h) => h.step === 'send')) return { kind: 'released', reason: 'breaker_open', provider: provider.name, delayMs: permit.retryInMs };
      return { kind: 'retry', status: 'failed', reason: 'breaker_open', error, provider: provider.name, retryAfterMs: permit.retryInMs };
    }

    const timeoutMs = a.keeper.remainingMs() - margin;
    if (deps.shutdown?.aborted || timeoutMs < 100) {
      breaker?.record('abandoned', permit);
      return { kind: 'released', reason: deps.shutdown?.aborted ? 'shutdown' : 'lease_too_short', provider: provider.name };
    }
    const startedAt = a.now();
    if (debug) a.log.debug({ provider: provider.name, timeoutMs }, 'calling provider');
    try {
      // Shutdown does not abort a call in flight: it is bounded by its deadline and then committed.
      const result = await provider.send(request, a.keeper.callContext(timeoutMs));
      breaker?.record('success', permit);
      const durationMs = a.now() - startedAt;
      deps.metrics.deliveryDuration.observe({ channel: job.channel, provider: provider.name }, durationMs / 1000);
      a.record({ step: 'send', outcome: 'sent', provider: provider.name, externalId: result.externalId, durationMs });
      return { kind: 'sent', provider: provider.name, externalId: result.externalId, reconciled: false };
    } catch (err) {
      const error = describeError(err);
      const kind = classifyError(err);
      const durationMs = a.now() - startedAt;
      deps.metrics.deliveryDuration.observe({ channel: job.channel, provider: provider.name }, durationMs / 1000);
      // Cut short by our own lost lease: that says nothing about the provider.
      // A permanent error, or a refusal of this recipient only (outside WhatsApp's session window), is the provider working.
      breaker?.record(a.keeper.lost() ? 'abandoned' : kind === 'permanent' || RECIPIENT_REFUSAL_CODES.has(error.code) ? 'success' : 'failure', permit);
      // A holder that lost its lease mid-call still goes through the fenced
      // commit below: the fence rejects it (and counts it) if a later claim exists.
      if (kind === 'permanent') {
        a.record({ step: 'send', outcome: 'dead', provider: provider.name, errorCode: error.code, error: error.message, durationMs });
        return { kind: 'dead', reason: 'permanent', error, provider: provider.name };
      }
      if (kind === 'in_doubt') {
        a.record({ step: 'send', outcome: 'in_doubt', provider: provider.name, errorCode: error.code, error: error.message, durationMs });
        deps.metrics.inDoubt.inc({ channel: job.channel, provider: provider.name });
        // Never fall back after an in-doubt outcome: the next attempt reconciles first.
        return { kind: 'in_doubt', reason: 'in_doubt', error, provider: provider.name };
      }
      a.record({ step: 'send', outcome: 'failed', provider: provider.name, errorCode: error.code, error: error.message, durationMs });
      plan.used[provider.name] = (plan.used[provider.name] ?? 0) + 1;
      const retryable = err instanceof RetryableError ? err : undefined;
      // Refused before a byte was written: the next provider may take it at once.
      // 5xx/429: only once this provider's budget for the operation is spent.
      const definite = retryable?.safeToFallback === true || budgetSpent(plan, provider.name, perProvider);
      if (next && definite && !a.keeper.lost()) {
        switchTo(provider, next, retryable?.safeToFallback ? 'refused' : 'budget_spent', error);
        continue;
      }
      return {
        kind: 'retry',
        status: 'failed',
        reason: error.code,
        error,
        provider: provider.name,
        ...(retryable?.retryAfterMs !== undefined ? { retryAfterMs: retryable.retryAfterMs } : {}),
      };
    }
  }
  throw new Error('unreachable: the last provider of a plan always ends the attempt');
}

/** The reserved half-open trial for this provider (taken before the claim), else a fresh permit. */
function takePermit(a: ClaimedAttempt, provider: string, breaker: CircuitBreaker | undefined): BreakerPermit {
  if (a.trial && !a.trial.used && a.trial.provider === provider) {
    a.trial.used = true;
    return a.trial.permit;
  }
  return breaker ? breaker.acquire() : ALWAYS;
}
