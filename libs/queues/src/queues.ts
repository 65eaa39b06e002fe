import { Queue, type JobsOptions } from 'bullmq';
import { partitionOf, type DecideJobData, type DeliverJobData, type RenderJobData } from '@singleshot/core';
import type { KeyBuilder, RedisClient } from '@singleshot/store';
import { QUEUES, type QueueName } from './names';
import type { DeadJobData, DigestCloseJobData } from './schemas';

/**
 * Completed jobs BullMQ keeps per queue. Job retention is for operators, not
 * dedup (docs/protocol.md invariant 8): the message and operation records and
 * the journal are the durable record and outlive these jobs. The last 1,000 of
 * each queue are what Bull Board shows as completed and what `requeueDelivery`
 * may find finished. A count alone bounds the memory; an age on top costs
 * every completion one more sorted-set scan and only matters on a quiet
 * queue, where the kept jobs cost little. A larger count keeps megabytes per
 * queue that nothing reads: at the pipeline's rates, seconds of history.
 */
export const KEEP_COMPLETED_JOBS = 1_000;

/**
 * Length of each queue's BullMQ event stream (`XADD` per job state change,
 * trimmed approximately). Nothing in singleshot reads it (no QueueEvents, Bull
 * Board reads the job sets); it serves a QueueEvents listener an operator
 * attaches to watch live, for which the last 1,000 events are plenty.
 * BullMQ's default is ten times that, memory per queue that nothing reads.
 */
export const EVENTS_MAX_LEN = 1_000;

/**
 * Job retention is for operators, not dedup (docs/protocol.md invariant 8): dedup lives in the
 * message and operation records, which outlive these jobs. Failed jobs stay a week.
 */
export const DECIDE_OPTIONS: JobsOptions = {
  attempts: 50,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: KEEP_COMPLETED_JOBS },
  removeOnFail: { age: 7 * 86_400 },
};

/** Options of every deliver job, single-operation and batch alike (batch-jobs.ts). */
export const DELIVER_OPTIONS: JobsOptions = {
  // Retries of provider errors are scheduled by the delivery worker itself
  // (batch-runner.ts, attempts counted in the operation state). BullMQ attempts only
  // cover infrastructure failures inside the worker, such as Redis going away.
  attempts: 50,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: KEEP_COMPLETED_JOBS },
  removeOnFail: { age: 7 * 86_400 },
};

// Like deliver jobs: the render worker schedules its own retries (attempts in
// the document state); BullMQ attempts only cover infrastructure failures.
const RENDER_OPTIONS: JobsOptions = {
  attempts: 50,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { count: KEEP_COMPLETED_JOBS },
  removeOnFail: { age: 7 * 86_400 },
};

/** The name of a partition's queue: the plain name with one partition (the single-Redis layout). */
export function partitionQueueName(base: string, partition: number, partitions: number): string {
  return partitions === 1 ? base : `${base}-${String(partition).padStart(2, '0')}`;
}

/**
 * The queues of one deployment. `decide` and `deliver` are split into
 * `partitions` BullMQ queues each (one hash slot each, so a cluster spreads
 * them); `dead` is one queue (low volume, read by operators as one list).
 */
export interface Queues {
  partitions: number;
  /** Every partition's queue, index = partition. */
  decideAll: Queue<DecideJobData>[];
  deliverAll: Queue<DeliverJobData>[];
  /** The decide queue of a message key's partition (`partitionOf`). */
  decideOf(messageKey: string): Queue<DecideJobData>;
  /** The deliver queue of an operation key's partition (`partitionOf`). */
  deliverOf(operationKey: string): Queue<DeliverJobData>;
  /** The one decide queue; throws with more than one partition (use `decideOf` or `decideAll`). */
  readonly decide: Queue<DecideJobData>;
  /** The one deliver queue; throws with more than one partition (use `deliverOf` or `deliverAll`). */
  readonly deliver: Queue<DeliverJobData>;
  /** Documents to render: one queue, not partitioned (off the hot path, low volume). */
  render: Queue<RenderJobData>;
  /** Digest closes (delayed jobs, one per digest): one queue, not partitioned. */
  digest: Queue<DigestCloseJobData>;
  dead: Queue<DeadJobData>;
  /**
   * Every queue by its name (`QUEUE_NAMES`), each with its partitions in
   * order: a name in QUEUES without its queues here does not compile, so
   * whatever lists them all, iterating this, misses none.
   */
  byName: Readonly<Record<QueueName, readonly Queue[]>>;
  close(): Promise<void>;
}

/** Opens the queues of every partition of `keys` on one connection. */
export function openQueues(connection: RedisClient, keys: KeyBuilder): Queues {
  const P = keys.partitions;
  // No version check: BullMQ keeps a queue's start (INFO) as one promise every
  // later call awaits, so a start that met a failover (a producer connection
  // fails commands instead of queueing them) refused every add until the
  // process ended. A queue needs no version: only workers' blocking reads do.
  const options = { connection, streams: { events: { maxLen: EVENTS_MAX_LEN } }, skipVersionCheck: true };
  const open = <T>(base: string, p: number) => new Queue<T>(partitionQueueName(base, p, P), { ...options, prefix: keys.queuePrefixOf(p) });
  const decideAll = Array.from({ length: P }, (_, p) => open<DecideJobData>(QUEUES.decide, p));
  const deliverAll = Array.from({ length: P }, (_, p) => open<DeliverJobData>(QUEUES.deliver, p));
  const dead = new Queue<DeadJobData>(QUEUES.dead, { ...options, prefix: keys.queuePrefix });
  const render = new Queue<RenderJobData>(QUEUES.render, { ...options, prefix: keys.queuePrefix });
  const digest = new Queue<DigestCloseJobData>(QUEUES.digest, { ...options, prefix: keys.queuePrefix });
  const byName: Record<QueueName, readonly Queue[]> = { decide: decideAll, deliver: deliverAll, render: [render], digest: [digest], dead: [dead] };
  const all = Object.values(byName).flat();
  for (const q of all) q.on('error', () => undefined);
  const only = <T>(list: T[], name: string): T => {
    if (list.length !== 1) throw new TypeError(`queues.${name} needs one partition; there are ${list.length} (use ${name}Of or ${name}All)`);
    return list[0]!;
  };
  return {
    partitions: P,
    decideAll,
    deliverAll,
    decideOf: (messageKey) => decideAll[partitionOf(messageKey, P)]!,
    deliverOf: (operationKey) => deliverAll[partitionOf(operationKey, P)]!,
    get decide() {
      return only(decideAll, 'decide');
    },
    get deliver() {
      return only(deliverAll, 'deliver');
    },
    dead,
    render,
    digest,
    byName,
    close: async () => {
      await Promise.all(all.map((q) => q.close()));
    },
  };
}

/** Adds the decide job of a message to its partition; jobId = message key, so concurrent adds collapse. */
export async function enqueueDecide(queues: Pick<Queues, 'decideOf'>, data: DecideJobData): Promise<void> {
  await queues.decideOf(data.messageKey).add('decide', data, { ...DECIDE_OPTIONS, jobId: data.messageKey });
}

/** Up to this many deliver jobs of one partition are added with parallel `add` calls, more with one `addBulk`. */
const PARALLEL_ADD_MAX = 16;

/**
 * Adds deliver jobs, each to its operation key's partition; jobId = operation
 * key. One round trip (one per partition touched, in parallel, on a cluster).
 * A small fan-out uses parallel `add`s, sent in one socket write (the
 * connection batches a turn's writes): `addBulk` builds an ioredis pipeline,
 * whose constructor copies every BullMQ script onto it, a cost per call that
 * parallel adds do not have. Each add is idempotent by job
 * id, so a partial failure is repaired by the decide job's retry, as with addBulk.
 */
export async function enqueueDeliveries(queues: Pick<Queues, 'deliverOf'>, jobs: DeliverJobData[]): Promise<void> {
  if (jobs.length === 0) return;
  const byQueue = new Map<Queue<DeliverJobData>, DeliverJobData[]>();
  for (const job of jobs) {
    const queue = queues.deliverOf(job.operationKey);
    const list = byQueue.get(queue);
    if (list) list.push(job);
    else byQueue.set(queue, [job]);
  }
  await Promise.all(
    [...byQueue].map(async ([queue, list]) => {
      if (list.length <= PARALLEL_ADD_MAX) {
        await Promise.all(list.map((data) => queue.add('deliver', data, { ...DELIVER_OPTIONS, jobId: data.operationKey })));
        return;
      }
      await queue.addBulk(list.map((data) => ({ name: 'deliver', data, opts: { ...DELIVER_OPTIONS, jobId: data.operationKey } })));
    }),
  );
}

/**
 * Adds deliver jobs that run after a delay (scheduled operations), each its
 * own job under its operation key: a delay belongs to one operation, so they
 * are never batched.
 */
export async function enqueueDelayedDeliveries(queues: Pick<Queues, 'deliverOf'>, items: ReadonlyArray<{ job: DeliverJobData; delayMs: number }>): Promise<void> {
  await Promise.all(
    items.map(({ job, delayMs }) => queues.deliverOf(job.operationKey).add('deliver', job, { ...DELIVER_OPTIONS, jobId: job.operationKey, delay: Math.max(0, Math.round(delayMs)) })),
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

const DIGEST_OPTIONS: JobsOptions = {
  attempts: 50,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: KEEP_COMPLETED_JOBS },
  removeOnFail: { age: 7 * 86_400 },
};

/**
 * Adds a digest's close job to run at its close time; jobId = digest id, so
 * the decision that opened the digest and any retry of it add one job.
 */
export async function enqueueDigestClose(queue: Queue<DigestCloseJobData>, data: DigestCloseJobData, jobId: string, delayMs: number): Promise<void> {
  await queue.add('close', data, { ...DIGEST_OPTIONS, jobId, delay: Math.max(0, Math.round(delayMs)) });
}
