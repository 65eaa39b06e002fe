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
