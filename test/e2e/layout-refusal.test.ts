import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, KeyBuilder, LAYOUT_VERSION, type RedisClient } from '@singleshot/store';
import { CLI_MAIN, REPO_ROOT, startTestRedis, writeConfigFile, type TestRedis } from '@singleshot/test-harness';

// A process refuses to start against a Redis whose layout it does not know
// (one shard written by a newer version): exit 2 with LAYOUT_UNKNOWN and the
// reason on one line, no stack trace, before any queue or store is used. Each
// kind of main is tried: an app with its own HTTP server, a worker app, and
// `singleshot start`.
describe('a process against a newer Redis layout', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const keys = new KeyBuilder('lr', 16);

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
    await redis.set(keys.layout(5), String(LAYOUT_VERSION + 1));
  });

  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  async function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const file = writeConfigFile({ redis: { url: server.url, keyPrefix: 'lr' }, ingest: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' } });
    try {
      const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, SINGLESHOT_CONFIG: file.file }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout.resume();
      const code = await new Promise<number | null>((r) => child.once('close', r));
      return { code, stderr };
    } finally {
      file.cleanup();
    }
  }

  it.each([
    ['the ingest app', ['dist/apps/ingest/main.js']],
    ['the delivery worker app', ['dist/apps/delivery/main.js']],
    ['singleshot start', [CLI_MAIN, 'start']],
  ])('%s exits 2 with LAYOUT_UNKNOWN and no stack trace', async (_name, args) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toContain('LAYOUT_UNKNOWN');
    expect(stderr).toContain(`holds layout ${LAYOUT_VERSION + 1}`);
    expect(stderr).not.toMatch(/^\s+at /m);
    // Nothing was written: the newer layout's stamp is the only key, as it was.
    expect(await redis.keys('*')).toEqual([keys.layout(5)]);
    expect(await redis.get(keys.layout(5))).toBe(String(LAYOUT_VERSION + 1));
  });
});
