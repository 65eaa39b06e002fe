import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { DocumentStateStore } from './document-state';
import { KeyBuilder } from './keys';
import { OperationStore } from './operation-store';

// One waiting mark for every wait (op-wait.lua): what each reason writes, and
// that the steps that end a wait (the claim, the claim's own suppression, a
// cancel) leave neither a field nor an index entry behind, so `ops show`, the
// dashboard and the document gauge never show a wait that is over.
let server: TestRedis;
let redis: RedisClient;
const keys = new KeyBuilder('w', 2);
let clock = 1_700_000_000_000;
const now = () => clock;
const retentionMs = 86_400_000;
let ops: OperationStore;
let documents: DocumentStateStore;
let n = 0;
const op = () => ({ operationKey: (++n).toString(16).padStart(64, 'a'), messageKey: 'm'.repeat(64), recipient: `r${n}@example.test`, channel: 'email' });
const markFields = ['waitingReason', 'waitingUntil', 'waitingSince', 'waitingFor', 'waitingKey'];
const mark = async (operationKey: string) => Object.fromEntries(Object.entries(await redis.hgetall(keys.op(operationKey))).filter(([f]) => markFields.includes(f)));
const deferrals = async (operationKey: string) => (await redis.xrange(keys.journalOf(operationKey), '-', '+')).filter(([, f]) => f.includes('deferred') && f.includes(operationKey)).length;
const indexed = async (operationKey: string) => (await documents.waiting()).some((w) => w.operationKey === operationKey);

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs, now });
  documents = new DocumentStateStore(redis, keys, { retentionMs, now });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('the waiting mark', () => {
  it('a document wait is marked and indexed once; the claim ends it, field and index entry', async () => {
    const o = op();
    const wait = { reason: 'document' as const, untilMs: clock + 5_000, waitingFor: 'document:invoice', waitingKey: 'doc-1' };
    expect(await ops.wait(o, wait)).toBe(true);
    clock += 1_000;
    // The same wait again (the job came back): no new wait, since stays.
    expect(await ops.wait(o, { ...wait, untilMs: clock + 5_000 })).toBe(false);
    expect(await mark(o.operationKey)).toEqual({ waitingReason: 'document', waitingUntil: String(clock + 5_000), waitingSince: String(clock - 1_000), waitingFor: 'document:invoice', waitingKey: 'doc-1' });
    expect((await ops.get(o.operationKey))?.status).toBe('pending');
    expect(await indexed(o.operationKey)).toBe(true);
    expect(await documents.waitingCount()).toBe(1);

    const claim = await ops.claim({ ...o, owner: 'w', leaseMs: 30_000 });
    expect(claim.kind).toBe('go');
    expect(await mark(o.operationKey)).toEqual({});
    expect(await indexed(o.operationKey)).toBe(false);
  });

  it('quiet hours: journaled once per wake-up time, not indexed; a breaker wait after it drops the document fields', async () => {
    const o = op();
    expect(await ops.wait(o, { reason: 'quiet_hours', untilMs: clock + 60_000 })).toBe(true);
    expect(await ops.wait(o, { reason: 'quiet_hours', untilMs: clock + 60_000 })).toBe(false);
    expect(await deferrals(o.operationKey)).toBe(1);
    expect(await ops.wait(o, { reason: 'quiet_hours', untilMs: clock + 120_000 })).toBe(false);
    expect(await deferrals(o.operationKey)).toBe(2);
    expect(await indexed(o.operationKey)).toBe(false);

    const d = op();
    await ops.wait(d, { reason: 'document', untilMs: clock + 1_000, waitingFor: 'document:po', waitingKey: 'doc-2' });
    expect(await ops.wait(d, { reason: 'breaker_open', untilMs: clock + 2_000 })).toBe(true);
    expect(await mark(d.operationKey)).toEqual({ waitingReason: 'breaker_open', waitingUntil: String(clock + 2_000), waitingSince: String(clock) });
    expect(await indexed(d.operationKey)).toBe(false);
  });

  it('a cancel ends the wait; a terminal operation is never marked', async () => {
    const o = op();
    await ops.wait(o, { reason: 'document', untilMs: clock + 1_000, waitingFor: 'document:po', waitingKey: 'doc-3' });
    const cancelled = await new Cancellations(redis, keys, { retentionMs, now }).cancelOperation(o, { by: 't', reason: 'r' });
    expect(cancelled.outcome).toBe('cancelled');
    expect(await mark(o.operationKey)).toEqual({});
    expect(await indexed(o.operationKey)).toBe(false);
    expect(await ops.wait(o, { reason: 'quiet_hours', untilMs: clock + 1_000 })).toBe(false);
    expect(await mark(o.operationKey)).toEqual({});
  });

  it("the claim's own suppression ends the wait", async () => {
    const o = op();
    await ops.wait(o, { reason: 'document', untilMs: clock + 1_000, waitingFor: 'document:po', waitingKey: 'doc-4' });
    await redis.hset(keys.suppressionCopyOf(o.operationKey, o.recipient), 's|email|*', '');
    expect(await ops.claim({ ...o, owner: 'w', leaseMs: 30_000 })).toMatchObject({ kind: 'ended', status: 'suppressed', endedNow: true });
    expect(await mark(o.operationKey)).toEqual({});
    expect(await indexed(o.operationKey)).toBe(false);
  });
});
