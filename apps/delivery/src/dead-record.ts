import type { DeliverJobData } from '@singleshot/core';
import type { DeliverDeps, ErrorInfo } from './deliver-types';

/** Makes sure a dead operation has its DLQ record (idempotent by operation key). */
export async function ensureDeadRecord(
  job: DeliverJobData,
  deps: Pick<DeliverDeps, 'operations' | 'addDead' | 'now'>,
  known?: { reason: string; error: ErrorInfo },
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
