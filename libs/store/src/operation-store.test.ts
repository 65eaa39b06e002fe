import { externalCode } from '@singleshot/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';
import { JournalReader } from './journal';
import { MessageStore } from './message-store';
import { checkRedisServer } from './redis-check';

let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('t', 4);
const clock = 1_700_000_000_000;
const now = () => clock;
let ops: OperationStore;
let journal: JournalReader;

const op = (n: number) => n.toString(16).padStart(64, 'a');
const base = (key: string) => ({
  operationKey: key,
  messageKey: 'm'.repeat(64),
  recipient: 'a@example.com',
  channel: 'email',
  owner: 'w1',
  leaseMs: 1000,
});

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 7 * 86_400_000, now });
  journal = new JournalReader(redis, keys);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('claim / commit / fence', () => {
  it('claims once; a second claim while the lock is held is a conflict', async () => {
    const first = await ops.claim(base(op(1)));
    expect(first).toMatchObject({ kind: 'go', fence: '1', previousStatus: 'pending', attempts: 1 });
    const second = await ops.claim({ ...base(op(1)), owner: 'w2' });
    expect(second.kind).toBe('conflict');
  });

  it('commits sent once; later claims report a duplicate and the journal has one sent entry', async () => {
    const claim = await ops.claim(base(op(2)));
    if (claim.kind !== 'go') throw new Error('expected claim');
    const commit = await ops.commit({
      operationKey: op(2),
      fence: claim.fence,
      outcome: 'sent',
      messageKey: 'm'.repeat(64),
      recipient: 'a@example.com',
      channel: 'email',
      provider: 'p1',
      externalId: 'ext-1',
      history: { at: clock, attempt: 1, fence: claim.fence, outcome: 'sent', provider: 'p1', externalId: 'ext-1' },
    });
    expect(commit.kind).toBe('ok');
    const again = await ops.claim(base(op(2)));
    expect(again).toEqual({ kind: 'ended', status: 'sent', endedNow: false, provider: 'p1', externalId: 'ext-1' });
    const record = await ops.get(op(2));
    expect(record).toMatchObject({ status: 'sent', externalId: 'ext-1', provider: 'p1' });
    const entries = await journal.forOperation(op(2), record!.journalIds);
    expect(entries.map((e) => e.type)).toEqual(['sent']);
    expect(await ops.history(op(2))).toHaveLength(1);
  });

  it('rejects a stale fence after the lease expired and another worker claimed', async () => {
    const a = await ops.claim({ ...base(op(3)), leaseMs: 50 });
    if (a.kind !== 'go') throw new Error('expected claim');
    // Let the real PX lease run out (Redis time, not the injected clock).
    await new Promise((r) => setTimeout(r, 120));
    expect(await ops.extend(op(3), a.fence, 1000)).toBe(true); // nobody claimed since: re-taken
    await new Promise((r) => setTimeout(r, 1100));
    const b = await ops.claim({ ...base(op(3)), owner: 'w2' });
    expect(b).toMatchObject({ kind: 'go', fence: '2', previousStatus: 'sending' });
    expect(await ops.extend(op(3), a.fence, 1000)).toBe(false);
    const stale = await ops.commit({
      operationKey: op(3), fence: a.fence, outcome: 'sent', messageKey: 'm', recipient: 'r', channel: 'c', externalId: 'x',
    });
    expect(stale).toEqual({ kind: 'stale', currentFence: '2' });
    const ok = await ops.commit({
      operationKey: op(3), fence: '2', outcome: 'sent', messageKey: 'm', recipient: 'r', channel: 'c', externalId: 'y',
    });
    expect(ok.kind).toBe('ok');
    expect((await ops.get(op(3)))?.externalId).toBe('y');
  });

  it('accepts a commit after the lease expired when no later claim exists', async () => {
    const a = await ops.claim({ ...base(op(4)), leaseMs: 30 });
    if (a.kind !== 'go') throw new Error('expected claim');
    await new Promise((r) => setTimeout(r, 80));
    const commit = await ops.commit({
      operationKey: op(4), fence: a.fence, outcome: 'in_doubt', messageKey: 'm', recipient: 'r', channel: 'c',
      error: { code: externalCode('ECONNRESET'), message: 'socket hang up' },
    });
    expect(commit.kind).toBe('ok');
    const next = await ops.claim(base(op(4)));
    expect(next).toMatchObject({ kind: 'go', previousStatus: 'in_doubt', attempts: 2 });
  });

  it('dead and suppressed are terminal for claims', async () => {
    const a = await ops.claim(base(op(5)));
    if (a.kind !== 'go') throw new Error('expected claim');
    await ops.commit({ operationKey: op(5), fence: a.fence, outcome: 'dead', messageKey: 'm', recipient: 'r', channel: 'c', reason: 'permanent' });
    expect(await ops.claim(base(op(5)))).toEqual({ kind: 'ended', status: 'dead', endedNow: false });
  });

  it('lets exactly one of 50 concurrent claimers through', async () => {
    const connections = Array.from({ length: 5 }, () => createRedis({ url: server.url, role: 'client' }));
    const stores = connections.map((c) => new OperationStore(c, keys, { retentionMs: 60_000 }));
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 5]!.claim({ ...base(op(6)), owner: `w${i}` })),
    );
    expect(results.filter((r) => r.kind === 'go')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'conflict')).toHaveLength(49);
    connections.forEach((c) => c.disconnect());
  });
});

describe('message records', () => {
  it('counts arrivals and lets exactly one caller mark the message queued', async () => {
    const messages = new MessageStore(redis, keys, { retentionMs: 60_000 });
    const key = 'b'.repeat(64);
    const arrivals = await Promise.all(Array.from({ length: 20 }, () => messages.arrive(key, 'api')));
    expect(arrivals.filter((a) => a.first)).toHaveLength(1);
    const marks = await Promise.all(Array.from({ length: 20 }, () => messages.markQueued(key)));
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect((await messages.arrive(key, 'imap')).queued).toBe(true);
    const record = await messages.get(key);
    expect(record).toMatchObject({ arrivals: 21, via: { api: 20, imap: 1 } });
    expect(await messages.markDecided(key, [op(2001), op(2002)])).toBe(true);
    expect(await messages.markDecided(key, [op(2002), op(2003)])).toBe(false);
    // A second decision adds its operations to the first's, never replaces them.
    expect((await messages.get(key))?.operations).toEqual([op(2001), op(2002), op(2003)]);
    expect((await messages.get(key))?.via).toEqual({ api: 20, imap: 1 });
  });
});

describe('redis check', () => {
  it('finds the test server healthy and flags an evicting policy', async () => {
    expect((await checkRedisServer(redis as Redis)).problems).toEqual([]);
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const { problems } = await checkRedisServer(redis as Redis);
    expect(problems.join('\n')).toMatch(/noeviction/);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
  });
});

describe('commit idempotency', () => {
  // ioredis re-sends commands left unanswered when Redis died; a commit applied
  // just before the crash must not journal twice when it arrives again.
  it('a repeated sent commit with the same fence is a no-op', async () => {
    const claim = await ops.claim(base(op(7)));
    if (claim.kind !== 'go') throw new Error('expected claim');
    const input = { operationKey: op(7), fence: claim.fence, outcome: 'sent' as const, messageKey: 'm', recipient: 'r', channel: 'c', externalId: 'e1' };
    expect((await ops.commit(input)).kind).toBe('ok');
    expect(await ops.commit(input)).toEqual({ kind: 'ok', journalId: '' });
    expect(await ops.commit({ ...input, outcome: 'dead', reason: 'x' })).toEqual({ kind: 'ok', journalId: '' });
    const record = await ops.get(op(7));
    expect(record).toMatchObject({ status: 'sent', externalId: 'e1' });
    expect(record?.journalIds).toHaveLength(1);
  });
});

describe('times through the packed script options', () => {
  it('ms timestamps arrive in the hash, the index and the journal as exact integers', async () => {
    const key = op(900);
    const claim = await ops.claim(base(key));
    if (claim.kind !== 'go') throw new Error('expected claim');
    await ops.commit({ ...base(key), fence: claim.fence, outcome: 'failed', error: { code: 'HTTP_503', message: 'busy' }, nextAttemptAt: clock + 12_345 });
    const claim2 = await ops.claim(base(key));
    if (claim2.kind !== 'go') throw new Error('expected claim');
    // A claim writes no claim time of its own (it is the claim's updatedAt).
    expect(await redis.hget(keys.op(key), 'claimedAt')).toBeNull();
    const done = await ops.commit({ ...base(key), fence: claim2.fence, outcome: 'sent', provider: 'p1', externalId: 'x-1' });
    if (done.kind !== 'ok') throw new Error('expected ok');
    const h = await redis.hgetall(keys.op(key));
    expect([h.createdAt, h.updatedAt]).toEqual([String(clock), String(clock)]);
    // A terminal operation keeps no lease, owner or claim time, and its send time is its update time.
    expect([h.leaseUntil, h.owner, h.claimedAt, h.sentAt]).toEqual([undefined, undefined, undefined, undefined]);
    expect((await ops.get(key))?.sentAt).toBe(clock);
    expect([h.lastErrorCode, h.provider, h.externalId]).toEqual(['HTTP_503', 'p1', 'x-1']);
    expect((await ops.get(key))?.lastError).toBe('busy');
    const [entry] = await journal.forOperation(key, [done.journalId]);
    expect(entry?.fields).toMatchObject({ type: 'sent', ts: String(clock), fence: claim2.fence, provider: 'p1', extId: 'x-1', err: '' });
  });
});
