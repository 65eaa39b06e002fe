import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import type { RedisClient } from './connection';
import { createRedis } from './connection';
import { JournalReader } from './journal';
import { KeyBuilder } from './keys';
import { MessageStore } from './message-store';
import { OperationStore } from './operation-store';

// The cancel is the claim's compare-and-set seen from the other side: each
// case is one order of the two (or of a cancel and a decision), and what
// each side must find. The scripts are atomic, so running the two calls one
// after the other is every interleaving there is.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('c', 4);
let clock = 1_700_000_000_000;
const now = () => clock;
const retentionMs = 7 * 86_400_000;
let ops: OperationStore;
let messages: MessageStore;
let cancels: Cancellations;
let journal: JournalReader;

let n = 0;
const fresh = () => (++n).toString(16).padStart(64, 'c');
const who = { by: 'test', reason: 'order cancelled' };
const claimOf = (operationKey: string, messageKey: string) => ({ operationKey, messageKey, recipient: 'a@example.com', channel: 'email', owner: 'w1', leaseMs: 30_000 });
const commitOf = (operationKey: string, messageKey: string, fence: string) => ({ operationKey, messageKey, recipient: 'a@example.com', channel: 'email', fence });

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  messages = new MessageStore(redis, keys, { retentionMs, now });
  cancels = new Cancellations(redis, keys, { retentionMs, now });
  journal = new JournalReader(redis, keys);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

async function claimed(operationKey: string, messageKey: string) {
  const claim = await ops.claim(claimOf(operationKey, messageKey));
  if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
  return claim;
}

describe('cancel against claim and commit', () => {
  it('cancel first: the operation is cancelled and every later claim finds it terminal', async () => {
    const [op, msg] = [fresh(), fresh()];
    expect((await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: 'a@example.com', channel: 'email' }, who)).outcome).toBe('cancelled');
    expect(await ops.claim(claimOf(op, msg))).toEqual({ kind: 'ended', status: 'cancelled', endedNow: false });
    const again = await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: '', channel: '' }, who);
    expect(again).toEqual({ operationKey: op, recipient: 'a@example.com', channel: 'email', outcome: 'already_cancelled' });
    const record = await ops.get(op);
    expect((await journal.forOperation(op, record!.journalIds)).map((e) => e.type)).toEqual(['cancelled']);
  });

  it('claim first, then a cancel: in_flight; a failed attempt then ends cancelled, never retried', async () => {
    const [op, msg] = [fresh(), fresh()];
    const claim = await claimed(op, msg);
    expect((await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: '', channel: '' }, who)).outcome).toBe('in_flight');
    expect((await ops.commit({ ...commitOf(op, msg, claim.fence), outcome: 'failed', error: { code: 'HTTP_503', message: 'busy' } })).kind).toBe('ok');
    expect((await ops.get(op))?.status).toBe('cancelled');
    expect(await ops.claim(claimOf(op, msg))).toEqual({ kind: 'ended', status: 'cancelled', endedNow: false });
  });

  it('claim first, then a cancel: an attempt that got through stands (sent), and the cancel said in_flight', async () => {
    const [op, msg] = [fresh(), fresh()];
    const claim = await claimed(op, msg);
    expect((await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: '', channel: '' }, who)).outcome).toBe('in_flight');
    await ops.commit({ ...commitOf(op, msg, claim.fence), outcome: 'sent', provider: 'p', externalId: 'x' });
    expect((await ops.get(op))?.status).toBe('sent');
    expect((await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: '', channel: '' }, who)).outcome).toBe('already_sent');
  });

  it('a cancel during an in-doubt attempt: the next claim is told to reconcile and not send', async () => {
    const [op, msg] = [fresh(), fresh()];
    const claim = await claimed(op, msg);
    await ops.commit({ ...commitOf(op, msg, claim.fence), outcome: 'in_doubt', provider: 'p', error: { code: 'DEADLINE', message: 't' } });
    expect((await cancels.cancelOperation({ operationKey: op, messageKey: msg, recipient: '', channel: '' }, who)).outcome).toBe('in_flight');
    const next = await claimed(op, msg);
    expect(next).toMatchObject({ previousStatus: 'in_doubt', cancelRequested: true });
    await ops.commit({ ...commitOf(op, msg, next.fence), outcome: 'cancelled', reason: 'cancel_requested' });
    expect((await ops.get(op))?.status).toBe('cancelled');
  });

  it('a scheduled operation: an early job is put back without an attempt; a cancel ends it', async () => {
    const [op, msg] = [fresh(), fresh()];
    const job = { operationKey: op, messageKey: msg, recipient: 'a@example.com', channel: 'email' };
    expect(await ops.schedule(job, clock + 60_000, 'send_at', 60_000)).toBe(true);
    expect(await ops.schedule(job, clock + 90_000, 'send_at', 60_000)).toBe(false);
    expect(await ops.claim(claimOf(op, msg))).toEqual({ kind: 'wait', reason: 'scheduled', untilMs: clock + 60_000 });
    expect(await redis.zscore(keys.scheduledIndexOf(op), op)).toBe(String(clock + 60_000));
    expect((await cancels.cancelOperation(job, who)).outcome).toBe('cancelled');
    expect(await redis.zscore(keys.scheduledIndexOf(op), op)).toBeNull();
    expect((await ops.get(op))?.attempts).toBe(0);
  });

  it('a scheduled operation that is due is claimed as any other and leaves the scheduled index', async () => {
    const [op, msg] = [fresh(), fresh()];
    await ops.schedule({ operationKey: op, messageKey: msg, recipient: 'a@example.com', channel: 'email' }, clock + 1_000, 'delay', 60_000);
    clock += 2_000;
    expect(await claimed(op, msg)).toMatchObject({ previousStatus: 'scheduled', attempts: 1, cancelRequested: false });
    expect(await redis.zscore(keys.scheduledIndexOf(op), op)).toBeNull();
  });
});

describe('cancel against the decision', () => {
  it('a cancel before the decision: pending, and the decision reads its tombstone', async () => {
    const msg = fresh();
    expect(await cancels.cancelMessage(msg, undefined, who)).toEqual({ operations: [], pending: true, first: true, written: [keys.message(msg)] });
    expect(await messages.recordDecision(msg, [{ operationKey: fresh(), target: 'email:a@example.com' }])).toEqual({ first: true, cancelled: '*', cancelledBy: who });
  });

  it('a decision before the cancel: the cancel finds each recorded operation, and a subset only its recipients', async () => {
    const [msg, a, b] = [fresh(), fresh(), fresh()];
    expect(await messages.recordDecision(msg, [{ operationKey: a, target: 'email:a@example.com' }, { operationKey: b, target: 'sms:+4915100000000' }])).toEqual({ first: true });
    const some = await cancels.cancelMessage(msg, ['+4915100000000'], who);
    expect(some).toEqual({ pending: false, first: true, operations: [{ operationKey: b, recipient: '+4915100000000', channel: 'sms', outcome: 'cancelled' }], written: [keys.message(msg), keys.op(b)] });
    expect((await messages.get(msg))?.cancelled?.recipients).toEqual(['+4915100000000']);
    const all = await cancels.cancelMessage(msg, undefined, who);
    expect(all.operations.map((o) => [o.operationKey, o.outcome]).sort()).toEqual([[a, 'cancelled'], [b, 'already_cancelled']].sort());
    expect((await messages.get(msg))?.cancelled?.recipients).toBe('*');
  });

  it('a cancellation key: a message that joins after the cancel gets the tombstone back', async () => {
    const [m1, m2] = [fresh(), fresh()];
    expect(await cancels.joinKey('shop', 'order-1', m1)).toBeUndefined();
    const done = await cancels.cancelByKey('shop', 'order-1', undefined, who);
    expect(done).toMatchObject({ pending: true, first: true });
    expect(await cancels.joinKey('shop', 'order-1', m2)).toEqual({ cancelled: '*', reason: who.reason, by: who.by });
    // Another source's key of the same name is another key.
    expect(await cancels.joinKey('billing', 'order-1', m2)).toBeUndefined();
  });
});
