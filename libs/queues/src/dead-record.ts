import type { DeadReason } from '@singleshot/core';
import type { OperationStore } from '@singleshot/store';
import type { DeadJobData } from './schemas';

/** What recording a dead operation needs: its state and history, and the DLQ. */
export interface DeadRecordDeps {
  operations: Pick<OperationStore, 'get' | 'history'>;
  addDead(record: DeadJobData): Promise<void>;
  now?: () => number;
}

/**
 * The one builder of DLQ records: makes sure a dead operation has its record
 * (idempotent by operation key, so a redelivered job re-adds the same record
 * as a no-op), with its attempt history, and the reason and error given or
 * else the ones its state holds. Used by delivery (dead after its attempts, an
 * invalid deliver job) and the decision (an invalid recipient at fan-out).
 */
export async function ensureDeadRecord(
  deps: DeadRecordDeps,
  dead: { operationKey: string; job: DeadJobData['job']; reason?: DeadReason; error?: { code: string; message: string } },
): Promise<void> {
  const [record, attempts] = await Promise.all([deps.operations.get(dead.operationKey), deps.operations.history(dead.operationKey)]);
  await deps.addDead({
    operationKey: dead.operationKey,
    job: dead.job,
    // A reason read back from the state is kept as stored, whichever ending wrote it.
    reason: dead.reason ?? record?.reason ?? ('unknown' satisfies DeadReason),
    error: dead.error ?? { code: record?.lastErrorCode ?? 'UNKNOWN', message: record?.lastError ?? '' },
    attempts,
    diedAt: (deps.now ?? Date.now)(),
  });
}
