import { retryDelayMs, type DeadReason } from '@singleshot/core';
import type { CommitInput } from '@singleshot/store';
import type { ClaimedAttempt } from './attempt';
import { endDead } from '@singleshot/queues';
import type { DeliverOutcome, DeliveryResult, Ending, ErrorInfo } from './deliver-types';

/** How long a released operation waits before its next claim. */
const RELEASE_DELAY_MS = 1000;

type CommitExtra = Omit<CommitInput, 'operationKey' | 'fence' | 'outcome' | 'messageKey' | 'recipient' | 'channel' | 'history'>;

/**
 * The one owner of every ending of a claimed attempt: it turns the decision
 * into the fenced commit (state, history, journal entry; docs/protocol.md
 * invariants 4 and 7), the DLQ record of a dead operation, the log line, and
 * exactly one `singleshot_deliveries_total` sample whose `result` says how the
 * attempt ended. A `retry` or `in_doubt` of the last attempt ends `dead`; a
 * commit rejected by a later fence ends `stale` and has written nothing.
 */
export async function finish(a: ClaimedAttempt, ending: Ending): Promise<DeliverOutcome> {
  switch (ending.kind) {
    case 'sent': {
      if ((await commit(a, 'sent', { provider: ending.provider, externalId: ending.externalId })) === 'stale') return stale(a, ending.provider);
      count(a, 'sent', ending.provider);
      if (ending.reconciled) a.deps.tenants?.sent(a.job.tenant, a.job.channel);
      else {
        const seconds = Math.max(0, a.now() - a.job.firstArrivalAt) / 1000;
        a.deps.metrics.endToEnd.observe({ channel: a.job.channel }, seconds);
        a.deps.tenants?.sent(a.job.tenant, a.job.channel, seconds);
      }
      return { kind: 'ended', status: 'sent', endedNow: true, provider: ending.provider, externalId: ending.externalId, reconciled: ending.reconciled };
    }
    case 'retry':
    case 'in_doubt': {
      const status = ending.kind === 'in_doubt' ? 'in_doubt' : ending.status;
      if (a.claim.attempts >= a.deps.policy.attempts) {
        const reason: DeadReason = status === 'in_doubt' ? 'in_doubt_after_last_attempt' : 'attempts_exhausted';
        return dead(a, reason, ending.error, ending.provider);
      }
      const { policy, random } = a.deps;
      const retryAfterMs = ending.kind === 'retry' ? ending.retryAfterMs : undefined;
      const delayMs = retryDelayMs({
        attempt: a.claim.attempts,
        scheduleMs: policy.backoffMs,
        capMs: policy.backoffCapMs,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(random ? { random } : {}),
      });
      const extra = { provider: ending.provider, error: ending.error, nextAttemptAt: a.now() + delayMs };
      if ((await commit(a, status, extra)) === 'stale') return stale(a, ending.provider);
      count(a, ending.kind, ending.provider);
      return { kind: 'retry', delayMs, reason: ending.reason };
    }
    case 'dead':
      return dead(a, ending.reason, ending.error, ending.provider);
    case 'suppressed': {
      const extra = { reason: ending.reason, error: ending.error };
      if ((await commit(a, 'suppressed', extra)) === 'stale') return stale(a);
      a.deps.metrics.suppressed.inc({ reason: ending.reason });
      count(a, 'suppressed');
      a.log.info({ event: 'operation_suppressed', reason: ending.reason, recipient: a.job.recipient, ...ending.details }, 'operation suppressed');
      return { kind: 'ended', status: 'suppressed', endedNow: true, reason: ending.reason };
    }
    case 'released': {
      // Back to where it stood before this claim; an unresolved doubt stays a doubt.
      // No provider was called in this claim: its attempt is given back.
      const releaseTo = a.claim.previousStatus === 'in_doubt' ? 'in_doubt' : 'pending';
      const delayMs = ending.delayMs ?? RELEASE_DELAY_MS;
      const breakerOpen = ending.reason === 'breaker_open';
      const nextAttemptAt = a.now() + delayMs;
      if ((await commit(a, 'released', { releaseTo, refundAttempt: true, nextAttemptAt, ...(breakerOpen ? { waitReason: 'breaker_open' as const } : {}) })) === 'stale') return stale(a, ending.provider);
      count(a, 'released', ending.provider);
      if (breakerOpen) a.deps.waiting?.note(a.job.operationKey, 'breaker_open', nextAttemptAt);
      return { kind: 'retry', delayMs, reason: ending.reason };
    }
    case 'cancelled': {
      if ((await commit(a, 'cancelled', { reason: ending.reason })) === 'stale') return stale(a);
      count(a, 'cancelled');
      a.log.info({ event: 'operation_cancelled', reason: ending.reason }, 'operation cancelled: a cancel came during an earlier attempt');
      return { kind: 'ended', status: 'cancelled', endedNow: true, reason: ending.reason };
    }
    case 'stale':
      // Lost the lease before a commit: nothing is written (docs/protocol.md, invariant 10).
      return stale(a);
  }
}

/** Ends dead through the shared path (fenced commit, then the DLQ record), counted in between as before. */
async function dead(a: ClaimedAttempt, reason: DeadReason, error: ErrorInfo, provider?: string): Promise<DeliverOutcome> {
  const result = await endDead(a.deps, { job: a.job, fence: a.claim.fence, reason, error, provider, history: a.history }, () => {
    a.deps.metrics.dead.inc({ channel: a.job.channel, reason });
    count(a, 'dead', provider);
  });
  if (result.kind === 'stale') {
    superseded(a, 'dead', result.currentFence);
    return stale(a, provider);
  }
  a.log.warn({ event: 'operation_dead', reason, error }, 'operation dead; recorded in the DLQ');
  return { kind: 'ended', status: 'dead', endedNow: true, reason };
}

function stale(a: ClaimedAttempt, provider?: string): DeliverOutcome {
  count(a, 'stale', provider);
  return { kind: 'stale' };
}

function count(a: ClaimedAttempt, result: DeliveryResult, provider?: string): void {
  a.deps.metrics.deliveries.inc({ channel: a.job.channel, provider: provider ?? 'none', result });
}

async function commit(a: ClaimedAttempt, outcome: CommitInput['outcome'], extra: CommitExtra): Promise<'ok' | 'stale'> {
  const { job, deps } = a;
  const result = await deps.operations.commit({
    operationKey: job.operationKey,
    fence: a.claim.fence,
    outcome,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    history: a.history,
    ...extra,
  });
  if (result.kind === 'stale') superseded(a, outcome, result.currentFence);
  return result.kind;
}

function superseded(a: ClaimedAttempt, outcome: CommitInput['outcome'], currentFence: string): void {
  a.deps.metrics.staleCommits.inc({ queue: 'deliver' });
  a.log.warn({ event: 'fence_superseded', outcome, currentFence }, 'commit rejected: fence superseded by a later claim');
}
