import type { AnyErrorCode, DeadReason, DeliverJobData } from '@singleshot/core';
import type { CommitInput, CommitResult, OperationStore } from '@singleshot/store';
import { ensureDeadRecord, type DeadRecordDeps } from './dead-record';

/** What ending a claimed operation `dead` needs: the fenced commit, and what its DLQ record needs. */
export interface DeadEndingDeps extends DeadRecordDeps {
  operations: Pick<OperationStore, 'commit' | 'get' | 'history'>;
}

/** A claimed operation that ends `dead`: the claim's fence, why, and the journal entries of this claim. */
export interface DeadEnding {
  job: DeliverJobData;
  fence: string;
  reason: DeadReason;
  error: { code: AnyErrorCode; message: string };
  provider?: string;
  history: NonNullable<CommitInput['history']>;
}

/**
 * The one way a claimed operation ends `dead`, for delivery's ending owner
 * and the decision's invalid recipient alike: the fenced commit (state,
 * history, journal entry; docs/protocol.md invariants 4 and 7), then the DLQ
 * record (idempotent by operation key). `committed` runs between the two, for
 * the caller's counters. A commit rejected by a later fence writes nothing
 * and is returned as `stale`: the caller reports it.
 */
export async function endDead(deps: DeadEndingDeps, dead: DeadEnding, committed?: () => void): Promise<CommitResult> {
  const { job } = dead;
  const result = await deps.operations.commit({
    operationKey: job.operationKey,
    fence: dead.fence,
    outcome: 'dead',
    messageKey: job.messageKey,
    recipient: job.recipient,
    channel: job.channel,
    history: dead.history,
    reason: dead.reason,
    error: dead.error,
    provider: dead.provider,
  });
  if (result.kind === 'stale') return result;
  committed?.();
  await ensureDeadRecord(deps, { operationKey: job.operationKey, job, reason: dead.reason, error: dead.error });
  return result;
}
