import {
  RetryableError,
  classifyError,
  describeError,
  retryDelayMs,
  type DeliverJobData,
  type OperationStatus,
} from '@singleshot/core';
import type { AttemptRecord, CommitOutcome, OperationStore } from '@singleshot/store';
import type { DeadJobData } from '@singleshot/queues';
import type { Provider } from '@singleshot/providers';
import type { DeliveryConfig } from '@singleshot/config';
import type { Logger, Metrics } from '@singleshot/observability';
import { keepLease, type LeaseKeeper } from './lease-keeper';
import { reconcile } from './reconcile';

/** What the deliver handler needs; tests pass small object literals. */
export interface DeliverDeps {
  operations: Pick<OperationStore, 'claim' | 'commit' | 'extend' | 'history' | 'get'>;
  /** The ordered provider chain of a channel. */
  providers(channel: string): Provider[];
  addDead(record: DeadJobData): Promise<void>;
  policy: Pick<DeliveryConfig, 'leaseMs' | 'attempts' | 'backoffMs' | 'backoffCapMs' | 'inDoubtPolicy'>;
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
  | { kind: 'stale' };

/** Part of the lease kept free after a provider call's deadline, for the commit. */
function commitMarginMs(leaseMs: number): number {
  return Math.min(2_000, Math.floor(leaseMs * 0.2));
}

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
  const claim = await deps.operations.claim({
    operationKey: job.operationKey,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    owner: deps.workerId,
    leaseMs,
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

  const log = deps.logger.child({ operationKey: job.operationKey, messageKey: job.messageKey, fence: claim.fence, attempt: claim.attempts });
  const keeper = keepLease({
    leaseMs,
    now,
    extend: () => deps.operations.extend(job.operationKey, claim.fence, leaseMs),
    onLost: (reason) => log.warn({ reason }, 'lease lost; this holder stops and will not commit'),
  });
  try {
    return await sendClaimed(job, deps, { ...claim, keeper, log });
  } finally {
    keeper.stop();
  }
}

interface ClaimState {
  fence: string;
  attempts: number;
  previousStatus: OperationStatus;
  lastProvider: string;
  keeper: LeaseKeeper;
  log: Logger;
}

async function sendClaimed(job: DeliverJobData, deps: DeliverDeps, claim: ClaimState): Promise<DeliverOutcome> {
  const now = deps.now ?? Date.now;
  const chain = deps.providers(job.channel);
  const history: AttemptRecord[] = [];
  const record = (entry: Omit<AttemptRecord, 'at' | 'attempt' | 'fence'>) =>
    history.push({ at: now(), attempt: claim.attempts, fence: claim.fence, ...entry });

  const commit = async (outcome: CommitOutcome, extra: { provider?: string; externalId?: string; error?: { code: string; message: string }; reason?: string; releaseTo?: 'pending' | 'failed' | 'in_doubt' } = {}) => {
    const result = await deps.operations.commit({
      operationKey: job.operationKey,
      fence: claim.fence,
      outcome,
      messageKey: job.messageKey,
      recipient: job.recipient,
      channel: job.channel,
      history,
      ...extra,
    });
    if (result.kind === 'stale') {
      deps.metrics.staleCommits.inc({ queue: 'deliver' });
      claim.log.warn({ outcome, currentFence: result.currentFence }, 'commit rejected: fence superseded by a later claim');
    }
    return result.kind;
  };

  const goDead = async (reason: string, error: { code: string; message: string }, provider?: string): Promise<DeliverOutcome> => {
    if ((await commit('dead', { reason, error, provider })) === 'stale') return { kind: 'stale' };
    deps.metrics.dead.inc({ channel: job.channel, reason });
    deps.metrics.deliveries.inc({ channel: job.channel, provider: provider ?? 'none', result: 'dead' });
    await ensureDeadRecord(job, deps, { reason, error });
    claim.log.warn({ reason, error }, 'operation dead; recorded in the DLQ');
    return { kind: 'dead', reason };
  };

  const retryLater = async (outcome: 'failed' | 'in_doubt', reason: string, error: { code: string; message: string }, provider: string, retryAfterMs?: number): Promise<DeliverOutcome> => {
    if (claim.attempts >= deps.policy.attempts) {
      return goDead(outcome === 'in_doubt' ? 'in_doubt_after_last_attempt' : 'attempts_exhausted', error, provider);
    }
    if ((await commit(outcome, { provider, error })) === 'stale') return { kind: 'stale' };
    const delayMs = retryDelayMs({
      attempt: claim.attempts,
      scheduleMs: deps.policy.backoffMs,
      capMs: deps.policy.backoffCapMs,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(deps.random ? { random: deps.random } : {}),
    });
    return { kind: 'retry', delayMs, reason };
  };

  if (chain.length === 0) {
    return goDead('no_provider', { code: 'NO_PROVIDER', message: `no provider configured for channel "${job.channel}"` });
  }

  // A previous attempt may have reached a provider: reconcile before any send (invariant 5).
  if (claim.previousStatus === 'sending' || claim.previousStatus === 'in_doubt') {
    const verdict = await reconcile(job.operationKey, chain, claim, deps);
    if (verdict.kind === 'found') {
      record({ outcome: 'sent', provider: verdict.provider, externalId: verdict.externalId, note: 'reconciled by lookup' });
      if ((await commit('sent', { provider: verdict.provider, externalId: verdict.externalId })) === 'stale') return { kind: 'stale' };
      deps.metrics.deliveries.inc({ channel: job.channel, provider: verdict.provider, result: 'sent' });
      return { kind: 'sent', provider: verdict.provider, externalId: verdict.externalId, reconciled: true };
    }
    if (verdict.kind === 'unknown') {
      record({ outcome: 'in_doubt', provider: verdict.provider, errorCode: verdict.error.code, error: verdict.error.message, note: 'reconciliation failed' });
      return retryLater('in_doubt', 'reconcile_failed', verdict.error, verdict.provider);
    }
    if (verdict.kind === 'unresolvable') {
      return goDead('in_doubt_unresolvable', { code: 'NO_LOOKUP', message: `provider ${verdict.provider} cannot be asked; inDoubtPolicy is "dead"` }, verdict.provider);
    }
  }

  const margin = commitMarginMs(deps.policy.leaseMs);
  for (let i = 0; i < chain.length; i++) {
    const provider = chain[i] as Provider;
    if (claim.keeper.lost()) return { kind: 'stale' };
    const timeoutMs = claim.keeper.remainingMs() - margin;
    if (deps.shutdown?.aborted || timeoutMs < 100) {
      // Not sent: hand the operation back untouched for the next holder.
      const releaseTo = claim.previousStatus === 'in_doubt' ? 'in_doubt' : 'pending';
      if ((await commit('released', { releaseTo })) === 'stale') return { kind: 'stale' };
      return { kind: 'retry', delayMs: 1000, reason: deps.shutdown?.aborted ? 'shutdown' : 'lease_too_short' };
    }
    const startedAt = now();
    // Shutdown does not abort a call in flight: it is bounded by its deadline and then committed.
    const signal = claim.keeper.signal;
    try {
      const result = await provider.send(
        { operationKey: job.operationKey, messageKey: job.messageKey, recipient: job.recipient, channel: job.channel, subject: job.subject, text: job.text, data: job.data },
        { signal, timeoutMs },
      );
      const seconds = (now() - startedAt) / 1000;
      record({ outcome: 'sent', provider: provider.name, externalId: result.externalId, durationMs: now() - startedAt });
      if ((await commit('sent', { provider: provider.name, externalId: result.externalId })) === 'stale') return { kind: 'stale' };
      deps.metrics.deliveries.inc({ channel: job.channel, provider: provider.name, result: 'sent' });
      deps.metrics.deliveryDuration.observe({ channel: job.channel, provider: provider.name }, seconds);
      deps.metrics.endToEnd.observe({ channel: job.channel }, Math.max(0, now() - job.firstArrivalAt) / 1000);
      return { kind: 'sent', provider: provider.name, externalId: result.externalId, reconciled: false };
    } catch (err) {
      const error = describeError(err);
      const kind = classifyError(err);
      deps.metrics.deliveryDuration.observe({ channel: job.channel, provider: provider.name }, (now() - startedAt) / 1000);
      // A holder that lost its lease mid-call still goes through the fenced
      // commit below: the fence rejects it (and counts it) if a later claim exists.
      if (kind === 'permanent') {
        record({ outcome: 'dead', provider: provider.name, errorCode: error.code, error: error.message, durationMs: now() - startedAt });
        return goDead('permanent', error, provider.name);
      }
      if (kind === 'in_doubt') {
        record({ outcome: 'in_doubt', provider: provider.name, errorCode: error.code, error: error.message, durationMs: now() - startedAt });
        deps.metrics.inDoubt.inc({ channel: job.channel, provider: provider.name });
        deps.metrics.deliveries.inc({ channel: job.channel, provider: provider.name, result: 'in_doubt' });
        // Never fall back after an in-doubt outcome: the next attempt reconciles first.
        return retryLater('in_doubt', 'in_doubt', error, provider.name);
      }
      record({ outcome: 'failed', provider: provider.name, errorCode: error.code, error: error.message, durationMs: now() - startedAt });
      const retryable = err instanceof RetryableError ? err : undefined;
      if (retryable?.safeToFallback && i < chain.length - 1) {
        claim.log.warn({ provider: provider.name, next: chain[i + 1]?.name, error }, 'provider refused before the request was written; falling back');
        continue;
      }
      deps.metrics.deliveries.inc({ channel: job.channel, provider: provider.name, result: 'retry' });
      return retryLater('failed', error.code, error, provider.name, retryable?.retryAfterMs);
    }
  }
  return { kind: 'retry', delayMs: 1000, reason: 'unreachable' };
}

/** Makes sure a dead operation has its DLQ record (idempotent by operation key). */
async function ensureDeadRecord(
  job: DeliverJobData,
  deps: DeliverDeps,
  known?: { reason: string; error: { code: string; message: string } },
): Promise<void> {
  const [record, attempts] = await Promise.all([deps.operations.get(job.operationKey), deps.operations.history(job.operationKey)]);
  await deps.addDead({
    operationKey: job.operationKey,
    job,
    reason: known?.reason ?? record?.reason ?? 'unknown',
    error: known?.error ?? { code: record?.lastErrorCode ?? 'UNKNOWN', message: record?.lastError ?? '' },
    attempts,
    diedAt: (deps.now ?? Date.now)(),
  });
}
