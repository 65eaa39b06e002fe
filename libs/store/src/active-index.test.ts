import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';
import { ActiveIndex } from './active-index';
import { JournalReader } from './journal';
import { listSuppressed, replayOperationState } from './operation-replay';

// The sweeper index kept by claim/commit/replay, and the replay script, on a real Redis.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('ix', 4);
let clock = 1_700_000_000_000;
const now = () => clock;
let ops: OperationStore;
let index: ActiveIndex;
const retentionMs = 7 * 86_400_000;

let n = 0;
const fresh = () => (++n).toString(16).padStart(8, '0') + 'c'.repeat(56);
const job = (key: string) => deliverJob(key, { operationKey: key, messageKey: 'd'.repeat(64), recipient: 'a@example.com', firstArrivalAt: 1 });
const claimInput = (key: string) => ({ operationKey: key, messageKey: 'd'.repeat(64), recipient: 'a@example.com', channel: 'webhook', owner: 'w', leaseMs: 5000, job: job(key) });
const commitBase = (key: string, fence: string) => ({ operationKey: key, fence, messageKey: 'd'.repeat(64), recipient: 'a@example.com', channel: 'webhook' });
const score = (key: string) => redis.zscore(keys.activeIndexOf(key), key);

async function claimed(key: string): Promise<string> {
  const claim = await ops.claim(claimInput(key));
  if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
  return claim.fence;
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  index = new ActiveIndex(redis, keys);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('active index (maintained by the claim and commit scripts)', () => {
  it('a claim enters the operation due at the end of its lease, and keeps the deliver job', async () => {
    const key = fresh();
    await claimed(key);
    expect(Number(await score(key))).toBe(clock + 5000);
    expect(await ops.storedJob(key)).toEqual(job(key));
    expect((await ops.probe([key]))[0]).toMatchObject({ status: 'sending', job: job(key) });
  });

  it('failed stays with its retry time, in_doubt with a negative score, terminal outcomes leave', async () => {
    const failed = fresh();
    await ops.commit({ ...commitBase(failed, await claimed(failed)), outcome: 'failed', nextAttemptAt: clock + 700 });
    expect(Number(await score(failed))).toBe(clock + 700);

    const doubt = fresh();
    await ops.commit({ ...commitBase(doubt, await claimed(doubt)), outcome: 'in_doubt', nextAttemptAt: clock + 900 });
    expect(Number(await score(doubt))).toBe(-(clock + 900));

    for (const outcome of ['sent', 'dead', 'suppressed'] as const) {
      const key = fresh();
      await ops.commit({ ...commitBase(key, await claimed(key)), outcome, externalId: 'x', reason: 'r' });
      expect(await score(key), outcome).toBeNull();
    }
  });

  it('counts in-doubt operations by the sign, over every shard', async () => {
    const before = await index.inDoubtCount();
    const keysInDoubt = [fresh(), fresh(), fresh()];
    for (const key of keysInDoubt) await ops.commit({ ...commitBase(key, await claimed(key)), outcome: 'in_doubt' });
    expect(await index.inDoubtCount()).toBe(before + 3);
    // Reclaimed for reconciliation: `sending` again, no longer counted as in doubt.
    await claimed(keysInDoubt[0] as string);
    expect(await index.inDoubtCount()).toBe(before + 2);
  });

  it('lists what is overdue, in doubt or not, and touch keeps the sign', async () => {
    clock += 10_000_000;
    const late = fresh();
    const lateDoubt = fresh();
    const notYet = fresh();
    await ops.commit({ ...commitBase(late, await claimed(late)), outcome: 'failed', nextAttemptAt: clock - 500 });
    await ops.commit({ ...commitBase(lateDoubt, await claimed(lateDoubt)), outcome: 'in_doubt', nextAttemptAt: clock - 400 });
    await ops.commit({ ...commitBase(notYet, await claimed(notYet)), outcome: 'failed', nextAttemptAt: clock + 60_000 });
    const overdue = (await Promise.all([0, 1, 2, 3].map((s) => index.overdue(s, clock, 100)))).flat();
    const mine = overdue.filter((e) => [late, lateDoubt, notYet].includes(e.operationKey));
    expect(mine).toEqual(
      expect.arrayContaining([
        { operationKey: late, dueAt: clock - 500, inDoubt: false },
        { operationKey: lateDoubt, dueAt: clock - 400, inDoubt: true },
      ]),
    );
    expect(mine).toHaveLength(2);
    expect(await index.touch(lateDoubt, clock + 5)).toBe(true);
    expect(Number(await score(lateDoubt))).toBe(-(clock + 5));
    await index.remove(late);
    expect(await index.touch(late, clock)).toBe(false);
    expect(await score(late)).toBeNull();
  });
});

describe('replay state script', () => {
  const who = { by: 'alice', via: 'cli' };

  it('moves a dead operation back to pending with a fresh budget, journals who, and re-enters the index', async () => {
    const key = fresh();
    const fence = await claimed(key);
    await ops.commit({ ...commitBase(key, fence), outcome: 'dead', reason: 'permanent', error: { code: 'HTTP_422', message: 'no' } });
    const result = await replayOperationState(redis, keys, { operationKey: key, ...who }, { retentionMs, now });
    expect(result).toMatchObject({ kind: 'replayed', from: 'dead', replays: 1 });
    const record = await ops.get(key);
    expect(record).toMatchObject({ status: 'pending', attempts: 0, fence, replays: 1, replayedBy: 'alice' });
    expect(record?.reason).toBeUndefined();
    expect(Number(await score(key))).toBe(clock);
    const entries = await new JournalReader(redis, keys).forOperation(key, record?.journalIds ?? []);
    expect(entries.map((e) => e.type)).toEqual(['dead', 'replayed']);
    expect(entries[1]?.fields).toMatchObject({ by: 'alice', via: 'cli', from: 'dead', reason: 'permanent' });
    expect((await ops.history(key)).at(-1)).toMatchObject({ step: 'replay', outcome: 'replayed', by: 'alice', via: 'cli' });
    // The next claim starts at attempt 1 with a higher fence: an old holder can never commit.
    expect(await ops.claim(claimInput(key))).toMatchObject({ kind: 'go', attempts: 1, previousStatus: 'pending', fence: String(Number(fence) + 1), limitBypass: false });
  });

  it('a replayed suppression passes the limit once and leaves the suppressed list', async () => {
    const key = fresh();
    await ops.commit({ ...commitBase(key, await claimed(key)), outcome: 'suppressed', reason: 'rate_limit' });
    expect((await listSuppressed(redis, keys, { retentionMs, now })).map((e) => e.operationKey)).toContain(key);
    expect(await replayOperationState(redis, keys, { operationKey: key, ...who }, { retentionMs, now })).toMatchObject({ kind: 'replayed', from: 'suppressed' });
    expect((await listSuppressed(redis, keys, { retentionMs, now })).map((e) => e.operationKey)).not.toContain(key);
    expect(await ops.claim(claimInput(key))).toMatchObject({ kind: 'go', limitBypass: true });
  });

  it('refuses a sent operation ("already sent"), one in progress, and an unknown one, changing nothing', async () => {
    const sent = fresh();
    await ops.commit({ ...commitBase(sent, await claimed(sent)), outcome: 'sent', provider: 'p', externalId: 'ext-9' });
    const before = await redis.hgetall(keys.op(sent));
    expect(await replayOperationState(redis, keys, { operationKey: sent, ...who }, { retentionMs, now })).toEqual({ kind: 'already_sent', provider: 'p', externalId: 'ext-9' });
    expect(await redis.hgetall(keys.op(sent))).toEqual(before);

    const busy = fresh();
    await claimed(busy);
    expect(await replayOperationState(redis, keys, { operationKey: busy, ...who }, { retentionMs, now })).toEqual({ kind: 'not_replayable', status: 'sending' });
    expect(await replayOperationState(redis, keys, { operationKey: fresh(), ...who }, { retentionMs, now })).toEqual({ kind: 'not_found' });
  });
});
