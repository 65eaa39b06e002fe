import type { DeadReason, DeliverJobData, ErrorCode } from '@singleshot/core';
import { endDead, ensureDeadRecord, type DeadJobData } from '@singleshot/queues';
import type { OperationStore } from '@singleshot/store';

/** What ending an operation before any send needs: the store's claim and fenced commit, and the DLQ. */
export interface DeadOnArrivalDeps {
  operations: Pick<OperationStore, 'claim' | 'commit' | 'get' | 'history'>;
  addDead(record: DeadJobData): Promise<void>;
  /** Lock owner shown to operators. */
  workerId: string;
  now?: () => number;
}

/** The dead reason of a recipient refused at fan-out. */
export const INVALID_RECIPIENT: DeadReason = 'invalid_recipient';
const INVALID_RECIPIENT_CODE: ErrorCode = 'INVALID_RECIPIENT';

/**
 * Ends an operation whose recipient the channel can never take as `dead`
 * with reason `invalid_recipient`, through the same dead ending as delivery
 * (`endDead`): claim (lock and fence), fenced commit `dead` with the journal
 * entry, then the DLQ record (idempotent by operation key). No deliver job is
 * enqueued, so no provider is ever called. A redelivered decide job finds the
 * operation terminal and only re-adds the record; a lock held elsewhere is
 * retried with the decide job (never dropped).
 */
export async function deadOnArrival(job: DeliverJobData, problem: string, deps: DeadOnArrivalDeps): Promise<void> {
  const now = deps.now ?? Date.now;
  const error = { code: INVALID_RECIPIENT_CODE, message: `recipient ${problem} (channel ${job.channel})` };
  const claim = await deps.operations.claim({
    operationKey: job.operationKey,
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    owner: deps.workerId,
    leaseMs: 30_000,
    job,
  });
  if (claim.kind === 'conflict') throw new Error(`operation ${job.operationKey} is locked elsewhere; the decide job retries`);
  if (claim.kind === 'go') {
    const history = { at: now(), attempt: claim.attempts, fence: claim.fence, outcome: 'dead' as const, errorCode: error.code, error: error.message, note: 'checked at fan-out; no provider called' };
    const ended = await endDead({ ...deps, now }, { job, fence: claim.fence, reason: INVALID_RECIPIENT, error, history });
    if (ended.kind === 'stale') throw new Error(`operation ${job.operationKey} was taken over; the decide job retries`);
    return;
  }
  // Ended before (dead: a redelivered decide job) re-adds its record (a no-op
  // when it is there); sent before a config change made the recipient invalid has none.
  if (claim.kind === 'ended' && claim.status === 'sent') return;
  await ensureDeadRecord({ ...deps, operations: deps.operations, now }, { operationKey: job.operationKey, job, reason: INVALID_RECIPIENT, error });
}
