import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// What `ops show`, `messages show` and the dashboard read of a schedule and a
// cancel: the fields the scripts write (op-schedule, cancel-op,
// cancel-message), decoded by the reader, on a real Redis.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('t', 2);
const clock = 1_700_000_000_000;
const now = () => clock;
const retentionMs = 86_400_000;
let ops: OperationStore;
let messages: MessageStore;
let cancels: Cancellations;

const key = (n: number) => n.toString(16).padStart(64, 'c');
const messageKey = 'd'.repeat(64);
const job = (operationKey: string) => ({ operationKey, messageKey, recipient: 'a@example.com', channel: 'email' });

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  messages = new MessageStore(redis, keys, { retentionMs, now });
  cancels = new Cancellations(redis, keys, { retentionMs, now });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('the reader of scheduled and cancelled operations', () => {
  it('reads a scheduled operation with when it is due and why', async () => {
    expect(await ops.schedule(job(key(1)), clock + 60_000, 'send_at', 1_000)).toBe(true);
    const record = await ops.get(key(1));
    expect(record).toMatchObject({ status: 'scheduled', scheduledFor: clock + 60_000, scheduleReason: 'send_at', attempts: 0 });
    expect(record?.cancelledBy).toBeUndefined();
    expect(record?.cancelRequested).toBeUndefined();
  });

  it('reads a cancelled one with its reason and who cancelled, and no schedule left', async () => {
    await ops.schedule(job(key(2)), clock + 60_000, 'delay', 1_000);
    const done = await cancels.cancelOperation(job(key(2)), { by: 'cli:ops', reason: 'order withdrawn' });
    expect(done.outcome).toBe('cancelled');
    const record = await ops.get(key(2));
    expect(record).toMatchObject({ status: 'cancelled', cancelReason: 'order withdrawn', cancelledBy: 'cli:ops' });
    expect(record?.scheduledFor).toBeUndefined();
    expect(record?.scheduleReason).toBeUndefined();
    expect(record?.cancelRequested).toBeUndefined();
  });

  it('an empty reason reads as empty, not as absent, once somebody cancelled', async () => {
    await cancels.cancelOperation(job(key(3)), { by: 'shop', reason: '' });
    const record = await ops.get(key(3));
    expect(record).toMatchObject({ status: 'cancelled', cancelReason: '', cancelledBy: 'shop' });
  });

  it('reads a cancel asked for while an attempt holds the operation as cancelRequested', async () => {
    const claim = await ops.claim({ ...job(key(4)), owner: 'w1', leaseMs: 10_000 });
    expect(claim.kind).toBe('go');
    const done = await cancels.cancelOperation(job(key(4)), { by: 'dashboard:admin', reason: 'too late?' });
    expect(done.outcome).toBe('in_flight');
    const record = await ops.get(key(4));
    expect(record).toMatchObject({ status: 'sending', cancelRequested: clock, cancelReason: 'too late?', cancelledBy: 'dashboard:admin' });
  });

  it("reads a message's cancel tombstone: some recipients, then all", async () => {
    await cancels.cancelMessage(messageKey, ['b@example.com'], { by: 'cli:ops', reason: 'first' });
    expect((await messages.get(messageKey))?.cancelled).toEqual({ recipients: ['b@example.com'], at: clock, reason: 'first', by: 'cli:ops' });
    await cancels.cancelMessage(messageKey, undefined, { by: 'cli:other', reason: 'second' });
    // The first cancel's who and why stay; the recipients widen to all.
    expect((await messages.get(messageKey))?.cancelled).toEqual({ recipients: '*', at: clock, reason: 'first', by: 'cli:ops' });
  });
});
