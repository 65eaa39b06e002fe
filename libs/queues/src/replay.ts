import type { RedisClient } from '@singleshot/store';
import type { DeliverJobData } from '@singleshot/core';
import { OperationReader, replayOperationState, type KeyBuilder } from '@singleshot/store';
import type { Metrics } from '@singleshot/observability';
import type { Queues } from './queues';
import { deliverJobSchema } from './schemas';
import { requeueDelivery, type RequeueResult } from './replay-requeue';
import { regenerateDocuments } from './replay-documents';

/** What a replay needs; a Runtime fits as it is. */
export interface ReplayDeps {
  redis: RedisClient;
  keys: KeyBuilder;
  queues: Pick<Queues, 'deliverOf' | 'dead'> & Partial<Pick<Queues, 'render'>>;
  retentionMs: number;
  metrics?: Pick<Metrics, 'replays'>;
  now?: () => number;
}

/** Who asked for a replay, journaled with it. */
export interface ReplayBy {
  /** A user name or API client id. */
  by: string;
  /** cli | api | dashboard | … */
  via: string;
}

export type ReplayResult = { operationKey: string } & (
  | { result: 'replayed'; from: 'dead' | 'suppressed'; journalId: string; job: RequeueResult }
  /** Nothing changed and nothing will be sent; a leftover DLQ record was removed. */
  | { result: 'already_sent'; provider: string; externalId: string }
  /** Still in progress (pending, sending, failed, in_doubt): a replay would change nothing. */
  | { result: 'not_replayable'; status: string }
  /** No state: never claimed, or past retention. */
  | { result: 'not_found' }
);

async function storedJob(deps: ReplayDeps, operationKey: string): Promise<DeliverJobData | undefined> {
  const stored = await new OperationReader(deps.redis, deps.keys).storedJob(operationKey);
  if (stored === undefined) return undefined;
  const parsed = deliverJobSchema.safeParse(stored);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Replays a dead or suppressed operation under its own operation key (docs/protocol.md
 * invariant 7): one script moves it back to `pending` and journals `replayed`
 * with who and how; then its deliver job is put back in the queue and its DLQ
 * record removed. An operation that meanwhile got sent is reported
 * `already_sent` and nothing is sent. Crash-safe in that order: if the process
 * dies after the script, the recovery sweeper re-adds the job from the state.
 *
 * The CLI (`singleshot dlq replay`) and the admin API call this.
 */
export async function replay(operationKey: string, who: ReplayBy, deps: ReplayDeps): Promise<ReplayResult> {
  const record = await deps.queues.dead.getJob(operationKey);
  const fromRecord = record ? deliverJobSchema.safeParse(record.data.job) : undefined;
  const dlqJob = fromRecord?.success ? fromRecord.data : undefined;
  const state = await replayOperationState(
    deps.redis,
    deps.keys,
    { operationKey, by: who.by, via: who.via, ...(dlqJob ? { job: dlqJob } : {}) },
    { retentionMs: deps.retentionMs, ...(deps.now ? { now: deps.now } : {}) },
  );
  let result: ReplayResult;
  switch (state.kind) {
    case 'replayed': {
      const job = dlqJob ?? (await storedJob(deps, operationKey));
      if (!job) {
        // Cannot happen for operations claimed by this version (the claim keeps the job).
        throw new Error(`operation ${operationKey} was replayed but has no deliver job to enqueue; re-send its event`);
      }
      // A document that failed for good is made again (once, however many of its operations are replayed).
      if (job.documents?.length && deps.queues.render) {
        await regenerateDocuments(job, who.by, { ...deps, render: deps.queues.render });
      }
      const queued = await requeueDelivery(deps.queues, job, { promote: true, activeWaitMs: 5_000 });
      if (record) await deps.queues.dead.remove(operationKey);
      result = { operationKey, result: 'replayed', from: state.from, journalId: state.journalId, job: queued };
      break;
    }
    case 'already_sent':
      if (record) await deps.queues.dead.remove(operationKey);
      result = { operationKey, result: 'already_sent', provider: state.provider, externalId: state.externalId };
      break;
    case 'not_replayable':
      result = { operationKey, result: 'not_replayable', status: state.status };
      break;
    case 'not_found':
      result = { operationKey, result: 'not_found' };
      break;
  }
  deps.metrics?.replays.inc({ via: who.via, result: result.result });
  return result;
}

/** Replays several operations one after the other; `onResult` sees each as it is done. */
export async function replayMany(
  operationKeys: readonly string[],
  who: ReplayBy,
  deps: ReplayDeps,
  onResult?: (result: ReplayResult) => void,
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for (const key of operationKeys) {
    const result = await replay(key, who, deps);
    onResult?.(result);
    results.push(result);
  }
  return results;
}
