import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedbackEvent } from '@singleshot/core';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis, type RedisClient } from './connection';
import { FeedbackStore } from './feedback-store';
import { JournalReader } from './journal';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';

// An operation's journal, as `ops show` and the admin API read it, holds the
// entries of its delivery feedback too: feedback-record.lua keeps their ids
// in the feedback record, not in the operation's state.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('t', 4);
const retentionMs = 7 * 86_400_000;
let ops: OperationStore;
let feedback: FeedbackStore;
let journal: JournalReader;

const op = (n: number) => n.toString(16).padStart(64, 'b');
const base = (key: string) => ({ operationKey: key, messageKey: 'm'.repeat(64), recipient: 'a@example.com', channel: 'email' });
const event = (eventId: string, type: 'delivered' | 'bounced', hard = false): FeedbackEvent => ({
  source: 'postmark',
  eventId,
  recipient: 'a@example.com',
  providerType: type === 'bounced' ? 'HardBounce' : 'Delivery',
  verdict: { type, hard, suppress: hard },
});

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs });
  feedback = new FeedbackStore(redis, keys, { retentionMs });
  journal = new JournalReader(redis, keys);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.destroy();
});

describe('JournalReader.forOperation', () => {
  it('lists the operation feedback entries with those its state remembers, oldest first', async () => {
    const key = op(1);
    const claim = await ops.claim({ ...base(key), owner: 'w1', leaseMs: 60_000 });
    if (claim.kind !== 'go') throw new Error(`claim: ${claim.kind}`);
    await ops.commit({ ...base(key), fence: claim.fence, outcome: 'sent', provider: 'pm', externalId: 'x-1' });
    expect((await feedback.record(key, event('Delivery:1', 'delivered'))).result).toBe('recorded');
    expect((await feedback.record(key, event('Bounce:2', 'bounced', true))).result).toBe('recorded');
    expect((await feedback.record(key, event('Bounce:2', 'bounced', true))).result).toBe('duplicate');

    const record = await ops.get(key);
    const entries = await journal.forOperation(key, record?.journalIds ?? []);
    expect(entries.map((e) => [e.type, e.fields.extId])).toEqual([
      ['sent', 'x-1'],
      ['feedback', 'Delivery:1'],
      ['feedback', 'Bounce:2'],
    ]);
    expect(entries.filter((e) => e.type === 'feedback').map((e) => e.fields.reason)).toEqual(['delivered', 'bounced']);
    // The same entries the whole journal holds for it, and the ones its feedback record names.
    const tail = (await journal.tail(100)).filter((e) => e.fields.op === key);
    expect(entries).toEqual(tail);
    expect(entries.filter((e) => e.type === 'feedback').map((e) => e.id)).toEqual((await feedback.read(key))?.events.map((e) => e.journalId));
  });

  it('finds them for an operation whose state remembers no entry yet', async () => {
    const key = op(2);
    const claim = await ops.claim({ ...base(key), owner: 'w1', leaseMs: 60_000 });
    if (claim.kind !== 'go') throw new Error(`claim: ${claim.kind}`);
    expect((await ops.get(key))?.journalIds).toEqual([]);
    expect((await feedback.record(key, event('Delivery:3', 'delivered'))).result).toBe('recorded');
    expect((await journal.forOperation(key, [])).map((e) => [e.type, e.fields.op, e.fields.extId])).toEqual([['feedback', key, 'Delivery:3']]);
  });
});
