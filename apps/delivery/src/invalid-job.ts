import type { ErrorCode } from '@singleshot/core';
import { ensureDeadRecord } from '@singleshot/queues';
import type { DeliverDeps, DeliverOutcome } from './deliver-types';

/**
 * A deliver payload no version of this code can send (docs/protocol.md,
 * invariant 9: poison does not loop): recorded dead at once with reason
 * `invalid_payload`, for a single job and for each unparsable operation of a
 * batch alike. `operationKey` is the operation's key where it has one, else
 * the job id (with the operation's place in a batch). The runner logs it
 * (`invalid_deliver_job`, libs/queues batch-runner.ts).
 */
export async function recordInvalidJob(
  deps: Pick<DeliverDeps, 'operations' | 'addDead' | 'metrics' | 'now'>,
  entry: { operationKey: string; data: unknown; issues: string[] },
): Promise<DeliverOutcome> {
  const data = entry.data !== null && typeof entry.data === 'object' ? (entry.data as Record<string, unknown>) : { value: entry.data };
  await ensureDeadRecord(deps, {
    operationKey: entry.operationKey,
    job: data,
    reason: 'invalid_payload',
    error: { code: 'INVALID_JOB' satisfies ErrorCode, message: entry.issues.join('; ') },
  });
  deps.metrics.dead.inc({ channel: 'unknown', reason: 'invalid_payload' });
  return { kind: 'ended', status: 'dead', endedNow: true, reason: 'invalid_payload' };
}
