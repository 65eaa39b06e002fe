import type { JobsOptions, Queue } from 'bullmq';
import type { DecideJobData, DeliverJobData } from '@singleshot/core';
import { BATCH_JOB_NAME, planBatches, type BatchPlan } from './batch-plan';
import { DECIDE_OPTIONS, DELIVER_OPTIONS, enqueueDecide, enqueueDeliveries, type Queues } from './queues';
import type { DecideBatchJobData, DeliverBatchJobData } from './schemas';

type BatchJobData = DecideBatchJobData | DeliverBatchJobData;

/** The BullMQ job name of a single-message decide job (jobId = message key). */
export const DECIDE_JOB_NAME = 'decide';
/** The BullMQ job name of a single-operation deliver job (jobId = operation key). */
export const DELIVER_JOB_NAME = 'deliver';
/**
 * Messages per batch decide job at most. A batch is decided in one go, its
 * fan-outs added together (up to this many messages' operations), so a bound
 * keeps one job's work and payload small; ingest's coalescer enqueues at once
 * when this many first arrivals are waiting.
 */
export const DECIDE_BATCH_MAX = 32;

/**
 * The delay before a member handed on from a batch runs in a job of its own:
 * the first step of the queue's own backoff, as if its attempt alone had failed.
 */
export function firstBackoffMs(options: JobsOptions): number {
  const backoff = options.backoff;
  return typeof backoff === 'object' ? (backoff.delay ?? 0) : (backoff ?? 0);
}

/** How the messages accepted in one turn become decide jobs (see `planBatches`). */
export function planDecideJobs(queues: Pick<Queues, 'decideOf'>, messages: readonly DecideJobData[]): BatchPlan<Queue<DecideJobData>, DecideJobData> {
  return planBatches(messages, { keyOf: (m) => m.messageKey, queueOf: (m) => queues.decideOf(m.messageKey), max: DECIDE_BATCH_MAX });
}

/**
 * How a fan-out's operations become deliver jobs (see `planBatches`): an
 * operation with documents keeps its own job (the render wakes it by its job
 * id); `batchMax` 1 turns batching off.
 */
export function planDeliverJobs(queues: Pick<Queues, 'deliverOf'>, jobs: readonly DeliverJobData[], batchMax: number): BatchPlan<Queue<DeliverJobData>, DeliverJobData> {
  return planBatches(jobs, {
    keyOf: (op) => op.operationKey,
    queueOf: (op) => queues.deliverOf(op.operationKey),
    max: batchMax,
    canBatch: (op) => !op.documents || op.documents.length === 0,
  });
}

/**
 * Adds the decide jobs of messages accepted together (ingest's
 * TurnCoalescer): a message alone its ordinary `decide` job (jobId = message
 * key), several per partition a `batch` job `{ messages }`. All adds of one
 * call go out in one socket write; each is idempotent by job id, so a failed
 * call is repaired by the arrivals' retries.
 *
 * Two ingest processes that take first arrivals of one message at the same
 * instant may each put it in a batch (the message key as job id collapsed
 * such adds before): the decision records the first decision only, and a
 * delivery claims each operation once, so that costs a second decision,
 * never a second send.
 */
export async function enqueueDecideJobs(queues: Pick<Queues, 'decideOf'>, messages: readonly DecideJobData[]): Promise<void> {
  const { singles, batches } = planDecideJobs(queues, messages);
  await Promise.all([...singles.map((m) => enqueueDecide(queues, m)), ...batches.map((b) => addBatch(b.queue, { messages: b.members }, b.jobId, DECIDE_OPTIONS))]);
}

/**
 * Adds a fan-out's deliver jobs: single jobs and `batch` jobs `{ operations }`
 * in parallel, so one round trip. Idempotent by job id: a partial failure is
 * repaired by the decide job's retry.
 */
export async function enqueueDeliveryJobs(queues: Pick<Queues, 'deliverOf'>, jobs: readonly DeliverJobData[], batchMax: number): Promise<void> {
  const { singles, batches } = planDeliverJobs(queues, jobs, batchMax);
  await Promise.all([enqueueDeliveries(queues, singles), ...batches.map((b) => addBatch(b.queue, { operations: b.members }, b.jobId, DELIVER_OPTIONS))]);
}

/**
 * Gives a message of a batch its own decide job, to run after `delayMs`,
 * then with the decide job's attempts and backoff. The id is the message key
 * and the batch's id, so a retried batch re-adds nothing, and no completed
 * job of an earlier decision of that message (under its key) can swallow the add.
 */
export async function requeueDecide(queues: Pick<Queues, 'decideOf'>, data: DecideJobData, batchJobId: string, delayMs = firstBackoffMs(DECIDE_OPTIONS)): Promise<void> {
  await queues.decideOf(data.messageKey).add(DECIDE_JOB_NAME, data, { ...DECIDE_OPTIONS, jobId: `${data.messageKey}-from-${batchJobId}`, delay: delayMs });
}

/**
 * Gives an entry of a batch that is no decide job a job of its own in the
 * batch's queue (found by BullMQ's qualified name; a queue of a former
 * partition layout is not among `decideAll`, and partition 0's takes it),
 * where the worker fails it at once with the reason: it stays in the failed
 * set for an operator, as a single invalid decide job does. One attempt.
 */
export async function handOffInvalidDecide(queues: Pick<Queues, 'decideAll'>, queueQualifiedName: string, entry: unknown, jobId: string): Promise<void> {
  const queue = queues.decideAll.find((q) => q.qualifiedName === queueQualifiedName) ?? queues.decideAll[0];
  if (!queue) throw new Error('no decide queue to hand an invalid entry to');
  await queue.add(DECIDE_JOB_NAME, entry as DecideJobData, { ...DECIDE_OPTIONS, attempts: 1, jobId });
}

/**
 * Adds one planned batch job. The queues are typed by their single-member
 * payload (what a lookup by key finds); a batch job is the one other payload
 * they hold, added only here.
 */
async function addBatch<T>(queue: Queue<T>, data: BatchJobData, jobId: string, options: JobsOptions): Promise<void> {
  await (queue as unknown as Queue<BatchJobData>).add(BATCH_JOB_NAME, data, { ...options, jobId });
}
