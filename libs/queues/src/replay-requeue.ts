import type { Queue } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { DELIVER_OPTIONS, enqueueDeliveries, type Queues } from './queues';

export type RequeueResult =
  /** A new deliver job (jobId = operation key) is in the queue. */
  | 'added'
  /** A job with that id is waiting, delayed or running: it will claim the operation. */
  | 'present'
  /** A delayed job with that id was moved to run now. */
  | 'promoted';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes sure the deliver job of an operation is in the queue, under the same
 * job id as always (the operation key). BullMQ keeps a finished job under its
 * id for a while, and `add` with that id is then a no-op; a completed or failed
 * job is therefore removed first. Double sends are not this function's
 * concern: every job claims the operation key first, and only one claim wins.
 *
 * - `promote`: move a delayed job to run now (a replay should not wait out a backoff).
 * - `delayMs`: a job this adds runs no earlier than that (a batch's follow-up after a retry).
 * - `activeWaitMs`: a running job may be one that saw the operation still
 *   dead and is about to complete; wait that long for it to finish, then
 *   re-add. Past that, it is left to finish (the sweeper is the backstop).
 */
export async function requeueDelivery(
  queues: Pick<Queues, 'deliverOf'>,
  job: DeliverJobData,
  options: { promote?: boolean; activeWaitMs?: number; delayMs?: number } = {},
): Promise<RequeueResult> {
  const id = job.operationKey;
  const queue: Queue<DeliverJobData> = queues.deliverOf(id);
  const waitUntil = Date.now() + (options.activeWaitMs ?? 0);
  for (let round = 0; ; round++) {
    if (round > 1000) throw new Error(`could not re-enqueue the deliver job of ${id}: its job keeps changing state`);
    const existing = await queue.getJob(id);
    if (!existing) {
      if (options.delayMs && options.delayMs > 0) await queue.add('deliver', job, { ...DELIVER_OPTIONS, jobId: id, delay: options.delayMs });
      else await enqueueDeliveries(queues, [job]);
      return 'added';
    }
    const state = await existing.getState();
    if (state === 'completed' || state === 'failed') {
      // 0 when another caller removed it first, or it is locked: look again.
      await queue.remove(id);
      continue;
    }
    if (state === 'unknown') continue;
    if (state === 'delayed' && options.promote) {
      try {
        await existing.promote();
        return 'promoted';
      } catch {
        // It left the delayed set meanwhile (picked up, or removed): look again.
        continue;
      }
    }
    if (state === 'active' && Date.now() < waitUntil) {
      await sleep(100);
      continue;
    }
    return 'present';
  }
}
