import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { QUEUES, QUEUE_NAMES } from './names';
import { openQueues, partitionQueueName } from './queues';

let server: TestRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.destroy();
});

describe('openQueues().byName', () => {
  it('holds every queue name of QUEUES, each with the queues of its partitions', async () => {
    const queues = openQueues(redis, new KeyBuilder('ss', 16, 3));
    try {
      expect(Object.keys(queues.byName).sort()).toEqual([...QUEUE_NAMES].sort());
      for (const name of QUEUE_NAMES) {
        const partitioned = name === QUEUES.decide || name === QUEUES.deliver;
        expect(queues.byName[name].map((q) => q.name), name).toEqual(partitioned ? [0, 1, 2].map((p) => partitionQueueName(name, p, 3)) : [name]);
      }
      expect(queues.byName.decide).toBe(queues.decideAll);
      expect(queues.byName.deliver).toBe(queues.deliverAll);
      expect([queues.byName.render[0], queues.byName.digest[0], queues.byName.dead[0]]).toEqual([queues.render, queues.digest, queues.dead]);
    } finally {
      await queues.close();
    }
  });
});

describe('openQueues() on a connection whose first command fails', () => {
  // BullMQ keeps a queue's start-up (a version check with INFO) as one promise
  // that every later call awaits; when that command failed (a cluster between
  // slot maps as the process started, during a failover), the queue refused
  // every add for the life of the process. Here INFO is refused for good (an
  // ACL), which fails the same command deterministically.
  it('adds jobs: starting a queue sends no command of its own', async () => {
    await redis.call('ACL', 'SETUSER', 'no-info', 'on', '>no-info-pass', '~*', '&*', '+@all', '-info');
    const url = new URL(server.url);
    url.username = 'no-info';
    url.password = 'no-info-pass';
    const producer = createRedis({ url: url.toString(), role: 'producer' });
    const queues = openQueues(producer, new KeyBuilder('ss', 16, 1));
    try {
      if (producer.status !== 'ready') await new Promise((resolve) => producer.once('ready', resolve));
      await expect(producer.info()).rejects.toThrow(/NOPERM/);
      const job = await queues.dead.add('dead', { probe: true } as never, { jobId: 'probe' });
      expect(job.id).toBe('probe');
      expect(await queues.dead.getJobCounts('waiting')).toEqual({ waiting: 1 });
    } finally {
      await queues.close();
      producer.disconnect();
    }
  });
});
