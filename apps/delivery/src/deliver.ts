import type { DeliverJobData, OperationStatus } from '@singleshot/core';
import type { AttemptRecord, OperationStore } from '@singleshot/store';
import type { DeadJobData } from '@singleshot/queues';
import type { BreakerRegistry, Provider } from '@singleshot/providers';
import type { DeliveryConfig } from '@singleshot/config';
import { lazyChild, type Logger, type Metrics } from '@singleshot/observability';
import { ClaimedAttempt } from './attempt';
import { ensureDeadRecord } from './dead-record';
import { keepLease } from './lease-keeper';
import { applyRecipientLimits, type RecipientLimits } from './limits';
import { reconcile } from './reconcile';
import { sendThroughChain } from './send-chain';

/** What the deliver handler needs; tests pass small object literals. */
export interface DeliverDeps {
  operations: Pick<OperationStore, 'claim' | 'commit' | 'extend' | 'history' | 'get'>;
  /** The ordered provider chain of a channel. */
  providers(channel: string): Provider[];
  addDead(record: DeadJobData): Promise<void>;
  policy: Pick<DeliveryConfig, 'leaseMs' | 'attempts' | 'backoffMs' | 'backoffCapMs' | 'inDoubtPolicy' | 'providerAttempts'>;
  /** Circuit breakers per channel and provider (this process's view); none: every provider is always tried. */
  breakers?: Pick<BreakerRegistry, 'get'>;
  /** Per-recipient limits; none: no limit. */
  limits?: RecipientLimits;
  workerId: string;
  logger: Logger;
  metrics: Pick<
    Metrics,
    | 'deliveries'
    | 'deliveryDuration'
    | 'endToEnd'
    | 'duplicatesSuppressed'
    | 'lockConflicts'
    | 'staleCommits'
    | 'inDoubt'
    | 'reconciliations'
    | 'dead'
    | 'suppressed'
    | 'fallbackSwitches'
  >;
  /** Aborted on shutdown: a claim not yet sent is released instead of sent. */
  shutdown?: AbortSignal;
  now?: () => number;
  random?: () => number;
}

export type DeliverOutcome =
  | { kind: 'sent'; provider: string; externalId: string; reconciled: boolean }
  | { kind: 'duplicate' }
  | { kind: 'terminal'; status: OperationStatus }
  | { kind: 'conflict'; delayMs: number }
  | { kind: 'retry'; delayMs: number; reason: string }
  | { kind: 'dead'; reason: string }
  | { kind: 'suppressed'; reason: string }
  | { kind: 'stale' };

/**
 * One delivery attempt of one operation: claim (lock + fence), reconcile when a
 * previous attempt may have reached a provider, send through the channel's
 * provider chain with a deadline inside the lease, fenced commit. Never throws
 * for provider outcomes; throws only when Redis itself fails (the job is then
 * retried by the queue, and the operation state says where it stood).
 */
export async function deliver(job: DeliverJobData, deps: DeliverDeps): Promise<DeliverOutcome> {
  const now = deps.now ?? Date.now;
  const { leaseMs } = deps.policy;
  // Every provider of the channel behind an open breaker: come back when the
  // first one lets a trial through, without claiming. A claim would count as an
  // attempt, and good operations would run out of attempts while no provider
  // was ever called (found by the chaos suite).
  const blockedForMs = openBreakersMs(job.channel, deps);
  if (blockedForMs > 0) {
    return { kind: 'retry', delayMs: blockedForMs + Math.floor((deps.random ?? Math.random)() * 250), reason: 'breaker_open' };
  }
  // The lease runs from when Redis ran the claim, not from when its answer was read.
  const claimSentAt = now();
  const claim = await deps.operations.claim({
    operationKey: job.operationKey,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    owner: deps.workerId,
    leaseMs,
    job,
  });
  switch (claim.kind) {
    case 'duplicate':
      deps.metrics.duplicatesSuppressed.inc({ stage: 'delivery', reason: 'already_sent' });
      return { kind: 'duplicate' };
    case 'terminal':
      if (claim.status === 'dead') await ensureDeadRecord(job, deps);
      return { kind: 'terminal', status: claim.status };
    case 'conflict':
      deps.metrics.lockConflicts.inc({ queue: 'deliver' });
      return { kind: 'conflict', delayMs: claim.retryInMs + Math.floor((deps.random ?? Math.random)() * 250) };
    case 'claimed':
      break;
  }

  const log = lazyChild(deps.logger, { operationKey: job.operationKey, messageKey: job.messageKey, fence: claim.fence, attempt: claim.attempts });
  const keeper = keepLease({
    leaseMs,
    startedAt: claimSentAt,
    now,
    extend: () => deps.operations.extend(job.operationKey, claim.fence, leaseMs),
    onLost: (reason) => log.warn({ reason }, 'lease lost; this holder stops and will not commit'),
  });
  try {
    return await runClaimed(new ClaimedAttempt(job, deps, { ...claim, keeper, log }));
  } finally {
    keeper.stop();
  }
}

/** Reconcile what a previous attempt may have left, apply the limits, then send. */
async function runClaimed(a: ClaimedAttempt): Promise<DeliverOutcome> {
  const { job, deps, claim } = a;
  const chain = deps.providers(job.channel);
  if (chain.length === 0) {
    return a.dead('no_provider', { code: 'NO_PROVIDER', message: `no provider configured for channel "${job.channel}"` });
  }
  // Earlier claims since the last replay decide the fallback position (a replay resets attempts).
  const prior: AttemptRecord[] = claim.attempts > 1 ? await deps.operations.history(job.operationKey) : [];
  // A previous attempt may have reached a provider: reconcile before any send (invariant 5).
  if (claim.previousStatus === 'sending' || claim.previousStatus === 'in_doubt') {
    const verdict = await reconcile(job.operationKey, chain, claim, deps);
    switch (verdict.kind) {
      case 'found':
        a.record({ step: 'reconcile', outcome: 'sent', provider: verdict.provider, externalId: verdict.externalId, note: 'reconciled by lookup' });
        return a.sent(verdict.provider, verdict.externalId, true);
      case 'unknown':
        a.record({ step: 'reconcile', outcome: 'in_doubt', provider: verdict.provider, errorCode: verdict.error.code, error: verdict.error.message, note: 'reconciliation failed' });
        return a.retryLater('in_doubt', 'reconcile_failed', verdict.error, verdict.provider);
      case 'unresolvable':
        return a.dead('in_doubt_unresolvable', { code: 'NO_LOOKUP', message: `provider ${verdict.provider} cannot be asked; inDoubtPolicy is "dead"` }, verdict.provider);
      case 'not_found':
        // The provider says it never took it: the doubt is resolved, fallback is allowed again.
        for (const provider of verdict.asked) {
          a.record({ step: 'reconcile', outcome: 'failed', provider, errorCode: 'NOT_FOUND_ON_LOOKUP', note: 'lookup: provider does not have it' });
        }
        break;
    }
  }
  const limited = await applyRecipientLimits(a, deps.limits);
  if (limited) return limited;
  return sendThroughChain(a, chain, prior);
}

/** Ms until the first provider of the channel accepts a call; 0 when one can be tried now. */
function openBreakersMs(channel: string, deps: DeliverDeps): number {
  if (!deps.breakers) return 0;
  const chain = deps.providers(channel);
  if (chain.length === 0) return 0;
  let soonest = Infinity;
  for (const provider of chain) {
    const ms = deps.breakers.get(channel, provider.name).openForMs();
    if (ms === 0) return 0;
    soonest = Math.min(soonest, ms);
  }
  return soonest;
}
