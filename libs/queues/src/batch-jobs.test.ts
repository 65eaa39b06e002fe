import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import { eventMessageKey, partitionOf, type DecideJobData, type DeliverJobData } from '@singleshot/core';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob, hexKey } from '@singleshot/test-jobs';
import { BATCH_JOB_NAME } from './batch-plan';
import { DECIDE_BATCH_MAX, DECIDE_JOB_NAME, enqueueDecideJobs, enqueueDeliveryJobs, handOffInvalidDecide, requeueDecide } from './batch-jobs';
import { requeueDelivery } from './replay-requeue';
import { openQueues, type Queues } from './queues';
import type { DecideBatchJobData, DeliverBatchJobData } from './schemas';

// Batch decide and deliver jobs as ingest and the decision add them, and what
// a batch hands on, on a real Redis with real BullMQ queues (no worker).
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let split: Queues;
let round = 0;

/** `n` messages with fresh keys (tests do not share job ids). */
function messages(n: number): DecideJobData[] {
  round++;
  return Array.from({ length: n }, (_, i) => {
    const eventId = `e-${round}-${i}`;
    return { messageKey: eventMessageKey('shop', eventId), firstArrivalAt: 1_700_000_000_000, via: 'api', input: { kind: 'event', source: 'shop', eventId, type: 't', data: {} } };
  });
}

/** `n` operations of one fresh message. */
function fanOut(n: number, extra: Partial<DeliverJobData> = {}): DeliverJobData[] {
  round++;
  const messageKey = hexKey(`msg:batch:${round}`);
  return Array.from({ length: n }, (_, i) => deliverJob(`batch-${round}-${i}`, { messageKey, ...extra }));
}

const listed = (job: { name: string; data: unknown }): unknown[] =>
  job.name === BATCH_JOB_NAME ? ((job.data as DecideBatchJobData).messages ?? (job.data as DeliverBatchJobData).operations) : [job.data];

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, new KeyBuilder('qb', 4));
  split = openQueues(redis, new KeyBuilder('qp', 4, 4));
});

afterAll(async () => {
  await queues.close();
  await split.close();
  redis.disconnect();
  await server.destroy();
});

beforeEach(async () => {
  await redis.flushall();
});

describe('enqueueDecideJobs', () => {
  it('a message alone gets its ordinary decide job under its message key', async () => {
    const [m] = messages(1) as [DecideJobData];
    await enqueueDecideJobs(queues, [m]);
    const job = await queues.decide.getJob(m.messageKey);
    expect(job?.name).toBe(DECIDE_JOB_NAME);
    expect(job?.data).toEqual(m);
  });

  it('several messages share one batch job holding each once; the same messages again add nothing', async () => {
    const list = messages(3);
    await enqueueDecideJobs(queues, [...list, list[1] as DecideJobData]);
    await enqueueDecideJobs(queues, list);
    const jobs = await queues.decide.getJobs(['waiting']);
    expect(jobs.map((j) => [j.name, listed(j)])).toEqual([[BATCH_JOB_NAME, list]]);
    expect(jobs[0]?.id).not.toContain(':');
  });

  it(`splits more than ${DECIDE_BATCH_MAX} messages evenly, per decide partition`, async () => {
    const list = messages(DECIDE_BATCH_MAX + 8);
    await enqueueDecideJobs(queues, list);
    expect((await queues.decide.getJobs(['waiting'])).map((j) => listed(j).length)).toEqual([20, 20]);
    await enqueueDecideJobs(split, list);
    let seen = 0;
    for (const [p, queue] of split.decideAll.entries()) {
      for (const job of await queue.getJobs(['waiting'])) {
        for (const m of listed(job) as DecideJobData[]) expect(partitionOf(m.messageKey, 4)).toBe(p);
        seen += listed(job).length;
      }
    }
    expect(seen).toBe(list.length);
  });
});

describe('enqueueDeliveryJobs', () => {
  it('adds one batch job for a fan-out, and a redelivered decide job adds nothing new', async () => {
    const ops = fanOut(2);
    await enqueueDeliveryJobs(queues, ops, 16);
    await enqueueDeliveryJobs(queues, ops, 16);
    const jobs = await queues.deliver.getJobs(['waiting', 'delayed', 'active', 'completed']);
    expect(jobs.map((j) => [j.name, j.data])).toEqual([[BATCH_JOB_NAME, { operations: ops }]]);
    // No single job under an operation key: lookups by operation key find none.
    for (const op of ops) expect(await queues.deliver.getJob(op.operationKey)).toBeUndefined();
  });

  it('with batchMax 1, adds one deliver job per operation under its operation key, as before batching', async () => {
    const ops = fanOut(3);
    await enqueueDeliveryJobs(queues, ops, 1);
    await enqueueDeliveryJobs(queues, ops, 1);
    const jobs = await queues.deliver.getJobs(['waiting']);
    expect(jobs.map((j) => [j.name, j.id]).sort()).toEqual(ops.map((o) => ['deliver', o.operationKey]).sort());
  });

  it('adds a document operation as its own job next to the batch of the others', async () => {
    const plain = fanOut(2);
    const [doc] = fanOut(1, { documents: [{ name: 'po', documentKey: hexKey('doc2') }] });
    const withDoc = { ...(doc as DeliverJobData), messageKey: (plain[0] as DeliverJobData).messageKey };
    await enqueueDeliveryJobs(queues, [...plain, withDoc], 16);
    const jobs = await queues.deliver.getJobs(['waiting']);
    expect(jobs.map((j) => j.name).sort()).toEqual(['batch', 'deliver']);
    expect((await queues.deliver.getJob(withDoc.operationKey))?.data).toEqual(withDoc);
  });
});

describe('what a batch hands on: a member in a job of its own', () => {
  it('requeueDecide adds one delayed decide job per batch, not swallowed by a finished job under the message key', async () => {
    const [m] = messages(1) as [DecideJobData];
    await queues.decide.add(DECIDE_JOB_NAME, m, { jobId: m.messageKey });
    await requeueDecide(queues, m, 'batch-1');
    await requeueDecide(queues, m, 'batch-1');
    const job = await queues.decide.getJob(`${m.messageKey}-from-batch-1`);
    expect(job?.name).toBe(DECIDE_JOB_NAME);
    expect(await job?.getState()).toBe('delayed');
    // The first step of the decide job's own backoff.
    expect(job?.opts.delay).toBe(500);
    expect(job?.data).toEqual(m);
    expect(await queues.decide.getJobs(['delayed'])).toHaveLength(1);
  });

  it("handOffInvalidDecide adds the entry as it is to the batch's own queue, with one attempt", async () => {
    const target = split.decideAll[2]!;
    await handOffInvalidDecide(split, target.qualifiedName, { messageKey: 'nope' }, 'b-invalid-0');
    const job = await target.getJob('b-invalid-0');
    expect(job?.data).toEqual({ messageKey: 'nope' });
    expect(job?.opts.attempts).toBe(1);
  });

  it('requeueDelivery with delayMs adds a delayed deliver job under the operation key, once', async () => {
    const [op] = fanOut(1) as [DeliverJobData];
    expect(await requeueDelivery(queues, op, { delayMs: 60_000 })).toBe('added');
    expect(await requeueDelivery(queues, op, { delayMs: 60_000 })).toBe('present');
    const job = await queues.deliver.getJob(op.operationKey);
    expect(job?.name).toBe('deliver');
    expect(await job?.getState()).toBe('delayed');
    expect(job?.data).toEqual(op);
  });

  it('requeueDelivery replaces a finished job under that id (BullMQ would ignore the add)', async () => {
    const [op] = fanOut(1) as [DeliverJobData];
    await queues.deliver.add('deliver', op, { jobId: op.operationKey });
    const conn = createRedis({ url: server.url, role: 'worker' });
    const w = new Worker(queues.deliver.name, async () => 'done', { connection: conn, prefix: new KeyBuilder('qb', 4).queuePrefix, autorun: false });
    const next = await w.getNextJob('t');
    await next?.moveToCompleted('done', 't', false);
    await w.close();
    conn.disconnect();
    expect(await (await queues.deliver.getJob(op.operationKey))?.getState()).toBe('completed');
    expect(await requeueDelivery(queues, op, { delayMs: 0 })).toBe('added');
    expect(await (await queues.deliver.getJob(op.operationKey))?.getState()).toBe('waiting');
  });
});
