import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WaitMark } from '@singleshot/core';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { Cancellations } from './cancellations';
import { createRedis, type RedisClient } from './connection';
import { DocumentStateStore } from './document-state';
import { KeyBuilder } from './keys';
import { OperationStore, type WaitInput } from './operation-store';

// The claim given a hold (include/wait.lua): one waiting mark for every
// reason, what each writes, that an ending comes before any wait, and that
// the steps that end a wait (the claim that goes, its own suppression, a
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
type Op = { operationKey: string; messageKey: string; recipient: string; channel: string };
const op = (): Op => ({ operationKey: (++n).toString(16).padStart(64, 'a'), messageKey: 'm'.repeat(64), recipient: `r${n}@example.test`, channel: 'email' });
const claim = (o: Op, hold?: WaitInput) => ops.claim({ ...o, owner: 'w', leaseMs: 30_000, ...(hold ? { hold } : {}) });
const hold = (reason: WaitMark, untilMs: number, documentKey?: string): WaitInput => ({ reason, untilMs, ...(documentKey ? { waitingFor: `document:${documentKey}`, waitingKey: documentKey } : {}) });
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

describe('the claim given a hold', () => {
  it('a document wait is marked and indexed once, no lock, no attempt; the claim that goes ends it, field and index entry', async () => {
    const o = op();
    expect(await claim(o, hold('document', clock + 5_000, 'invoice'))).toEqual({ kind: 'wait', reason: 'document', untilMs: clock + 5_000, began: true });
    clock += 1_000;
    // The same wait again (the job came back): no new wait, since stays.
    expect(await claim(o, hold('document', clock + 5_000, 'invoice'))).toMatchObject({ kind: 'wait', began: false });
    expect(await mark(o.operationKey)).toEqual({ waitingReason: 'document', waitingUntil: String(clock + 5_000), waitingSince: String(clock - 1_000), waitingFor: 'document:invoice', waitingKey: 'invoice' });
    expect(await ops.get(o.operationKey)).toMatchObject({ status: 'pending', attempts: 0, fence: '0' });
    expect(await redis.exists(keys.lock(o.operationKey))).toBe(0);
    expect(await indexed(o.operationKey)).toBe(true);
    expect(await documents.waitingCount()).toBe(1);

    expect(await claim(o)).toMatchObject({ kind: 'go', attempts: 1 });
    expect(await mark(o.operationKey)).toEqual({});
    expect(await indexed(o.operationKey)).toBe(false);
  });

  it('quiet hours: journaled once per wake-up time, not indexed; a breaker wait after a document wait drops the document fields', async () => {
    const o = op();
    expect(await claim(o, hold('quiet_hours', clock + 60_000))).toMatchObject({ kind: 'wait', began: true });
    expect(await claim(o, hold('quiet_hours', clock + 60_000))).toMatchObject({ kind: 'wait', began: false });
    expect(await deferrals(o.operationKey)).toBe(1);
    expect(await claim(o, hold('quiet_hours', clock + 120_000))).toMatchObject({ kind: 'wait', began: false });
    expect(await deferrals(o.operationKey)).toBe(2);
    expect(await indexed(o.operationKey)).toBe(false);

    const d = op();
    await claim(d, hold('document', clock + 1_000, 'po'));
    expect(await claim(d, hold('breaker_open', clock + 2_000))).toMatchObject({ kind: 'wait', reason: 'breaker_open', began: true });
    expect(await mark(d.operationKey)).toEqual({ waitingReason: 'breaker_open', waitingUntil: String(clock + 2_000), waitingSince: String(clock) });
    expect(await indexed(d.operationKey)).toBe(false);
  });

  it('an ending comes before any wait: a suppressed recipient ends it (mark cleared), a sent one is a duplicate, a cancelled one stays unmarked', async () => {
    const s = op();
    await claim(s, hold('document', clock + 1_000, 'po'));
    await redis.hset(keys.suppressionCopyOf(s.operationKey, s.recipient), 's|email|*', '');
    expect(await claim(s, hold('quiet_hours', clock + 60_000))).toMatchObject({ kind: 'ended', status: 'suppressed', endedNow: true });
    expect(await mark(s.operationKey)).toEqual({});
    expect(await indexed(s.operationKey)).toBe(false);

    const sent = op();
    const go = await claim(sent);
    if (go.kind !== 'go') throw new Error(go.kind);
    await ops.commit({ ...sent, fence: go.fence, outcome: 'sent', provider: 'p', externalId: 'x' });
    expect(await claim(sent, hold('quiet_hours', clock + 60_000))).toMatchObject({ kind: 'ended', status: 'sent', endedNow: false });
    expect(await mark(sent.operationKey)).toEqual({});

    const c = op();
    await claim(c, hold('document', clock + 1_000, 'po'));
    const cancelled = await new Cancellations(redis, keys, { retentionMs, now }).cancelOperation(c, { by: 't', reason: 'r' });
    expect(cancelled.outcome).toBe('cancelled');
    expect(await mark(c.operationKey)).toEqual({});
    expect(await indexed(c.operationKey)).toBe(false);
    expect(await claim(c, hold('quiet_hours', clock + 1_000))).toMatchObject({ kind: 'ended', status: 'cancelled', endedNow: false });
    expect(await mark(c.operationKey)).toEqual({});
  });

  it('another holder has the lock: conflict, nothing marked', async () => {
    const o = op();
    expect((await claim(o)).kind).toBe('go');
    expect(await claim(o, hold('quiet_hours', clock + 60_000))).toMatchObject({ kind: 'conflict' });
    expect(await mark(o.operationKey)).toEqual({});
  });

  it('a release because every breaker opened after the claim marks the wait until the next attempt', async () => {
    const o = op();
    const go = await claim(o);
    if (go.kind !== 'go') throw new Error(go.kind);
    await ops.commit({ ...o, fence: go.fence, outcome: 'released', releaseTo: 'pending', refundAttempt: true, nextAttemptAt: clock + 7_000, waitReason: 'breaker_open' });
    expect(await mark(o.operationKey)).toEqual({ waitingReason: 'breaker_open', waitingUntil: String(clock + 7_000), waitingSince: String(clock) });
    expect(await claim(o)).toMatchObject({ kind: 'go', attempts: 1 });
    expect(await mark(o.operationKey)).toEqual({});
  });
});
