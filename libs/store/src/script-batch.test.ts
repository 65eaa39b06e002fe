import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { ITEMS_PER_CALL_MAX } from './script-batch';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { LAYOUT_VERSION, UpgradeRequiredError } from './layout-version';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';
import { refusalCode } from './refusal-backoff';

// Claims, commits, arrivals and decisions asked for together share one script call
// (script-batch.ts), and each operation is still acted on alone: these tests
// count the script calls Redis ran (INFO commandstats) and check every
// operation's own answer.
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

describe('claims, commits, arrivals and decisions asked for together', () => {
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

  it('commits asked for together go in one call, each with its own fence check and its own history', async () => {
    const store = ops();
    const [a, b, c] = [fresh(), fresh(), fresh()];
    const fences: string[] = [];
    for (const key of [a, b, c]) {
      const claim = await claimOf(store, key);
      if (claim.kind !== 'go') throw new Error(`setup claim answered ${claim.kind}`);
      fences.push(claim.fence);
    }
    await redis.config('RESETSTAT');
    const entry = (attempt: number, outcome: 'sent' | 'failed') => ({ at: 1, attempt, fence: '1', outcome, provider: 'p' });
    const commitOf = (operationKey: string, fence: string, history: ReturnType<typeof entry>[]) =>
      store.commit({ operationKey, fence, outcome: 'sent', messageKey: 'm'.repeat(64), recipient: 'r@example.com', channel: 'email', provider: 'p', externalId: `x-${operationKey.slice(0, 4)}`, history });

    // b's fence is not the one its claim took: stale, and nothing of it is written.
    const results = await Promise.all([commitOf(a, fences[0]!, [entry(1, 'failed'), entry(1, 'sent')]), commitOf(b, '7', [entry(1, 'sent')]), commitOf(c, fences[2]!, [])]);

    expect(await scriptCalls()).toBe(1);
    expect(results.map((r) => r.kind)).toEqual(['ok', 'stale', 'ok']);
    expect(await redis.lrange(keys.history(a), 0, -1)).toEqual([JSON.stringify(entry(1, 'failed')), JSON.stringify(entry(1, 'sent'))]);
    expect(await redis.exists(keys.history(b), keys.history(c))).toBe(0);
    expect(await redis.hmget(keys.op(a), 'status', 'externalId')).toEqual(['sent', `x-${a.slice(0, 4)}`]);
    expect(await redis.hget(keys.op(b), 'status')).toBe('sending');
    expect(await redis.hmget(keys.op(c), 'status', 'externalId')).toEqual(['sent', `x-${c.slice(0, 4)}`]);
  });

  it('arrivals, and decisions, recorded together go in one call each: copies count on, one of them first', async () => {
    const messages = new MessageStore(redis, keys, { retentionMs });
    const [m, other] = [fresh(), fresh()];
    await redis.config('RESETSTAT');
    const results = await Promise.all([messages.arrive(m, 'api'), messages.arrive(other, 'api'), messages.arrive(m, 'imap'), messages.arrive(m, 'api')]);
    expect(await scriptCalls()).toBe(1);
    expect(results.map((r) => [r.first, r.arrivals])).toEqual([
      [true, 1],
      [true, 1],
      [false, 2],
      [false, 3],
    ]);
    expect(await redis.hmget(keys.message(m), 'firstVia', 'via:api', 'via:imap')).toEqual(['api', '2', '1']);

    // Their decisions, one repeated (a redelivered decide job) and one of a message cancelled first.
    await redis.hset(keys.message(other), 'cancelRecipients', '*', 'cancelledBy', 'u', 'cancelReason', 'why');
    await redis.config('RESETSTAT');
    const op = (n: number) => [{ operationKey: n.toString(16).padStart(64, '0'), target: `email:r${n}@example.com` }];
    const decisions = await Promise.all([messages.recordDecision(m, op(1)), messages.recordDecision(other, op(2)), messages.recordDecision(m, op(1))]);
    expect(await scriptCalls()).toBe(1);
    expect(decisions).toEqual([{ first: true }, { first: true, cancelled: '*', cancelledBy: { by: 'u', reason: 'why' } }, { first: false }]);
  });

  it("a call reads each shard's layout stamp once, however many of its operations it carries", async () => {
    const store = ops();
    const batch = Array.from({ length: 12 }, () => fresh());
    await redis.config('RESETSTAT');
    const answers = await Promise.all(batch.map((key) => claimOf(store, key)));
    expect(answers.every((v) => v.kind === 'go')).toBe(true);
    const info = (await redis.info('commandstats')) as string;
    // The claim's one GET is the layout stamp's; 12 operations over 4 shards.
    expect(Number(/cmdstat_get:calls=(\d+)/.exec(info)?.[1])).toBe(new Set(batch.map((key) => keys.layoutOf(key))).size);
  });

  it('a claim alone goes in a call of its own, as before', async () => {
    const store = ops();
    await redis.config('RESETSTAT');
    for (let i = 0; i < 3; i++) expect((await claimOf(store, fresh())).kind).toBe('go');
    expect(await scriptCalls()).toBe(3);
  });

  it(`more than ${ITEMS_PER_CALL_MAX} at once are split into calls of at most that many`, async () => {
    const store = ops();
    await redis.config('RESETSTAT');
    const answers = await Promise.all(Array.from({ length: ITEMS_PER_CALL_MAX * 2 + 1 }, () => claimOf(store, fresh())));
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

  it('a Redis command that fails for one operation fails its claim only', async () => {
    const store = ops();
    const [a, broken, b] = [fresh(), fresh(), fresh()];
    // A state key of the wrong type makes the claim's HMGET fail for that operation.
    await redis.set(keys.op(broken), 'not a hash');
    await redis.config('RESETSTAT');
    const results = await Promise.allSettled([claimOf(store, a), claimOf(store, broken), claimOf(store, b)]);
    expect(await scriptCalls()).toBe(1);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.kind : (r.reason as { code?: string }).code))).toEqual(['go', 'SCRIPT_ITEM_FAILED', 'go']);
    expect(await redis.get(keys.op(broken))).toBe('not a hash');
  });

  it('Redis refusing writes fails the whole call, with its code first as Redis gave it', async () => {
    const store = ops();
    const messages = new MessageStore(redis, keys, { retentionMs });
    await redis.config('SET', 'maxmemory', '1');
    try {
      const results = await Promise.allSettled([claimOf(store, fresh()), claimOf(store, fresh()), messages.arrive(fresh(), 'api')]);
      // The process's backoff reads the code (refusal-backoff.ts): it must not be hidden behind a script's position.
      expect(results.map((r) => (r.status === 'rejected' ? refusalCode(r.reason) : r.status))).toEqual(['OOM', 'OOM', 'OOM']);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  });
});
