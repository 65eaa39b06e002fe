import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { LAYOUT_VERSION, LayoutError, checkLayout } from './layout';

// The layout version kept in Redis, on a real Redis: a new Redis is stamped
// with ours on every shard, and a process refuses a shard that holds a layout
// it does not know, or an older one it has no migration from.
describe('checkLayout', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const keys = new KeyBuilder('lay', 4);

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  beforeEach(async () => {
    await redis.del(...keys.allLayouts());
  });

  it('stamps our version on every shard of a new Redis, and passes again', async () => {
    await checkLayout(redis, keys);
    expect(await Promise.all(keys.allLayouts().map((k) => redis.get(k)))).toEqual(Array.from({ length: 4 }, () => String(LAYOUT_VERSION)));
    await expect(checkLayout(redis, keys)).resolves.toBeUndefined();
  });

  it('refuses a shard written for a newer layout, and changes nothing', async () => {
    await checkLayout(redis, keys);
    await redis.set(keys.layout(2), String(LAYOUT_VERSION + 1));
    const refused = checkLayout(redis, keys);
    await expect(refused).rejects.toBeInstanceOf(LayoutError);
    await expect(refused).rejects.toMatchObject({ code: 'LAYOUT_UNKNOWN' });
    expect(await redis.get(keys.layout(2))).toBe(String(LAYOUT_VERSION + 1));
  });

  it('a refused process stamps no shard', async () => {
    await redis.set(keys.layout(1), String(LAYOUT_VERSION + 1));
    await expect(checkLayout(redis, keys)).rejects.toMatchObject({ code: 'LAYOUT_UNKNOWN' });
    expect(await Promise.all(keys.allLayouts().map((k) => redis.get(k)))).toEqual([null, String(LAYOUT_VERSION + 1), null, null]);
  });

  it('refuses a layout key that holds no version (never guesses)', async () => {
    await redis.set(keys.layout(0), 'v1');
    await expect(checkLayout(redis, keys)).rejects.toMatchObject({ code: 'LAYOUT_UNKNOWN', held: expect.arrayContaining(['v1']) });
  });

  it('a process of the next layout refuses an older one it has no migration from, and does not raise it', async () => {
    await checkLayout(redis, keys);
    await expect(checkLayout(redis, keys, LAYOUT_VERSION + 1)).rejects.toMatchObject({ code: 'LAYOUT_TOO_OLD' });
    expect(await redis.get(keys.layout(0))).toBe(String(LAYOUT_VERSION));
  });
});
