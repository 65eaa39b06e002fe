import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { JournalReader } from './journal';
import { KeyBuilder } from './keys';
import { replayOperationState } from './operation-replay';
import { OperationStore } from './operation-store';
import { RateLimiter, type LimitScope } from './rate-limiter';

// The per-recipient limits as an input of the claim: the windows are read
// before it (`RateLimiter.admit`), the claim answers them (claim.lua), and the
// slots are squared with its verdict (`RateLimiter.settle`), the way delivery
// runs the three, on a real Redis.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('cl', 2);
const clock = 1_700_000_000_000;
const now = () => clock;
const retentionMs = 86_400_000;
let ops: OperationStore;
let limiter: RateLimiter;
let cancels: Cancellations;
let n = 0;
type Op = { operationKey: string; messageKey: string; recipient: string; channel: string };
const op = (recipient: string): Op => ({ operationKey: (++n).toString(16).padStart(64, 'c'), messageKey: 'm'.repeat(64), recipient, channel: 'email' });
const GLOBAL: LimitScope[] = [{ scope: 'global', max: 1, windowMs: 3_600_000 }];
const window = (recipient: string, scope = 'global') => redis.zrange(keys.rateLimit(scope, recipient), 0, -1);

/** Admit, claim, settle: what delivery does for an operation with limits. */
async function claimWithin(o: Op, scopes = GLOBAL) {
  const admission = await limiter.admit(o.recipient, o.operationKey, scopes);
  const verdict = await ops.claim({ ...o, owner: 'w', leaseMs: 30_000, job: { operationKey: o.operationKey }, ...(admission.over ? { limit: admission.over } : {}) });
  await limiter.settle(admission, verdict);
  return { admission, verdict };
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  limiter = new RateLimiter(redis, keys, now);
  cancels = new Cancellations(redis, keys, { retentionMs, now });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('the claim given a limit', () => {
  it('over the limit on the first claim: ended suppressed (rate_limit) with no lock, journaled, with its history record and job; no slot taken', async () => {
    const recipient = 'full@example.test';
    const first = op(recipient);
    expect((await claimWithin(first)).verdict).toMatchObject({ kind: 'go', attempts: 1 });
    const over = op(recipient);
    const { admission, verdict } = await claimWithin(over);
    expect(admission.over).toEqual({ scope: 'global', count: 1, max: 1, note: 'global: 1 of 1 per 3600s; a slot frees in 3600s' });
    expect(verdict).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'rate_limit' });
    expect(await redis.exists(keys.lock(over.operationKey))).toBe(0);
    const record = await ops.get(over.operationKey);
    expect(record).toMatchObject({ status: 'suppressed', reason: 'rate_limit', lastErrorCode: 'RATE_LIMIT', lastError: admission.over?.note, attempts: 0, fence: '0' });
    expect(await ops.storedJob(over.operationKey)).toEqual({ operationKey: over.operationKey });
    const entries = await new JournalReader(redis, keys).forOperation(over.operationKey, record?.journalIds ?? []);
    expect(entries.map((e) => [e.type, e.fields.reason, e.fields.err])).toEqual([['suppressed', 'rate_limit', 'RATE_LIMIT']]);
    expect(await ops.history(over.operationKey)).toEqual([
      expect.objectContaining({ step: 'rate_limit', outcome: 'suppressed', errorCode: 'RATE_LIMIT', error: admission.over?.note, attempt: 0, fence: '0' }),
    ]);
    expect(await window(recipient)).toEqual([first.operationKey]);
    // Claimed again (a redelivered job): it stays as it ended, nothing more written.
    expect((await claimWithin(over)).verdict).toEqual({ kind: 'ended', status: 'suppressed', endedNow: false });
    expect(await ops.history(over.operationKey)).toHaveLength(1);
  });

  it('a later claim is not limited: one that failed goes over a full window', async () => {
    const recipient = 'retry@example.test';
    const o = op(recipient);
    const { verdict } = await claimWithin(o);
    if (verdict.kind !== 'go') throw new Error('expected go');
    await ops.commit({ ...o, fence: verdict.fence, outcome: 'failed' });
    await redis.zadd(keys.rateLimit('global', recipient), clock, 'another-operation');
    await redis.zrem(keys.rateLimit('global', recipient), o.operationKey);
    expect((await claimWithin(o)).verdict).toMatchObject({ kind: 'go', attempts: 2, previousStatus: 'failed' });
  });

  it('a cancelled operation with limits on ends cancelled, and the slot read for it goes back', async () => {
    const recipient = 'cancel@example.test';
    const o = op(recipient);
    await cancels.cancelOperation(o, { by: 't', reason: 'test' });
    const { admission, verdict } = await claimWithin(o);
    expect(admission.over).toBeUndefined();
    expect(verdict).toMatchObject({ kind: 'ended', status: 'cancelled', endedNow: false });
    expect(await window(recipient)).toEqual([]);
    // The slot was free for the next one.
    expect((await claimWithin(op(recipient))).verdict).toMatchObject({ kind: 'go' });
  });

  it('over the limit and cancelled: the cancel comes first', async () => {
    const recipient = 'both@example.test';
    await claimWithin(op(recipient));
    const o = op(recipient);
    await cancels.cancelOperation(o, { by: 't', reason: 'test' });
    const { admission, verdict } = await claimWithin(o);
    expect(admission.over).toBeDefined();
    expect(verdict).toMatchObject({ kind: 'ended', status: 'cancelled' });
    expect((await ops.get(o.operationKey))?.reason).not.toBe('rate_limit');
  });

  it('a held operation waits over the limit, and gives its slot back', async () => {
    const recipient = 'held@example.test';
    const o = op(recipient);
    const admission = await limiter.admit(recipient, o.operationKey, GLOBAL);
    expect(admission.taken).toEqual(['global']);
    const verdict = await ops.claim({ ...o, owner: 'w', leaseMs: 30_000, hold: { reason: 'quiet_hours', untilMs: clock + 60_000 }, limit: { scope: 'global', count: 1, max: 1, note: 'n' } });
    expect(verdict).toMatchObject({ kind: 'wait', reason: 'quiet_hours' });
    await limiter.settle(admission, verdict);
    expect(await window(recipient)).toEqual([]);
    expect(await ops.get(o.operationKey)).toMatchObject({ status: 'pending' });
  });

  it('a replay with the bypass goes over the full window and takes its slot, in every scope; the limit holds for the next', async () => {
    const recipient = 'replay@example.test';
    const scopes: LimitScope[] = [{ scope: 'route:alerts', max: 5, windowMs: 3_600_000 }, ...GLOBAL];
    await claimWithin(op(recipient), scopes);
    const o = op(recipient);
    expect((await claimWithin(o, scopes)).verdict).toMatchObject({ kind: 'ended', status: 'suppressed', reason: 'rate_limit' });
    // The route let it through, the global window stopped it: the route's slot went back.
    expect(await window(recipient, 'route:alerts')).toHaveLength(1);
    await replayOperationState(redis, keys, { operationKey: o.operationKey, by: 'dana', via: 'test' }, { retentionMs, now });
    const { admission, verdict } = await claimWithin(o, scopes);
    expect(admission.over).toMatchObject({ scope: 'global' });
    expect(verdict).toMatchObject({ kind: 'go', limitBypass: true, attempts: 1 });
    expect(await redis.exists(keys.lock(o.operationKey))).toBe(1);
    expect(await window(recipient)).toContain(o.operationKey);
    expect(await window(recipient, 'route:alerts')).toContain(o.operationKey);
    expect((await claimWithin(op(recipient), scopes)).verdict).toMatchObject({ kind: 'ended', status: 'suppressed', reason: 'rate_limit' });
  });
});
