import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DecideJobData, DeliverJobData, RenderJobData } from '@singleshot/core';
import { QUEUES } from './names';
import type { DeadJobData } from './schemas';

/**
 * Job retention is for operators, not dedup (docs/protocol.md invariant 8): dedup lives in the
 * message and operation records, which outlive these jobs.
 */
const DECIDE_OPTIONS: JobsOptions = {
  attempts: 50,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 86_400 },
};

const DELIVER_OPTIONS: JobsOptions = {
  // Retries of provider errors are scheduled by the delivery worker itself
  // (moveToDelayed, attempts counted in the operation state). BullMQ attempts only
  // cover infrastructure failures inside the worker, such as Redis going away.
  attempts: 50,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 86_400 },
};

// Like deliver jobs: the render worker schedules its own retries (attempts in
// the document state); BullMQ attempts only cover infrastructure failures.
const RENDER_OPTIONS: JobsOptions = {
  attempts: 50,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 86_400 },
};

export interface Queues {
  decide: Queue<DecideJobData>;
  deliver: Queue<DeliverJobData>;
  render: Queue<RenderJobData>;
  dead: Queue<DeadJobData>;
  close(): Promise<void>;
}

/** Opens the queues on one connection with the given BullMQ prefix. */
export function openQueues(connection: Redis, prefix: string): Queues {
  const decide = new Queue<DecideJobData>(QUEUES.decide, { connection, prefix });
  const deliver = new Queue<DeliverJobData>(QUEUES.deliver, { connection, prefix });
  const dead = new Queue<DeadJobData>(QUEUES.dead, { connection, prefix });
  const render = new Queue<RenderJobData>(QUEUES.render, { connection, prefix });
  for (const q of [decide, deliver, dead, render]) q.on('error', () => undefined);
  return {
    decide,
    deliver,
    render,
    dead,
    close: async () => {
      await Promise.all([decide.close(), deliver.close(), dead.close(), render.close()]);
    },
  };
}

/** Adds the decide job of a message; jobId = message key, so concurrent adds collapse. */
export async function enqueueDecide(queue: Queue<DecideJobData>, data: DecideJobData): Promise<void> {
  await queue.add('decide', data, { ...DECIDE_OPTIONS, jobId: data.messageKey });
}

/** Up to this many deliver jobs are added with parallel `add` calls, more with one `addBulk`. */
const PARALLEL_ADD_MAX = 16;

/**
 * Adds every deliver job of a decision in one round trip; jobId = operation key.
 * A small fan-out uses parallel `add`s, sent in one socket write (the connection
 * batches a turn's writes): `addBulk` builds an ioredis pipeline, whose
 * constructor copies every BullMQ script onto it and was the largest single
 * item in the decision worker's profile. Each add is idempotent by job id, so
 * a partial failure is repaired by the decide job's retry, as with addBulk.
 */
export async function enqueueDeliveries(queue: Queue<DeliverJobData>, jobs: DeliverJobData[]): Promise<void> {
  if (jobs.length === 0) return;
  if (jobs.length <= PARALLEL_ADD_MAX) {
    await Promise.all(jobs.map((data) => queue.add('deliver', data, { ...DELIVER_OPTIONS, jobId: data.operationKey })));
    return;
  }
  await queue.addBulk(
    jobs.map((data) => ({ name: 'deliver', data, opts: { ...DELIVER_OPTIONS, jobId: data.operationKey } })),
  );
}

/**
 * Records a dead operation. jobId = operation key: a redelivered job that finds
 * the operation already dead re-adds the same record, which is a no-op.
 */
export async function addDead(queue: Queue<DeadJobData>, record: DeadJobData): Promise<void> {
  await queue.add('dead', record, { jobId: record.operationKey, removeOnComplete: false, removeOnFail: false });
}

/**
 * Adds render jobs; jobId = document key, so a redelivered decision (or two
 * decisions racing) adds each document's job once. `round` > 0 (a replay)
 * gives a fresh job id: the old job of that document may still be kept.
 */
export async function enqueueRenders(queue: Queue<RenderJobData>, jobs: RenderJobData[], round = 0): Promise<void> {
  if (jobs.length === 0) return;
  await queue.addBulk(
    jobs.map((data) => ({ name: 'render', data, opts: { ...RENDER_OPTIONS, jobId: round > 0 ? `${data.documentKey}-r${round}` : data.documentKey } })),
  );
}
