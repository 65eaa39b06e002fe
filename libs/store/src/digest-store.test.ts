import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId } from '@singleshot/core';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { DigestStore } from './digest-store';
import { KeyBuilder } from './keys';

describe('digest scripts', () => {
  let server: TestRedis;
  let redis: RedisClient;
  let store: DigestStore;
  const opts = (now: number) => ({ now, closeAt: now + 1000, maxItems: 3, maxBytes: 10_000, route: 'r', recipient: 'a@x.test', key: '' });

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
    store = new DigestStore(redis, new KeyBuilder('dg', 4), { retentionMs: 60_000 });
  });
  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  it('two events in the same millisecond join one digest; a retried join is a duplicate', async () => {
    const g = digestGroupId('r', 'a@x.test', '');
    const [a, b] = await Promise.all([store.join(g, 'm1', '{"n":1}', opts(1000)), store.join(g, 'm2', '{"n":2}', opts(1000))]);
    expect([a.seq, b.seq]).toEqual([1, 1]);
    expect([a.opened, b.opened].filter(Boolean)).toHaveLength(1);
    const again = await store.join(g, 'm1', '{"n":1}', opts(1001));
    expect(again).toMatchObject({ status: 'duplicate', seq: 1, state: 'open', opened: false });
  });

  it('a retried merge: maxItems closes at the join, the next member opens the next digest, and a join or close run twice changes nothing and returns the same items', async () => {
    const g = digestGroupId('r', 'b@x.test', '');
    const results = [];
    for (let i = 1; i <= 4; i++) results.push(await store.join(g, `m${i}`, `{"n":${i}}`, opts(2000 + i)));
    expect(results[2]).toMatchObject({ seq: 1, state: 'closed', closed: [{ seq: 1, reason: 'max_items' }] });
    expect(results[3]).toMatchObject({ seq: 2, opened: true });
    const first = await store.close(g, 1, 2100);
    const second = await store.close(g, 1, 2200);
    expect(first).toEqual(second);
    expect(first.state === 'closed' && first.digest.items).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(await store.flushed(g, 1, 2300)).toBe(true);
    expect(await store.flushed(g, 1, 2300)).toBe(false);
    expect(await store.close(g, 1, 2400)).toEqual({ state: 'flushed' });
    expect(await store.join(g, 'm2', '{"n":2}', opts(2500))).toMatchObject({ status: 'duplicate', seq: 1, state: 'flushed' });
  });

  it('a close before the close time is early; after it, the next member opens the next window', async () => {
    const g = digestGroupId('r', 'c@x.test', '');
    await store.join(g, 'm1', '{}', opts(5000));
    expect(await store.close(g, 1, 5500)).toEqual({ state: 'early', closeAt: 6000 });
    const late = await store.join(g, 'm2', '{}', opts(6000));
    expect(late).toMatchObject({ seq: 2, opened: true, closed: [{ seq: 1, reason: 'window' }] });
    expect(await store.openCount()).toBeGreaterThanOrEqual(1);
  });

  it('an item that would pass maxBytes closes the digest and opens the next', async () => {
    const g = digestGroupId('r', 'd@x.test', '');
    const big = JSON.stringify({ pad: 'x'.repeat(600) });
    await store.join(g, 'm1', big, { ...opts(7000), maxBytes: 1024 });
    const r = await store.join(g, 'm2', big, { ...opts(7001), maxBytes: 1024 });
    expect(r).toMatchObject({ seq: 2, closed: [{ seq: 1, reason: 'bytes' }] });
  });
});
