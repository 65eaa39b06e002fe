import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverJob } from '@singleshot/test-jobs';
import { enqueueDeliveries, openQueues, QUEUES } from '@singleshot/queues';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, waitForQueuesIdle, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { PartitionWorkers, consumedPartitions } from './partition-workers';

let server: TestRedis;
const connections: RedisClient[] = [];
const connect = () => {
  const c = createRedis({ url: server.url, role: 'worker' });
  connections.push(c);
  return c;
};

beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await server?.destroy();
});

describe('queue partitions', () => {
  it('with one partition the layout is the single-Redis one ({ssq}, plain names)', () => {
    const keys = new KeyBuilder('ss', 16, 1);
    expect(consumedPartitions(keys, QUEUES.deliver)).toEqual([{ name: 'deliver', prefix: '{ssq}' }]);
    const four = new KeyBuilder('ss', 16, 4);
    expect(consumedPartitions(four, QUEUES.deliver, [1, 3])).toEqual([
      { name: 'deliver-01', prefix: 'ss:{s01}:q' },
      { name: 'deliver-03', prefix: 'ss:{s03}:q' },
    ]);
    expect(() => consumedPartitions(four, QUEUES.deliver, [4])).toThrow(RangeError);
  });

  it('changing P from 1 to 4 on a live system: jobs of the old layout drain, new ones spread, each runs once', async () => {
    const oldKeys = new KeyBuilder('ss', 16, 1);
    const newKeys = new KeyBuilder('ss', 16, 4);
    const redis = connect();
    const oldQueues = openQueues(redis, oldKeys);
    const newQueues = openQueues(redis, newKeys);
    // Before the change: 20 jobs wait in the old layout (no worker runs).
    const before = Array.from({ length: 20 }, (_, i) => deliverJob(`before-${i}`));
    await enqueueDeliveries(oldQueues, before);
    // After it: producers write the new layout only.
    const after = Array.from({ length: 40 }, (_, i) => deliverJob(`after-${i}`));
    await enqueueDeliveries(newQueues, after);
    const spread = await Promise.all(newQueues.deliverAll.map((q) => q.count()));
    expect(spread.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(spread.reduce((a, b) => a + b, 0)).toBe(40);

    const ran: string[] = [];
    const workers = new PartitionWorkers<{ operationKey: string }, void>(
      { connect, redis },
      consumedPartitions(newKeys, QUEUES.deliver, undefined, 1),
      async (job) => {
        ran.push(job.data.operationKey);
      },
      { connectionName: 'test', concurrency: 8 },
    );
    expect(workers.workers).toHaveLength(5);
    await waitUntil(() => ran.length >= 60, 'every job to run', { timeoutMs: 30_000 });
    await waitForQueuesIdle(oldQueues, { what: 'the old layout to drain' });
    await waitForQueuesIdle(newQueues, { what: 'the new layout to drain' });
    await workers.close();
    expect(ran.sort()).toEqual([...before, ...after].map((j) => j.operationKey).sort());
    await oldQueues.close();
    await newQueues.close();
  });

  it('workers on the shared client connection run every job once and leave the connection open when they close', async () => {
    const keys = new KeyBuilder('shared', 16, 2);
    const redis = connect();
    let opened = 0;
    const queues = openQueues(redis, keys);
    const jobs = Array.from({ length: 30 }, (_, i) => deliverJob(`shared-${i}`));
    await enqueueDeliveries(queues, jobs);
    const ran: string[] = [];
    const workers = new PartitionWorkers<{ operationKey: string }, void>(
      {
        connect: () => {
          opened += 1;
          return connect();
        },
        redis,
      },
      consumedPartitions(keys, QUEUES.deliver),
      async (job) => {
        // The processor writes on the same connection, as the decision worker does.
        await redis.incr('shared:ran');
        ran.push(job.data.operationKey);
      },
      { connectionName: 'test', concurrency: 8, shareClientConnection: true },
    );
    expect(opened).toBe(0);
    await waitUntil(() => ran.length >= jobs.length, 'every job to run', { timeoutMs: 30_000 });
    await waitForQueuesIdle(queues, { what: 'the jobs to complete' });
    await workers.close();
    expect(ran.sort()).toEqual(jobs.map((j) => j.operationKey).sort());
    expect(await redis.get('shared:ran')).toBe(String(jobs.length));
    expect(redis.status).toBe('ready');
    await queues.close();
  });
});
