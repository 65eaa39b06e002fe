import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { CLAIMS_PER_CALL_MAX } from './claim-batch';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { LAYOUT_VERSION, UpgradeRequiredError } from './layout-version';
import { OperationStore } from './operation-store';

// Claims started together share one script call (claim-batch.ts), and each
// operation is still claimed on its own: these tests count the script calls
// Redis ran (INFO commandstats) and check every operation's own answer.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('cb', 4);
const retentionMs = 86_400_000;
/** A new operation key (hex, as the decision makes them; its leading digits pick the shard). */
const fresh = () => randomBytes(32).toString('hex');

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

beforeEach(async () => {
  await redis.flushall();
});

const ops = () => new OperationStore(redis, keys, { retentionMs });
const claimOf = (store: OperationStore, operationKey: string) =>
  store.claim({ operationKey, messageKey: 'm'.repeat(64), recipient: `${operationKey.slice(-4)}@example.com`, channel: 'email', owner: 'w', leaseMs: 30_000, job: { operationKey } });

async function scriptCalls(): Promise<number> {
  const info = (await redis.info('commandstats')) as string;
  return ['evalsha', 'eval'].reduce((sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0), 0);
}

describe('claims started together', () => {
  it('go in one script call, each with its own lock, fence and answer', async () => {
    const store = ops();
    const [sentKey, a, b] = [fresh(), fresh(), fresh()];
    // One operation already sent: its claim answers `duplicate` beside the others' `go`.
    const first = await claimOf(store, sentKey);
    if (first.kind !== 'go') throw new Error(`setup claim answered ${first.kind}`);
    await store.commit({ operationKey: sentKey, fence: first.fence, outcome: 'sent', messageKey: 'm'.repeat(64), recipient: 'r@example.com', channel: 'email', provider: 'p', externalId: 'x' });
    await redis.config('RESETSTAT');

    const answers = await Promise.all([claimOf(store, a), claimOf(store, sentKey), claimOf(store, b), claimOf(store, a)]);

    expect(await scriptCalls()).toBe(1);
    expect(answers.map((v) => v.kind)).toEqual(['go', 'ended', 'go', 'conflict']);
    expect(answers[1]).toMatchObject({ status: 'sent', endedNow: false });
    // The same operation twice in one call: the second finds the first's lock, as two calls would.
    for (const key of [a, b]) {
      expect(await redis.get(keys.lock(key))).toBe('1');
      expect(await redis.hget(keys.op(key), 'status')).toBe('sending');
    }
  });

  it('a claim alone goes in a call of its own, as before', async () => {
    const store = ops();
    await redis.config('RESETSTAT');
    for (let i = 0; i < 3; i++) expect((await claimOf(store, fresh())).kind).toBe('go');
    expect(await scriptCalls()).toBe(3);
  });

  it(`more than ${CLAIMS_PER_CALL_MAX} at once are split into calls of at most that many`, async () => {
    const store = ops();
    await redis.config('RESETSTAT');
    const answers = await Promise.all(Array.from({ length: CLAIMS_PER_CALL_MAX * 2 + 1 }, () => claimOf(store, fresh())));
    expect(answers.every((v) => v.kind === 'go')).toBe(true);
    expect(await scriptCalls()).toBe(3);
  });

  it('a shard of another layout refuses its own operations only', async () => {
    const store = ops();
    const refused = fresh();
    // Bounded: each try lands on another of the 4 shards with probability 3/4.
    let other = fresh();
    for (let i = 0; i < 200 && keys.layoutOf(other) === keys.layoutOf(refused); i++) other = fresh();
    await redis.set(keys.layoutOf(refused), String(LAYOUT_VERSION + 1));
    const [r, o] = await Promise.allSettled([claimOf(store, refused), claimOf(store, other)]);
    expect(r.status === 'rejected' && r.reason instanceof UpgradeRequiredError).toBe(true);
    expect(o).toMatchObject({ status: 'fulfilled', value: { kind: 'go' } });
    // Nothing was written for the refused operation.
    expect(await redis.exists(keys.op(refused), keys.lock(refused))).toBe(0);
  });

  it('a call Redis fails fails each of its claims, leaving what a claim that went unanswered leaves', async () => {
    const store = ops();
    const [a, broken] = [fresh(), fresh()];
    // A state key of the wrong type makes the script fail at the second operation.
    await redis.set(keys.op(broken), 'not a hash');
    const results = await Promise.allSettled([claimOf(store, a), claimOf(store, broken)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // The first operation was claimed before the failure: `sending` under a lock,
    // which the next claim after the lease and its settle time reconciles.
    expect(await redis.hget(keys.op(a), 'status')).toBe('sending');
    expect(await redis.pttl(keys.lock(a))).toBeGreaterThan(0);
  });
});
