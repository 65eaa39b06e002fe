import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { EVENTS_MAX_LEN, KEEP_COMPLETED_JOBS, enqueueDeliveries, openQueues, type Queues } from './queues';

// What a finished job leaves behind, on a real Redis with a real BullMQ worker.
let server: TestRedis;
let redis: RedisClient;
let workerConnection: RedisClient;
let queues: Queues;
const keys = new KeyBuilder('rt', 4);

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  workerConnection = createRedis({ url: server.url, role: 'worker' });
  queues = openQueues(redis, keys);
});
afterAll(async () => {
  await queues?.close();
  redis?.disconnect();
  workerConnection?.disconnect();
  await server?.destroy();
});

describe('job retention', () => {
  it('keeps the last KEEP_COMPLETED_JOBS completed jobs of a queue and about EVENTS_MAX_LEN events', async () => {
    const jobs = Array.from({ length: KEEP_COMPLETED_JOBS + 25 }, (_, i) => deliverJob(`kept-${i}`));
    await enqueueDeliveries(queues, jobs);
    let ran = 0;
    const worker = new Worker(
      queues.deliver.name,
      async () => {
        ran += 1;
      },
      { connection: workerConnection, prefix: keys.queuePrefix, concurrency: 50 },
    );
    try {
      await waitUntil(() => ran >= jobs.length, 'every job to run', { timeoutMs: 60_000 });
      await waitUntil(async () => (await queues.deliver.getJobCounts('active')).active === 0, 'the last job to complete');
    } finally {
      await worker.close();
    }
    expect((await queues.deliver.getJobCounts('completed')).completed).toBe(KEEP_COMPLETED_JOBS);
    // The jobs beyond the count are gone with their hashes, not just out of the set;
    // the last one fetched finished after at least 975 others, so it is kept.
    const found = await Promise.all(jobs.map((j) => redis.exists(`${keys.queuePrefix}:${queues.deliver.name}:${j.operationKey}`)));
    expect(found.filter((n) => n === 1)).toHaveLength(KEEP_COMPLETED_JOBS);
    expect(await (await queues.deliver.getJob(jobs.at(-1)!.operationKey))?.getState()).toBe('completed');
    // Trimming is approximate (whole stream nodes of up to 100 entries); each job added 4 events.
    expect(await redis.hget(`${keys.queuePrefix}:${queues.deliver.name}:meta`, 'opts.maxLenEvents')).toBe(String(EVENTS_MAX_LEN));
    expect(await redis.xlen(`${keys.queuePrefix}:${queues.deliver.name}:events`)).toBeLessThan(EVENTS_MAX_LEN + 200);
  });
});
