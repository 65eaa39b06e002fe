import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from '../connection';
import { KeyBuilder } from '../keys';
import { checkLayout } from '../layout';
import { LAYOUT_VERSION, UpgradeRequiredError } from '../layout-version';
import { OperationStore } from '../operation-store';
import type { LayoutMigration } from './index';

// Numbered layout migrations on a real Redis, with a migration to the layout
// after ours that this code does not have yet (each shard's `up` rewrites a
// key of its own and counts its runs): the migration runs once per shard and
// stamps it; a process of the layout before refuses to start and its scripts
// refuse to act; a migration killed midway is finished by the next process;
// two processes migrating at once end in the same place; a missing step
// refuses.
describe('layout migrations', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const keys = new KeyBuilder('mig', 4);
  const next = LAYOUT_VERSION + 1;
  const runs: number[] = [];
  const mark = (shard: number) => `${keys.prefix}:{s${String(shard).padStart(2, '0')}}:migrated`;
  const toNext: LayoutMigration = {
    to: next,
    describe: 'test: a field every shard gets',
    up: async (r, _keys, shard) => {
      runs.push(shard);
      await r.set(mark(shard), String(next));
    },
  };
  const layouts = () => Promise.all(keys.allLayouts().map((k) => redis.get(k)));

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  beforeEach(async () => {
    runs.length = 0;
    await redis.flushall();
    await checkLayout(redis, keys);
  });

  it('up: each shard migrated once and stamped; the process of the layout before refuses to start and its scripts refuse to act', async () => {
    const seen: number[] = [];
    await checkLayout(redis, keys, { known: next, migrations: [toNext], onMigration: (m, shard) => seen.push(shard * 100 + m.to) });
    expect(await layouts()).toEqual(Array.from({ length: 4 }, () => String(next)));
    expect(runs.sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3].map((s) => s * 100 + next));
    expect(await Promise.all([0, 1, 2, 3].map((s) => redis.get(mark(s))))).toEqual(Array.from({ length: 4 }, () => String(next)));
    // Again: nothing left to do.
    await checkLayout(redis, keys, { known: next, migrations: [toNext] });
    expect(runs).toHaveLength(4);

    await expect(checkLayout(redis, keys)).rejects.toMatchObject({ code: 'LAYOUT_UNKNOWN' });
    const claim = new OperationStore(redis, keys, { retentionMs: 60_000 }).claim({ operationKey: 'a'.repeat(64), messageKey: 'm'.repeat(64), recipient: 'r@x.test', channel: 'email', owner: 'old', leaseMs: 1_000 });
    await expect(claim).rejects.toBeInstanceOf(UpgradeRequiredError);
  });

  it('a migration killed midway (the shard still marked) is run again by the next process and finished', async () => {
    await redis.set(keys.layout(2), `migrating:${next}`);
    // Every script refuses the mark, old and new alike: nothing writes a shard while it is rewritten.
    const inShard2 = ['b', 'c', 'd', 'e', 'f', '1', '2', '3'].map((c) => c.repeat(64)).find((k) => keys.layoutOf(k) === keys.layout(2)) as string;
    const claim = new OperationStore(redis, keys, { retentionMs: 60_000 }).claim({ operationKey: inShard2, messageKey: 'm'.repeat(64), recipient: 'r@x.test', channel: 'email', owner: 'any', leaseMs: 1_000 });
    await expect(claim).rejects.toMatchObject({ code: 'UPGRADE_REQUIRED', held: `migrating:${next}` });
    await expect(checkLayout(redis, keys)).rejects.toMatchObject({ code: 'LAYOUT_UNKNOWN' });
    await checkLayout(redis, keys, { known: next, migrations: [toNext] });
    expect(await layouts()).toEqual(Array.from({ length: 4 }, () => String(next)));
    expect(runs.sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
  });

  it('two processes migrating at once end in the same place, every shard stamped', async () => {
    await Promise.all([checkLayout(redis, keys, { known: next, migrations: [toNext] }), checkLayout(redis, keys, { known: next, migrations: [toNext] })]);
    expect(await layouts()).toEqual(Array.from({ length: 4 }, () => String(next)));
    for (const shard of [0, 1, 2, 3]) expect(runs.filter((s) => s === shard).length).toBeGreaterThanOrEqual(1);
  });

  it('a step without its migration refuses and writes nothing', async () => {
    await expect(checkLayout(redis, keys, { known: next + 1, migrations: [toNext] })).rejects.toMatchObject({ code: 'LAYOUT_TOO_OLD' });
    expect(await layouts()).toEqual(Array.from({ length: 4 }, () => String(LAYOUT_VERSION)));
    expect(runs).toEqual([]);
  });
});
