import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { RateLimiter } from './rate-limiter';
import { RedisMutex } from './mutex';

let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('rl', 4);
let clock = 1_700_000_000_000;
let limiter: RateLimiter;
const op = (n: number) => n.toString(16).padStart(64, 'e');
const check = (recipient: string, n: number, extra: { force?: boolean; scope?: string } = {}) =>
  limiter.check({ scope: extra.scope ?? 'global', recipient, operationKey: op(n), max: 2, windowMs: 60_000, ...(extra.force ? { force: true } : {}) });

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  limiter = new RateLimiter(redis, keys, () => clock);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('RateLimiter (sliding window of operation keys)', () => {
  it('lets max operations through per window and stops the next, saying when a slot frees', async () => {
    expect(await check('a@example.com', 1)).toEqual({ allowed: true, count: 1, added: true });
    clock += 10_000;
    expect(await check('a@example.com', 2)).toEqual({ allowed: true, count: 2, added: true });
    expect(await check('a@example.com', 3)).toEqual({ allowed: false, count: 2, retryInMs: 50_000 });
  });

  it('counts an operation once, however often it asks (retries, reclaims)', async () => {
    expect(await check('a@example.com', 1)).toEqual({ allowed: true, count: 2, added: false });
    expect(await check('a@example.com', 2)).toEqual({ allowed: true, count: 2, added: false });
  });

  it('slides: a slot frees when the oldest entry leaves the window', async () => {
    clock += 50_000;
    expect(await check('a@example.com', 3)).toEqual({ allowed: true, count: 2, added: true });
  });

  it('recipients compare case-insensitively for addresses; scopes are separate windows', async () => {
    expect(await check('B@Example.com', 10)).toMatchObject({ allowed: true, count: 1 });
    expect(await check('b@example.com', 11)).toMatchObject({ allowed: true, count: 2 });
    expect(await check('b@example.com', 12)).toMatchObject({ allowed: false });
    expect(await check('b@example.com', 12, { scope: 'route:orders' })).toMatchObject({ allowed: true, count: 1 });
  });

  it('force counts an operation over the limit (a replay that bypasses it once)', async () => {
    expect(await check('b@example.com', 13, { force: true })).toEqual({ allowed: true, count: 3, added: true });
    expect(await check('b@example.com', 14)).toMatchObject({ allowed: false, count: 3 });
  });

  it('release gives a slot back', async () => {
    await limiter.release('global', 'B@example.com', op(13));
    await limiter.release('global', 'b@example.com', op(11));
    expect(await check('b@example.com', 14)).toMatchObject({ allowed: true, count: 2 });
  });

  it('is atomic: of 20 concurrent different operations exactly max get through', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => check('c@example.com', 100 + i)));
    expect(results.filter((r) => r.allowed)).toHaveLength(2);
  });
});

describe('RedisMutex', () => {
  it('one holder at a time; the holder renews; release only by the owner; free again after the lease', async () => {
    const a = new RedisMutex(redis, keys.sweeperLock(), 'a');
    const b = new RedisMutex(redis, keys.sweeperLock(), 'b');
    expect(await a.acquire(300)).toBe(true);
    expect(await b.acquire(300)).toBe(false);
    expect(await a.acquire(300)).toBe(true);
    expect(await b.release()).toBe(false);
    expect(await b.acquire(300)).toBe(false);
    // The holder dies without releasing: the lease frees it.
    for (let i = 0; i < 100 && !(await b.acquire(300)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await redis.get(keys.sweeperLock())).toBe('b');
    expect(await a.acquire(300)).toBe(false);
    expect(await b.release()).toBe(true);
    expect(await a.acquire(300)).toBe(true);
  });
});
