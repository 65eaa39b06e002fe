import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NoRedisError, redisAnswers, startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis';

// `npm start` with no reachable Redis starts one from PATH under ./.singleshot/redis
// with AOF on; with none on PATH it must say how to get one, not crash.
describe('embedded redis-server', () => {
  const dirs: string[] = [];
  let running: EmbeddedRedis | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('starts redis-server with its data and AOF under .singleshot/redis, and stops it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'singleshot-embedded-'));
    dirs.push(cwd);
    running = await startEmbeddedRedis(cwd);
    expect(running.dir).toBe(join(cwd, '.singleshot', 'redis'));
    expect(await redisAnswers(running.url)).toBe(true);
    const { Redis } = await import('ioredis');
    const client = new Redis(running.url);
    expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    client.disconnect();
    await running.stop();
    expect(await redisAnswers(running.url, 300)).toBe(false);
    expect(existsSync(join(running.dir, 'appendonlydir')) || existsSync(join(running.dir, 'appendonly.aof'))).toBe(true);
  });

  it('without redis-server on PATH, fails with a message saying how to get Redis', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const error = await startEmbeddedRedis(tmpdir()).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(NoRedisError);
      expect((error as Error).message).toMatch(/apt-get install redis-server/);
      expect((error as Error).message).toMatch(/REDIS_URL/);
    } finally {
      process.env.PATH = path;
    }
  });
});
