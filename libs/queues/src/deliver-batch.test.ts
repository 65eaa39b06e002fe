import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { partitionOf, type DeliverJobData } from '@singleshot/core';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob, hexKey } from '@singleshot/test-jobs';
import { DELIVER_BATCH_JOB_NAME, enqueueDeliveryJobs, planDeliverJobs } from './deliver-batch';
import { requeueDelivery } from './replay-requeue';
import { openQueues, type Queues } from './queues';

// Batching a fan-out into deliver jobs, on a real Redis with real BullMQ queues (no worker).
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let split: Queues;
let round = 0;

/** `n` operations of one message (a fresh message per call, so tests do not share job ids). */
function fanOut(n: number, extra: Partial<DeliverJobData> = {}): DeliverJobData[] {
  round++;
  const messageKey = hexKey(`msg:batch:${round}`);
  return Array.from({ length: n }, (_, i) => deliverJob(`batch-${round}-${i}`, { messageKey, ...extra }));
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, new KeyBuilder('db', 4));
  split = openQueues(redis, new KeyBuilder('dp', 4, 4));
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

describe('planDeliverJobs', () => {
  it('puts a message\'s operations of one partition in one batch, with an id BullMQ accepts', () => {
    const ops = fanOut(3);
    const { singles, batches } = planDeliverJobs(queues, ops, 16);
    expect(singles).toEqual([]);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.data.operations).toEqual(ops);
    expect(batches[0]?.jobId).toContain(ops[0]?.messageKey);
    expect(batches[0]?.jobId).not.toContain(':');
  });

  it('leaves a single operation, and operations with documents, as ordinary deliver jobs', () => {
    const [one] = fanOut(1);
    const withDocs = fanOut(2, { documents: [{ name: 'po', documentKey: hexKey('doc') }] });
    expect(planDeliverJobs(queues, [one as DeliverJobData], 16)).toEqual({ singles: [one], batches: [] });
    expect(planDeliverJobs(queues, withDocs, 16)).toEqual({ singles: withDocs, batches: [] });
  });

  it('splits more than batchMax operations evenly, and batchMax 1 turns batching off', () => {
    const ops = fanOut(17);
    const { singles, batches } = planDeliverJobs(queues, ops, 16);
    expect(singles).toEqual([]);
    expect(batches.map((b) => b.data.operations.length)).toEqual([9, 8]);
    expect(batches.flatMap((b) => b.data.operations)).toEqual(ops);
    expect(new Set(batches.map((b) => b.jobId)).size).toBe(2);
    expect(planDeliverJobs(queues, ops, 1)).toEqual({ singles: ops, batches: [] });
  });

  it('batches per deliver partition: every operation of a batch belongs to its queue', () => {
    const ops = fanOut(12);
    const { singles, batches } = planDeliverJobs(split, ops, 16);
    for (const b of batches) {
      for (const op of b.data.operations) expect(b.queue).toBe(split.deliverAll[partitionOf(op.operationKey, 4)]);
    }
    expect([...singles, ...batches.flatMap((b) => b.data.operations)].map((o) => o.operationKey).sort()).toEqual(ops.map((o) => o.operationKey).sort());
  });

  it('puts the operations of several messages (fan-outs handed in together) of one partition in one batch', () => {
    const ops = [...fanOut(2), ...fanOut(2), ...fanOut(3)];
    const { singles, batches } = planDeliverJobs(queues, ops, 16);
    expect(singles).toEqual([]);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.data.operations).toEqual(ops);
    expect(new Set(ops.map((o) => o.messageKey)).size).toBe(3);
    // Other companions make another id: an operation never hides behind a batch it is not in.
    expect(planDeliverJobs(queues, ops.slice(2), 16).batches[0]?.jobId).not.toBe(batches[0]?.jobId);
  });

  it('gives a changed fan-out a new batch id (a route added between two deliveries of the decide job)', () => {
    const ops = fanOut(3);
    const before = planDeliverJobs(queues, ops.slice(0, 2), 16).batches[0]?.jobId;
    const after = planDeliverJobs(queues, ops, 16).batches[0]?.jobId;
    expect(before).toBeDefined();
    expect(after).not.toBe(before);
  });
});

describe('enqueueDeliveryJobs', () => {
  it('adds one batch job for a fan-out, and a redelivered decide job adds nothing new', async () => {
    const ops = fanOut(2);
    await enqueueDeliveryJobs(queues, ops, 16);
    await enqueueDeliveryJobs(queues, ops, 16);
    const jobs = await queues.deliver.getJobs(['waiting', 'delayed', 'active', 'completed']);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.name).toBe(DELIVER_BATCH_JOB_NAME);
    expect(jobs[0]?.data).toEqual({ operations: ops });
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

// How a batch hands on an operation that has to be tried again (apps/delivery's follow-up).
describe('requeueDelivery with delayMs: a batch follow-up', () => {
  it('adds a delayed deliver job under the operation key, once', async () => {
    const [op] = fanOut(1) as [DeliverJobData];
    expect(await requeueDelivery(queues, op, { delayMs: 60_000 })).toBe('added');
    expect(await requeueDelivery(queues, op, { delayMs: 60_000 })).toBe('present');
    const job = await queues.deliver.getJob(op.operationKey);
    expect(job?.name).toBe('deliver');
    expect(await job?.getState()).toBe('delayed');
    expect(job?.data).toEqual(op);
  });

  it('replaces a finished job under that id (BullMQ would ignore the add)', async () => {
    const [op] = fanOut(1) as [DeliverJobData];
    await queues.deliver.add('deliver', op, { jobId: op.operationKey });
    const { Worker } = await import('bullmq');
    const conn = createRedis({ url: server.url, role: 'worker' });
    const w = new Worker(queues.deliver.name, async () => 'done', { connection: conn, prefix: new KeyBuilder('db', 4).queuePrefix, autorun: false });
    const next = await w.getNextJob('t');
    await next?.moveToCompleted('done', 't', false);
    await w.close();
    conn.disconnect();
    expect(await (await queues.deliver.getJob(op.operationKey))?.getState()).toBe('completed');
    expect(await requeueDelivery(queues, op, { delayMs: 0 })).toBe('added');
    expect(await (await queues.deliver.getJob(op.operationKey))?.getState()).toBe('waiting');
  });
});
