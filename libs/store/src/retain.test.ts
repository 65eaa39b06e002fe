import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// include/retain.lua: a record's expiry is written once for writes that come
// close together, and never falls short of the retention past the last write
// (docs/protocol.md invariant 8). PEXPIRETIME reads the absolute expiry, so an
// unchanged value means no PEXPIRE was run (nor appended to the AOF).
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('rt', 4);
const retentionMs = 7 * 86_400_000;
const slackMs = 3_600_000; // 1% of 7 days is more than an hour: the hour caps it
const key = (n: number) => n.toString(16).padStart(64, 'c');

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

const expiry = async (k: string) => Number(await redis.call('PEXPIRETIME', k));

describe('retained records: one expiry for writes close together, never less than the retention', () => {
  it('a message: the first arrival sets retention + slack; later arrivals and the decision leave it', async () => {
    const messages = new MessageStore(redis, keys, { retentionMs });
    const m = key(1);
    const before = Date.now();
    await messages.arrive(m, 'api');
    const set = await expiry(keys.message(m));
    expect(set).toBeGreaterThanOrEqual(before + retentionMs + slackMs);
    expect(set).toBeLessThanOrEqual(Date.now() + retentionMs + slackMs);
    await messages.arrive(m, 'imap');
    await messages.markDecided(m, [key(2)]);
    expect(await expiry(keys.message(m))).toBe(set);
  });

  it('a message whose expiry fell short of the retention is pushed out again at its next arrival', async () => {
    const messages = new MessageStore(redis, keys, { retentionMs });
    const m = key(3);
    await messages.arrive(m, 'api');
    // As if the last write were more than the slack ago.
    await redis.pexpire(keys.message(m), retentionMs - 60_000);
    const before = Date.now();
    await messages.arrive(m, 'api');
    expect(await expiry(keys.message(m))).toBeGreaterThanOrEqual(before + retentionMs);
  });

  it('an operation: the commit right after its claim leaves the claim\'s expiry, which outlasts the commit by the retention', async () => {
    const ops = new OperationStore(redis, keys, { retentionMs });
    const k = key(4);
    const claim = await ops.claim({ operationKey: k, messageKey: key(5), recipient: 'a@example.com', channel: 'email', owner: 'w1', leaseMs: 1000 });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    const claimed = await expiry(keys.op(k));
    await ops.commit({ operationKey: k, fence: claim.fence, outcome: 'sent', messageKey: key(5), recipient: 'a@example.com', channel: 'email', provider: 'p', externalId: 'x', history: { at: Date.now(), attempt: 1, fence: claim.fence, outcome: 'sent', provider: 'p', externalId: 'x' } });
    const committedAt = Date.now();
    expect(await expiry(keys.op(k))).toBe(claimed);
    expect(claimed).toBeGreaterThanOrEqual(committedAt + retentionMs);
    expect(await expiry(keys.history(k))).toBeGreaterThanOrEqual(committedAt + retentionMs);
  });

  // The writes that create a key set its expiry without reading it first
  // (retainNew); these cases are the ones where a key was not new after all,
  // or where a key is left without anything to keep.
  const target = { messageKey: key(9), recipient: 'b@example.com', channel: 'email' };
  const attempt = (fence: string, outcome: 'sent' | 'failed') => ({ at: Date.now(), attempt: 1, fence, outcome });

  it('a first claim stores its job with an expiry, and a sent commit leaves no data hash behind', async () => {
    const ops = new OperationStore(redis, keys, { retentionMs });
    const k = key(10);
    const before = Date.now();
    const claim = await ops.claim({ operationKey: k, ...target, owner: 'w1', leaseMs: 1000, job: { operationKey: k } });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    expect(await expiry(keys.opData(k))).toBeGreaterThanOrEqual(before + retentionMs + slackMs);
    expect(await expiry(keys.op(k))).toBeGreaterThanOrEqual(before + retentionMs + slackMs);
    await ops.commit({ operationKey: k, fence: claim.fence, outcome: 'sent', ...target, provider: 'p', externalId: 'x', history: attempt(claim.fence, 'sent') });
    expect(await redis.exists(keys.opData(k))).toBe(0);
  });

  it('a scheduled operation keeps the longer expiry of its schedule through its claim', async () => {
    // Its own clock: the claim comes once the operation is due, without waiting for it.
    let clock = Date.now();
    const ops = new OperationStore(redis, keys, { retentionMs, now: () => clock });
    const k = key(11);
    const dueAt = clock + 50;
    expect(await ops.schedule({ operationKey: k, ...target }, dueAt, 'send_at', 60_000)).toBe(true);
    // As if it had been scheduled a day ahead: the schedule's expiry is past the claim's.
    const far = Date.now() + 2 * retentionMs;
    await redis.pexpireat(keys.op(k), far);
    await redis.pexpireat(keys.opData(k), far);
    clock = dueAt + 1;
    const claim = await ops.claim({ operationKey: k, ...target, owner: 'w1', leaseMs: 1000, job: { operationKey: k } });
    if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
    expect(await expiry(keys.op(k))).toBe(far);
    expect(await expiry(keys.opData(k))).toBe(far);
  });

  it('an operation sent after a failed attempt keeps its last error, and its history, the retention past the send', async () => {
    const ops = new OperationStore(redis, keys, { retentionMs });
    const k = key(12);
    const first = await ops.claim({ operationKey: k, ...target, owner: 'w1', leaseMs: 1000, job: { operationKey: k } });
    if (first.kind !== 'go') throw new Error('expected a claim');
    await ops.commit({ operationKey: k, fence: first.fence, outcome: 'failed', ...target, error: { code: 'HTTP_503', message: 'took too long' }, history: attempt(first.fence, 'failed') });
    // As if the failure were long ago: data and history fell short of the retention.
    await redis.pexpire(keys.opData(k), 60_000);
    await redis.pexpire(keys.history(k), 60_000);
    const second = await ops.claim({ operationKey: k, ...target, owner: 'w1', leaseMs: 1000 });
    if (second.kind !== 'go') throw new Error('expected a claim');
    const before = Date.now();
    await ops.commit({ operationKey: k, fence: second.fence, outcome: 'sent', ...target, provider: 'p', externalId: 'x', history: attempt(second.fence, 'sent') });
    expect(await redis.hget(keys.opData(k), 'lastError')).toBe('took too long');
    expect(await expiry(keys.opData(k))).toBeGreaterThanOrEqual(before + retentionMs);
    expect(await redis.llen(keys.history(k))).toBe(2);
    expect(await expiry(keys.history(k))).toBeGreaterThanOrEqual(before + retentionMs);
  });
});
