import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { partitionOf, sha256Hex, type DeliverJobData } from '@singleshot/core';
import { FairQueue, KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { FairDispatch } from './fair-dispatch';
import { openQueues, type Queues } from './queues';

// The fair queue's hand-over to the real BullMQ deliver queues: what moves,
// what goes past it, and what a mover that died leaves behind.
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
const keys = new KeyBuilder('fd', 16, 2);
let fair: FairQueue;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, keys);
  fair = new FairQueue(redis, keys);
});
afterAll(async () => {
  await queues?.close();
  redis?.disconnect();
  await server?.destroy();
});
beforeEach(async () => {
  await redis.flushall();
});

const op = (n: number, extra: Partial<DeliverJobData> = {}): DeliverJobData => ({
  operationKey: sha256Hex(`op${n}`),
  messageKey: sha256Hex(`message${n}`),
  route: 'r',
  action: 'notify',
  recipient: `r${n}@x.test`,
  channel: 'email',
  subject: 's',
  text: 't',
  data: {},
  firstArrivalAt: 1,
  ...extra,
});
/** A fair queue entry as FairDispatch writes it: the operation key, then the job. */
const entry = (job: DeliverJobData) => `${job.operationKey} ${JSON.stringify(job)}`;
const dispatchOf = (window: number) => new FairDispatch(queues, { queue: fair, window, weightOf: () => 1, capOf: () => undefined, batchMax: 1 });
const inQueue = async () => (await Promise.all(queues.deliverAll.map((q) => q.getJobs(['waiting'])))).flat().map((j) => j.id).sort();

describe('FairDispatch', () => {
  it('adds what the window has room for at once, keeps the rest, and pumps it when room opens', async () => {
    const same = Array.from({ length: 40 }, (_, i) => op(i)).filter((j) => partitionOf(j.operationKey, 2) === 1).slice(0, 3);
    expect(same).toHaveLength(3);
    const dispatch = dispatchOf(1);
    await dispatch.offer(same);
    const waiting = async () => (await queues.deliverAll[1]!.getJobs(['waiting'])).map((j) => j.id);
    expect(await waiting()).toEqual([same[0]!.operationKey]);
    expect(await fair.waiting(1)).toEqual(new Map([['default', 2]]));
    // The queue still holds its one job: a pump finds no room.
    await dispatch.pump(1);
    expect(await waiting()).toEqual([same[0]!.operationKey]);
    await queues.deliverAll[1]!.drain();
    await dispatch.pump(1);
    expect(await waiting()).toEqual([same[1]!.operationKey]);
    expect(await fair.waiting(1)).toEqual(new Map([['default', 1]]));
    // A worker started the moved operation: its place goes to the next.
    await dispatch.started(same[0]!);
    expect((await waiting()).sort()).toEqual([same[1]!.operationKey, same[2]!.operationKey].sort());
    expect(await fair.waiting(1)).toEqual(new Map());
    expect(await fair.waiting(0)).toEqual(new Map());
    // Nothing stays in transit once it is in the queue.
    expect(await fair.stale(1, -60_000)).toEqual([]);
  });

  it('sends a job with documents to the queue directly: the render wakes it by its job id', async () => {
    const withDoc = op(1, { documents: [{ name: 'invoice', documentKey: 'c'.repeat(64) }] });
    await dispatchOf(0).offer([withDoc, op(2)]);
    expect(await inQueue()).toEqual([withDoc.operationKey]);
  });

  it('adds again what a mover that died left in transit, once: the queue keeps one job per operation', async () => {
    const job = op(3);
    const p = partitionOf(job.operationKey, 2);
    // A mover that took the job out of the fair queue and died before adding it.
    await fair.move(p, fair.noQueue(p), [{ tenant: 'acme', weight: 1, documents: [entry(job)] }], 5);
    expect(await inQueue()).toEqual([]);
    const dispatch = dispatchOf(5);
    expect(await dispatch.recover(p, 60_000)).toBe(0);
    expect(await dispatch.recover(p, -1)).toBe(1);
    expect(await inQueue()).toEqual([job.operationKey]);
    expect((await queues.deliverAll[p]!.getJob(job.operationKey))?.data).toEqual({ ...job, moved: true });
    expect(await fair.stale(p, -60_000)).toEqual([]);
    // A second mover recovering the same document (it raced the first) adds nothing more.
    await fair.move(p, fair.noQueue(p), [{ tenant: 'acme', weight: 1, documents: [entry(job)] }], 5);
    await dispatch.recover(p, -1);
    expect(await inQueue()).toEqual([job.operationKey]);
  });

  it('runs pumps of one partition one at a time: calls while one runs make it run once more', async () => {
    const dispatch = dispatchOf(1);
    let scripts = 0;
    const original = fair.move.bind(fair);
    fair.move = async (...args) => {
      scripts++;
      return original(...args);
    };
    try {
      await Promise.all(Array.from({ length: 10 }, () => dispatch.pump(0)));
      expect(scripts).toBe(2);
    } finally {
      fair.move = original;
    }
  });

  it("drains the former layout's fair queue into today's queues", async () => {
    const former = new FairQueue(redis, keys.withPartitions(1));
    const jobs = [op(4), op(5)];
    await former.move(0, former.noQueue(0), [{ tenant: 'acme', weight: 1, documents: jobs.map(entry) }], 0);
    const dispatch = new FairDispatch(queues, { queue: fair, window: 10, weightOf: () => 1, capOf: () => undefined, batchMax: 1, former: { queue: former, partitions: 1 } });
    expect(await dispatch.recover(0, 10_000)).toBe(2);
    expect(await inQueue()).toEqual(jobs.map((j) => j.operationKey).sort());
    expect(await former.waiting(0)).toEqual(new Map());
  });
});
