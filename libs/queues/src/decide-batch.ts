import type { Queue } from 'bullmq';
import { sha256Hex, type DecideJobData } from '@singleshot/core';
import { DECIDE_OPTIONS, enqueueDecide, type Queues } from './queues';
import type { DecideBatchJobData } from './schemas';

/** The BullMQ job name of a single-message decide job (jobId = message key). */
export const DECIDE_JOB_NAME = 'decide';
/** The BullMQ job name of a batch decide job (several messages accepted in one event-loop turn). */
export const DECIDE_BATCH_JOB_NAME = 'batch';
/**
 * Messages per batch decide job at most. A batch is decided in one go, its
 * fan-outs added together (up to this many messages' operations), so a bound
 * keeps one job's work and payload small; ingest's coalescer enqueues at once
 * when this many first arrivals are waiting.
 */
export const DECIDE_BATCH_MAX = 32;

/**
 * Adds the decide jobs of messages accepted together (ingest's TurnCoalescer):
 * per decide partition, a message alone gets its ordinary `decide` job
 * (jobId = message key, as always), several share `batch` jobs of at most
 * DECIDE_BATCH_MAX, split evenly. A batch's id is its first message key, the
 * chunk index and a hash of its message keys (BullMQ ids may not contain
 * ':'): the same messages add the same id again, which BullMQ ignores, and no
 * message hides behind a batch it is not in. All adds of one call go out in
 * one socket write; each is idempotent by job id, so a failed call is
 * repaired by the arrivals' retries.
 *
 * Two ingest processes that take first arrivals of one message at the same
 * instant may each put it in a batch (the message key as job id collapsed
 * such adds before): the decision records the first decision only, and a
 * delivery claims each operation once, so that costs a second decision,
 * never a second send.
 */
export async function enqueueDecideJobs(queues: Pick<Queues, 'decideOf'>, messages: readonly DecideJobData[]): Promise<void> {
  const groups = new Map<Queue<DecideJobData>, DecideJobData[]>();
  // Two arrivals of one message may both enqueue in one turn (the enqueue they
  // waited for failed): the message goes in once.
  const seen = new Set<string>();
  for (const m of messages) {
    if (seen.has(m.messageKey)) continue;
    seen.add(m.messageKey);
    const queue = queues.decideOf(m.messageKey);
    const list = groups.get(queue);
    if (list) list.push(m);
    else groups.set(queue, [m]);
  }
  const adds: Array<Promise<unknown>> = [];
  for (const [queue, list] of groups) {
    if (list.length === 1) {
      adds.push(enqueueDecide(queues, list[0] as DecideJobData));
      continue;
    }
    const count = Math.ceil(list.length / DECIDE_BATCH_MAX);
    const size = Math.ceil(list.length / count);
    for (let chunk = 0; chunk < count; chunk++) {
      const part = list.slice(chunk * size, (chunk + 1) * size);
      if (part.length === 1) {
        adds.push(enqueueDecide(queues, part[0] as DecideJobData));
        continue;
      }
      const digest = sha256Hex(part.map((m) => m.messageKey).join(',')).slice(0, 16);
      const jobId = `${(part[0] as DecideJobData).messageKey}-b${chunk}-${digest}`;
      adds.push(batchQueue(queue).add(DECIDE_BATCH_JOB_NAME, { messages: part }, { ...DECIDE_OPTIONS, jobId }));
    }
  }
  await Promise.all(adds);
}

/**
 * The delay before a message requeued from a batch runs: the first step of
 * the decide job's own backoff, as if its attempt alone had failed.
 */
const REQUEUE_DELAY_MS = (DECIDE_OPTIONS.backoff as { delay: number }).delay;

/**
 * Gives one message of a batch its own decide job, when deciding it failed
 * while the others of the batch were decided: it is tried again alone, after
 * the first step of the decide job's backoff, then with the ordinary decide
 * job's attempts and backoff. The id is
 * the message key and the batch's id, so a retried batch re-adds nothing, and
 * no completed job of an earlier decision of that message (under its key) can
 * swallow the add.
 */
export async function requeueDecide(queues: Pick<Queues, 'decideOf'>, data: DecideJobData, batchJobId: string): Promise<void> {
  await queues.decideOf(data.messageKey).add(DECIDE_JOB_NAME, data, { ...DECIDE_OPTIONS, jobId: `${data.messageKey}-from-${batchJobId}`, delay: REQUEUE_DELAY_MS });
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
 * The decide queues are typed by their single-message payload (what a lookup
 * by message key finds); a batch job is the one other payload they hold,
 * added only here.
 */
function batchQueue(queue: Queue<DecideJobData>): Queue<DecideBatchJobData> {
  return queue as unknown as Queue<DecideBatchJobData>;
}
