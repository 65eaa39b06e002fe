import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaWaitError, createRedis, slotOf, slotOwners, waitForReplicas, whenReady, type RedisClient } from '@singleshot/store';
import { startTestRedisCluster, waitUntil, type ClusterNode, type TestRedisCluster } from '@singleshot/test-harness';

// A write sent to a master that is then paused past the node timeout waits on
// its socket; the replica is promoted and the client's slot map reloaded;
// when the old master resumes it may still run the write (it believes it is
// master for a moment), answer it, and drop it as it turns replica. A replica
// wait that reads the map only then asks the promoted master, which has no
// replica yet, and vouches for nothing (the cluster chaos run lost decided
// operations this way). Where the writes went is read before them: a slot
// whose master changed in between fails the wait, and the caller retries.

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

describe('a write in flight to a master that is paused and replaced', () => {
  it('is not vouched for: the replica wait fails once the slot changed master, and passes again once healed', async () => {
    const key = 'paused:{s09}:probe';
    const slot = slotOf(key);
    const byAddress = (address: string | undefined) => cluster.nodes.find((n) => n.address === address) as ClusterNode;
    const listed = () => (redis as { slots: string[][] }).slots[slot] ?? [];
    await waitUntil(() => listed().length > 1 || undefined, 'the client to list the slot with its replica', { timeoutMs: 30_000, intervalMs: 200 });

    const master = byAddress(listed()[0]);
    await redis.set(key, 'before');
    await waitForReplicas(redis, [key], 1, 2000, slotOwners(redis, [key]));

    const before = slotOwners(redis, [key]);
    cluster.pause(master);
    let write: Promise<unknown> | undefined;
    try {
      // Queued on the paused master's socket: the client's map still names it.
      write = redis.set(key, 'during').catch((err: unknown) => err);
      await cluster.waitForPromotion(master);
      await waitUntil(() => (listed()[0] !== master.address ? true : undefined), 'the client to reload its map onto the promoted master', { timeoutMs: 30_000, intervalMs: 200 });
    } finally {
      cluster.resume(master);
    }
    const answered = await write;
    console.warn(JSON.stringify({ figures: 'paused master write', answered: answered instanceof Error ? answered.message : answered, promoted: listed()[0], paused: master.address }));

    const failed = await waitForReplicas(redis, [key], 1, 1000, before).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(ReplicaWaitError);
    expect((failed as ReplicaWaitError).reason).toBe('master_changed');

    // Healed (the old master back as a replica, the map reloaded): a new write with a fresh reading is vouched for.
    await cluster.waitHealthy();
    await waitUntil(() => listed().length > 1 || undefined, 'the client to list the rejoined replica', { timeoutMs: 30_000, intervalMs: 200 });
    // What became of the answered write (lost when the old master ran it and then turned replica).
    console.warn(JSON.stringify({ figures: 'paused master write, after healing', value: await redis.get(key) }));
    const fresh = slotOwners(redis, [key]);
    await redis.set(key, 'healed');
    await waitForReplicas(redis, [key], 1, 2000, fresh);
  }, 180_000);
});
