import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyBuilder, SuppressionList, Suppressions, createRedis, isCluster, slotOf, whenReady, type RedisClient, type SuppressionListPosition } from '@singleshot/store';
import { startTestRedisCluster, type TestRedisCluster } from '@singleshot/test-harness';

// The suppression list on a Redis Cluster: each shard's index lives in the
// slot of the records it lists, so the write script changes a record and its
// place on the list together on one master, and a page reads every master.
let cluster: TestRedisCluster;
let redis: RedisClient;
let clock = 1_700_000_000_000;
const now = () => clock;
const keys = new KeyBuilder('sc', 16);

beforeAll(async () => {
  cluster = await startTestRedisCluster();
  redis = createRedis({ url: 'redis://unused', role: 'client', clusterNodes: cluster.seeds });
  await whenReady(redis);
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await cluster?.destroy();
});

async function readAll(list: SuppressionList, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let after: SuppressionListPosition | undefined;
  for (;;) {
    const page = await list.page(limit, after);
    seen.push(...page.recipients.map((r) => r.recipient));
    if (!page.next) return seen;
    after = page.next;
  }
}

describe('the suppression list on a cluster', () => {
  it("keeps one index per shard in its records' slot, over every master; pages, prunes and migrates across slots", async () => {
    const supp = new Suppressions(redis, keys, { retentionMs: 86_400_000, now });
    const list = new SuppressionList(redis, keys, { now });
    const recipients = Array.from({ length: 40 }, (_, i) => `c${String(i).padStart(2, '0')}@x.test`);
    for (const [i, recipient] of recipients.entries()) {
      clock += 1;
      await supp.add({ channel: 'email', recipient, reason: 'hard_bounce', origin: 'bounce', by: 'feedback', ...(i % 8 === 0 ? { expiresAt: clock + 1_000 } : {}) });
      expect(slotOf(keys.suppressionIndexOf(recipient))).toBe(slotOf(keys.suppressions(recipient)));
      expect(slotOf(keys.suppressionExpiryOf(recipient))).toBe(slotOf(keys.suppressions(recipient)));
      expect(await redis.zscore(keys.suppressionIndexOf(recipient), recipient)).toBe(String(clock));
    }
    const used = keys.allSuppressionIndexes().filter((_, shard) => recipients.some((r) => keys.suppressionIndexOf(r) === keys.suppressionIndex(shard)));
    const masters = new Set(used.map((key) => (isCluster(redis) ? redis.slots[slotOf(key)]?.[0] : '')));
    expect(masters.size).toBe(3);

    expect(await readAll(list, 6)).toEqual([...recipients].reverse());
    await supp.remove({ channel: 'email', recipient: 'c01@x.test', by: 'ops' });
    clock += 1_000;
    const left = recipients.filter((r, i) => i % 8 !== 0 && r !== 'c01@x.test');
    expect(await readAll(list, 6)).toEqual([...left].reverse());
    for (const shard of keys.allSuppressionIndexes()) expect(await redis.zcard(shard)).toBe(left.filter((r) => keys.suppressionIndexOf(r) === shard).length);

    // The former single index, in a slot of its own, moves into the shards on the next page.
    for (const shard of keys.allSuppressionIndexes()) await redis.del(shard);
    await redis.zadd(keys.legacySuppressionIndex(), ...left.flatMap((r, i) => [i + 1, r]));
    expect(await readAll(list, 7)).toEqual([...left].reverse());
    expect(await redis.exists(keys.legacySuppressionIndex())).toBe(0);
  });
});
