import { codeOf, type DeliverJobData, type ErrorCode } from '@singleshot/core';
import type { AttemptRecord, ClaimLimit } from '@singleshot/store';
import { ensureDeadRecord } from '@singleshot/queues';
import { lazyChild } from '@singleshot/observability';
import { ClaimedAttempt } from './attempt';
import { returnTrial } from './breaker-gate';
import type { DeliverDeps, DeliverOutcome, Ending, ErrorInfo } from './deliver-types';
import { prepareDocuments } from './document-gate';
import { finish } from './ending';
import { holdOf, noteWait, type Hold } from './hold';
import { keepLease } from './lease-keeper';
import { admitLimits } from './limits';
import { reconcile } from './reconcile';
import { commitMarginMs, sendThroughChain } from './send-chain';
import { needsUnsubscribe, unsubscribeOf } from './unsubscribe-header';

export type { DeliverDeps, DeliverOutcome } from './deliver-types';

/**
 * One delivery attempt of one operation: claim (lock + fence), reconcile when a
 * previous attempt may have reached a provider, send through the channel's
 * provider chain with a deadline inside the lease, fenced commit. Never throws
 * for provider outcomes; throws only when Redis itself fails (the job is then
 * retried by the queue, and the operation state says where it stood).
 */
export async function deliver(job: DeliverJobData, deps: DeliverDeps): Promise<DeliverOutcome> {
  const held = await holdOf(job, deps);
  try {
    return await claimAndSend(job, deps, held);
  } finally {
    returnTrial(held.trial);
  }
}

async function claimAndSend(job: DeliverJobData, deps: DeliverDeps, held: Hold): Promise<DeliverOutcome> {
  const now = deps.now ?? Date.now;
  const { leaseMs } = deps.policy;
  // The lease runs from when Redis ran the claim, not from when its answer was read.
  const claimSentAt = now();
  // Signed before the claim: a secret Redis cannot give yet fails the job with nothing claimed.
  const listUnsubscribe = !held.hold && needsUnsubscribe(job, deps) ? await unsubscribeOf(job as DeliverJobData & { category: string }, deps) : undefined;
  // The per-recipient limits, read for the claim to answer (none configured:
  // no command, no promise). A held operation is not claimed: its limits are
  // read when it wakes.
  const admitting = held.hold ? undefined : admitLimits(job, deps.limits);
  const admission = admitting ? await admitting : undefined;
  // On a cluster, a claim that goes is on a replica when it answers (it throws
  // otherwise: nothing was sent, and the claim, if it survived, is reconciled
  // by the next one after its lease).
  const claim = await deps.operations.claim({
    operationKey: job.operationKey,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    owner: deps.workerId,
    leaseMs,
    // An earlier holder's call may end as late as its lease less the commit margin.
    settleMs: leaseMs - commitMarginMs(leaseMs),
    job,
    ...(job.category !== undefined ? { category: job.category } : {}),
    ...(job.required ? { required: true } : {}),
    ...(held.hold ? { hold: held.hold } : {}),
    ...(admission?.over ? { limit: admission.over } : {}),
  });
  // Slots taken for a claim that did not count against the limits go back; a replay's pass takes its slot.
  if (admission) await deps.limits?.limiter.settle(admission, claim);
  switch (claim.kind) {
    case 'ended':
      if (claim.endedNow && claim.status === 'suppressed' && claim.reason === 'rate_limit') {
        limitEnded(job, deps, admission?.over);
      } else if (claim.endedNow && claim.status === 'suppressed') {
        // Ended by the claim itself: the recipient is suppressed or opted out; nothing was sent.
        deps.metrics.suppressed.inc({ reason: claim.reason ?? 'recipient_suppressed' });
        deps.logger.info({ event: 'operation_suppressed', operationKey: job.operationKey, messageKey: job.messageKey, reason: claim.reason }, 'operation suppressed: recipient suppressed or opted out');
      } else if (claim.status === 'sent') {
        deps.metrics.duplicatesSuppressed.inc({ stage: 'delivery', reason: 'already_sent' });
      } else if (claim.status === 'dead') {
        await ensureDeadRecord(deps, { operationKey: job.operationKey, job });
      }
      return claim;
    case 'conflict':
      deps.metrics.lockConflicts.inc({ queue: 'deliver' });
      return { kind: 'conflict', delayMs: claim.retryInMs + Math.floor((deps.random ?? Math.random)() * 250) };
    case 'wait':
      // Held back (the hold above), or come before its operation is due (a
      // redelivery, the sweeper): back until then, no attempt used.
      noteWait(job, claim, held, deps);
      return { kind: 'wait', reason: claim.reason, delayMs: Math.max(1, claim.untilMs - now()), ...(held.hold?.waitingFor ? { waitingFor: held.hold.waitingFor } : {}) };
    case 'go':
      break;
  }
  const log = lazyChild(deps.logger, { operationKey: job.operationKey, messageKey: job.messageKey, fence: claim.fence, attempt: claim.attempts });
  const keeper = keepLease({
    leaseMs,
    startedAt: claimSentAt,
    now,
    // Counted only once on a replica, like the claim (OperationStore.extend); a failed wait keeps the lease it had.
    extend: () => deps.operations.extend(job.operationKey, claim.fence, leaseMs),
    onLost: (reason) => log.warn({ event: 'lease_lost', reason }, 'lease lost; this holder stops and will not commit'),
  });
  try {
    const attempt = new ClaimedAttempt(job, deps, { ...claim, keeper, log }, held.trial);
    if (held.documents) attempt.gate = held.documents;
    if (listUnsubscribe) attempt.listUnsubscribe = listUnsubscribe;
    return await finish(attempt, await decide(attempt));
  } finally {
    keeper.stop();
  }
}

/**
 * Counts and logs an operation the claim ended over a per-recipient limit as
 * that ending was counted when the limit was checked after the claim: one
 * `suppressed{reason: rate_limit}` and one `deliveries{result: suppressed}`
 * sample. The claim wrote the state, journal entry and history record.
 */
function limitEnded(job: DeliverJobData, deps: DeliverDeps, over: ClaimLimit | undefined): void {
  deps.metrics.suppressed.inc({ reason: 'rate_limit' });
  deps.metrics.deliveries.inc({ channel: job.channel, provider: 'none', result: 'suppressed' });
  const details = over ? { scope: over.scope, count: over.count, max: over.max } : {};
  deps.logger.info(
    { event: 'operation_suppressed', operationKey: job.operationKey, messageKey: job.messageKey, reason: 'rate_limit', recipient: job.recipient, ...details },
    'operation suppressed',
  );
}

/** Reconcile what a previous attempt may have left, then send: how the attempt ends. */
async function decide(a: ClaimedAttempt): Promise<Ending> {
  const { job, deps, claim } = a;
  const chain = deps.providers(job.channel);
  if (chain.length === 0) {
    return { kind: 'dead', reason: 'no_provider', error: { code: 'NO_PROVIDER' satisfies ErrorCode, message: `no provider configured for channel "${job.channel}"` } };
  }
  // Never sent without its document: a document that failed for good ends the operation.
  if (a.gate?.kind === 'failed') return { kind: 'dead', reason: 'document_failed', error: a.gate.error };
  // Earlier claims since the last replay decide the fallback position (a replay resets attempts).
  // Read while a reconciliation runs: the two do not depend on each other.
  const history = claim.attempts > 1 ? deps.operations.history(job.operationKey) : undefined;
  // Awaited below or dropped with the reconciliation's verdict; a failure then is not unhandled.
  history?.catch(() => undefined);
  // A previous attempt may have reached a provider: reconcile before any send (docs/protocol.md invariant 5).
  if (claim.previousStatus === 'sending' || claim.previousStatus === 'in_doubt') {
    const verdict = await reconcile(job.operationKey, chain, claim, deps, {
      recipient: job.recipient,
      since: job.firstArrivalAt,
      content: { route: job.route, text: job.text, subject: job.subject, data: job.data },
    });
    // Cancelled or suppressed meanwhile: an attempt that got through stands; nothing is sent anew.
    if (verdict.kind !== 'found' && verdict.kind !== 'unknown') {
      if (claim.cancelRequested) return { kind: 'cancelled', reason: 'cancel_requested' };
      if (claim.stopReason) {
        return { kind: 'suppressed', reason: claim.stopReason, error: { code: 'RECIPIENT_SUPPRESSED' satisfies ErrorCode, message: 'the recipient became suppressed or opted out during an earlier attempt' } };
      }
    }
    switch (verdict.kind) {
      case 'found':
        a.record({ step: 'reconcile', outcome: 'sent', provider: verdict.provider, externalId: verdict.externalId, note: 'reconciled by lookup' });
        return { kind: 'sent', provider: verdict.provider, externalId: verdict.externalId, reconciled: true };
      case 'unknown':
        a.record({ step: 'reconcile', outcome: 'in_doubt', provider: verdict.provider, errorCode: verdict.error.code, error: verdict.error.message, note: 'reconciliation failed' });
        // Still in doubt, but this attempt ends as a retry: counted `retry`, not a second `in_doubt`.
        return { kind: 'retry', status: 'in_doubt', reason: 'reconcile_failed', error: verdict.error, provider: verdict.provider };
      case 'unresolvable':
        return {
          kind: 'dead',
          reason: 'in_doubt_unresolvable',
          error: { code: 'NO_LOOKUP' satisfies ErrorCode, message: `provider ${verdict.provider} cannot be asked; inDoubtPolicy is "dead"` },
          provider: verdict.provider,
        };
      case 'not_found':
        // The provider says it never took it: the doubt is resolved, fallback is allowed again.
        for (const provider of verdict.asked) {
          a.record({ step: 'reconcile', outcome: 'failed', provider, errorCode: 'NOT_FOUND_ON_LOOKUP' satisfies ErrorCode, note: 'lookup: provider does not have it' });
        }
        break;
    }
  }
  if (a.gate?.kind === 'ready' && deps.documents) {
    try {
      a.content = await prepareDocuments(a.gate, chain, deps.documents);
    } catch (err) {
      const error: ErrorInfo = { code: codeOf(err) ?? 'DOCUMENT_STORE', message: (err as Error).message };
      return { kind: 'retry', status: 'failed', reason: error.code, error, provider: (chain[0] as { name: string }).name };
    }
  }
  const prior: AttemptRecord[] = history ? await history : [];
  return sendThroughChain(a, chain, prior);
}
