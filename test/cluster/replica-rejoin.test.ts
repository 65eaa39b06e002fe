import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaWaitError, createRedis, slotOf, waitForReplicas, whenReady, type RedisClient } from '@singleshot/store';
import { startTestRedisCluster, waitUntil, type ClusterNode, type TestRedisCluster } from '@singleshot/test-harness';

// After a failover the promoted master has no replica until the old master
// rejoins. A client learns the rejoin only from a slot-map reload; without
// one it listed the promoted master without a replica for good, and
// waitForReplicas acknowledged every later write to those slots on the master
// alone: a later failover of that master lost them (the cluster chaos run).

let cluster: TestRedisCluster;
let redis: RedisClient;

beforeAll(async () => {
  cluster = await startTestRedisCluster();
  redis = createRedis({ url: 'redis://unused', role: 'client', clusterNodes: cluster.seeds });
  await whenReady(redis);
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await cluster?.destroy();
});

describe('a client after a failover, once the old master rejoined as a replica', () => {
  it('waits for the rejoined replica again: a write that replica cannot take is not acknowledged', async () => {
    const key = 'rejoin:{s05}:probe';
    const slot = slotOf(key);
    const byAddress = (address: string | undefined) => cluster.nodes.find((n) => n.address === address) as ClusterNode;
    const listed = () => (redis as { slots: string[][] }).slots[slot] ?? [];

    const oldMaster = byAddress(listed()[0]);
    await redis.set(key, 'before');
    await cluster.kill9(oldMaster);
    await cluster.waitForPromotion(oldMaster);
    // The client follows the slot to the promoted master (a redirection, then a reload).
    await waitUntil(async () => (await redis.set(key, 'during').then(() => true, () => false)) && listed()[0] !== oldMaster.address, 'the client to follow the failover', { timeoutMs: 30_000, intervalMs: 200 });
    const promoted = byAddress(listed()[0]);
    await cluster.restart(oldMaster);

    // The client must come to list the rejoined replica without being redirected.
    await waitUntil(() => listed().length > 1, 'the client to list the rejoined replica', { timeoutMs: 30_000, intervalMs: 200 });
    expect(byAddress(listed()[0])).toBe(promoted);

    // With that replica paused, a write to the promoted master is on no replica: not acknowledged.
    cluster.pause(oldMaster);
    try {
      await redis.set(key, 'after');
      await expect(waitForReplicas(redis, [key], 1, 1000)).rejects.toBeInstanceOf(ReplicaWaitError);
    } finally {
      cluster.resume(oldMaster);
    }
    await cluster.waitHealthy();
    await redis.set(key, 'healed');
    await waitForReplicas(redis, [key], 1, 2000);
  }, 180_000);
});
