import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { RedisClient } from './connection';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { createRedis } from './connection';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// What a retained operation costs in Redis once its jobs are gone (the budget:
// at most 1.5 KiB), measured as MEMORY USAGE of the keys it leaves behind with a
// fixed payload: bytes, not time, so the budget is a plain upper bound. The
// encodings are pinned too: one value over 64 bytes turns a hash into a hash
// table (about three times the memory), which is what the budget rests on.

const BUDGET_BYTES = 1536;
const OPERATIONS = 64;
const retentionMs = 7 * 86_400_000;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('mb', 1);
let messages: MessageStore;
let ops: OperationStore;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  messages = new MessageStore(redis, keys, { retentionMs });
  ops = new OperationStore(redis, keys, { retentionMs });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

const usage = async (key: string) => Number((await redis.memory('USAGE', key, 'SAMPLES', 0)) ?? 0);

/** One event for two recipients, the way ingest, decision and delivery record it: every operation sent once. */
async function notify(event: number): Promise<{ messageKey: string; operationKeys: string[] }> {
  const messageKey = sha(`shop:order-${event}`);
  for (let i = 0; i < 3; i++) await messages.arrive(messageKey, 'api');
  await messages.markQueued(messageKey);
  const recipients = [`customer-${event}@example.com`, `sales-${event}@example.com`];
  const operationKeys = recipients.map((r) => sha(`${messageKey}:notify_owner:v1:${r}:email:v1`));
  await messages.recordDecision(messageKey, operationKeys.map((operationKey, i) => ({ operationKey, target: `email:${recipients[i]}` })));
  for (const [i, recipient] of recipients.entries()) {
    const operationKey = operationKeys[i] as string;
    const job = {
      operationKey,
      messageKey,
      route: 'orders',
      action: 'notify_owner:v1',
      recipient,
      channel: 'email',
      subject: `Order ${event} was created`,
      text: `Hello, order ${event} for 3 items (EUR 120.00) was created and will ship on Monday.`,
      data: { orderId: `order-${event}`, items: 3, total: '120.00' },
      firstArrivalAt: 1_700_000_000_000,
    };
    const claim = await ops.claim({ operationKey, messageKey, recipient, channel: 'email', owner: 'delivery-1:4242', leaseMs: 30_000, job });
    if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
    const externalId = `0a1b2c3d-${String(event).padStart(4, '0')}-4e5f-8a9b-0c1d2e3f4a5b`;
    const done = await ops.commit({
      operationKey,
      fence: claim.fence,
      outcome: 'sent',
      messageKey,
      recipient,
      channel: 'email',
      provider: 'postmark',
      externalId,
      history: { at: Date.now(), attempt: 1, fence: claim.fence, step: 'send', outcome: 'sent', provider: 'postmark', externalId, durationMs: 87 },
    });
    if (done.kind !== 'ok') throw new Error(`expected ok, got ${done.kind}`);
  }
  return { messageKey, operationKeys };
}

describe('memory per retained operation', () => {
  it(`a sent operation's keys take at most ${BUDGET_BYTES} bytes, its state and message record compactly encoded`, async () => {
    const events = Array.from({ length: OPERATIONS / 2 }, (_, i) => i);
    const done = [];
    for (const event of events) done.push(await notify(event));

    const parts = { state: 0, history: 0, message: 0, journal: 0 };
    for (const { messageKey, operationKeys } of done) {
      expect(await redis.object('ENCODING', keys.message(messageKey))).toBe('listpack');
      parts.message += await usage(keys.message(messageKey));
      for (const operationKey of operationKeys) {
        expect(await redis.object('ENCODING', keys.op(operationKey))).toBe('listpack');
        // The stored job served the sweeper and replays; a sent operation needs neither.
        expect(await redis.exists(keys.opData(operationKey), keys.lock(operationKey))).toBe(0);
        parts.state += await usage(keys.op(operationKey));
        parts.history += await usage(keys.history(operationKey));
      }
    }
    // Every operation's journal entry, in the one shard's stream.
    expect(await redis.xlen(keys.journal(0))).toBe(OPERATIONS);
    parts.journal += await usage(keys.journal(0));

    const perOperation = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, Math.round(v / OPERATIONS)]));
    const total = Object.values(parts).reduce((a, b) => a + b, 0) / OPERATIONS;
    expect(total, `bytes per operation: ${JSON.stringify(perOperation)}`).toBeLessThanOrEqual(BUDGET_BYTES);
    // Nothing was dropped to fit: the record still reads back whole.
    const [{ messageKey, operationKeys }] = done as [{ messageKey: string; operationKeys: string[] }];
    expect((await messages.get(messageKey))?.operations).toEqual([...operationKeys].sort());
    const record = await ops.get(operationKeys[0] as string);
    expect(record).toMatchObject({ status: 'sent', provider: 'postmark', attempts: 1, recipient: 'customer-0@example.com', channel: 'email', messageKey });
    expect(record?.journalIds).toHaveLength(1);
    expect(await ops.history(operationKeys[0] as string)).toHaveLength(1);
  });

  it('a long error text stays out of the state hash; a dead operation keeps its job for a replay', async () => {
    const messageKey = sha('shop:order-failing');
    const operationKey = sha(`${messageKey}:notify_owner:v1:x@example.com:email:v1`);
    const job = { operationKey, messageKey, recipient: 'x@example.com', channel: 'email', text: 'y'.repeat(500) };
    const base = { operationKey, messageKey, recipient: 'x@example.com', channel: 'email' };
    const first = await ops.claim({ ...base, owner: 'w', leaseMs: 30_000, job });
    if (first.kind !== 'go') throw new Error(`expected a claim, got ${first.kind}`);
    const error = { code: 'HTTP_503' as const, message: `upstream said: ${'busy '.repeat(60)}` };
    await ops.commit({ ...base, fence: first.fence, outcome: 'failed', error, provider: 'postmark' });
    expect(await redis.object('ENCODING', keys.op(operationKey))).toBe('listpack');
    expect((await ops.get(operationKey))?.lastError).toBe(error.message);
    expect((await ops.summaries([operationKey]))[0]?.lastError).toBe(error.message);

    const second = await ops.claim({ ...base, owner: 'w', leaseMs: 30_000, job });
    if (second.kind !== 'go') throw new Error(`expected a claim, got ${second.kind}`);
    await ops.commit({ ...base, fence: second.fence, outcome: 'dead', reason: 'permanent', error: { code: 'HTTP_422', message: 'invalid' } });
    expect(await redis.object('ENCODING', keys.op(operationKey))).toBe('listpack');
    expect(await ops.storedJob(operationKey)).toEqual(job);
    expect((await ops.get(operationKey))?.lastError).toBe('invalid');
  });
});
