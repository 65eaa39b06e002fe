import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { Cancellations } from './cancellations';
import { LayoutError, checkLayout } from './layout';
import { LAYOUT_VERSION, UpgradeRequiredError } from './layout-version';
import { replayOperationState } from './operation-replay';
import { OperationStore } from './operation-store';

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
    await expect(checkLayout(redis, keys, { known: LAYOUT_VERSION + 1 })).rejects.toMatchObject({ code: 'LAYOUT_TOO_OLD' });
    expect(await redis.get(keys.layout(0))).toBe(String(LAYOUT_VERSION));
  });
});

// Every script that changes an operation's state, on a shard stamped by a
// newer process: it answers upgrade_required (thrown as UpgradeRequiredError)
// and writes nothing, whatever the operation's state was.
describe('scripts on a shard of a newer layout', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const keys = new KeyBuilder('lu', 2);
  const retentionMs = 86_400_000;
  let ops: OperationStore;
  let n = 0;
  const op = () => ({ operationKey: `e${(++n).toString(16).padStart(63, '0')}`, messageKey: 'c'.repeat(64), recipient: `u${n}@example.com`, channel: 'email' });
  /** Every key of the prefix with its value's dump, to show nothing moved. */
  const snapshot = async () => Object.fromEntries(await Promise.all((await redis.keys('lu:*')).sort().map(async (k) => [k, await redis.dump(k)] as const)));

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
    ops = new OperationStore(redis, keys, { retentionMs });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.destroy();
  });

  it('claim, commit, cancel, schedule, wait and replay refuse and change nothing', async () => {
    const sending = op();
    const claim = await ops.claim({ ...sending, owner: 'w', leaseMs: 60_000 });
    if (claim.kind !== 'go') throw new Error(`setup claim answered ${claim.kind}`);
    const dead = op();
    const second = await ops.claim({ ...dead, owner: 'w', leaseMs: 60_000 });
    if (second.kind !== 'go') throw new Error(`setup claim answered ${second.kind}`);
    await ops.commit({ ...dead, fence: second.fence, outcome: 'dead', reason: 'permanent' });
    await redis.set(keys.layout(0), String(LAYOUT_VERSION + 1));
    await redis.set(keys.layout(1), String(LAYOUT_VERSION + 1));
    const before = await snapshot();
    const fresh = op();
    const steps: [string, () => Promise<unknown>][] = [
      ['claim', () => ops.claim({ ...fresh, owner: 'w', leaseMs: 60_000 })],
      ['commit', () => ops.commit({ ...sending, fence: claim.fence, outcome: 'sent', provider: 'p', externalId: 'x' })],
      ['cancel', () => new Cancellations(redis, keys, { retentionMs }).cancelOperation(fresh, { by: 't', reason: 'r' })],
      ['schedule', () => ops.schedule(fresh, Date.now() + 60_000, 'send_at', 1_000)],
      ['wait', () => ops.claim({ ...fresh, owner: 'w', leaseMs: 60_000, hold: { reason: 'quiet_hours', untilMs: Date.now() + 60_000 } })],
      ['document wait', () => ops.claim({ ...fresh, owner: 'w', leaseMs: 60_000, hold: { reason: 'document', untilMs: Date.now() + 60_000, waitingFor: 'document:x', waitingKey: 'd' } })],
      ['replay', () => replayOperationState(redis, keys, { operationKey: dead.operationKey, by: 't', via: 'test' }, { retentionMs })],
    ];
    for (const [name, step] of steps) {
      const refused = step();
      await expect(refused, name).rejects.toBeInstanceOf(UpgradeRequiredError);
      await expect(refused, name).rejects.toMatchObject({ code: 'UPGRADE_REQUIRED', held: String(LAYOUT_VERSION + 1) });
    }
    expect(await snapshot()).toEqual(before);
  });
});
