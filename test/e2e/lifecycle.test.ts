import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Send-at, cancel and quiet hours through real processes: each case says what
// a producer relies on. The race under load is lifecycle-race.test.ts.
const opOf = (source: string, id: string, recipient: string) =>
  operationKey({ messageKey: eventMessageKey(source, id), action: parseAction('notify'), recipient, channel: 'webhook' });

interface CancelAnswer {
  operations: Array<{ operationKey: string; recipient: string; channel: string; outcome: string }>;
  pending: boolean;
}

describe('scheduling and cancelling', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const config = testConfig({
      ...redis.config,
      routes: [
        { name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } },
        { name: 'reminders', match: { source: 'billing' }, action: 'notify', channel: 'webhook', recipients: 'event', delay: '3s', template: { text: 'Pay {{data.invoice}}' } },
      ],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const cancel = async (body: unknown): Promise<CancelAnswer> => {
    const res = await post('/v1/cancellations', body);
    expect(res.status).toBe(200);
    return (await res.json()) as CancelAnswer;
  };

  it('an event with sendAt is scheduled at once, then sent once, not before its time', async () => {
    const sendAt = Date.now() + 2500;
    const res = await post('/v1/events', { id: 'later-1', source: 'shop', type: 'order.created', recipients: ['a@x.test'], data: { orderId: '1' }, sendAt: new Date(sendAt).toISOString() });
    expect(res.status).toBe(202);
    const op = opOf('shop', 'later-1', 'a@x.test');
    await waitUntil(async () => (await rt.operations.get(op))?.status === 'scheduled', 'the operation to be scheduled');
    await waitUntil(async () => (await rt.operations.get(op))?.status === 'sent', 'the operation to be sent', { timeoutMs: 20_000 });
    const at = sink.requests.filter((r) => r.idempotencyKey === op);
    expect(at).toHaveLength(1);
    expect(at[0]!.receivedAt).toBeGreaterThanOrEqual(sendAt);
    const record = await rt.operations.get(op);
    expect((await rt.journal.forOperation(op, record!.journalIds)).map((e) => e.type)).toEqual(['scheduled', 'sent']);
  });

  it('a cancel of a scheduled operation answers cancelled, and nothing is sent; a repeat answers already_cancelled', async () => {
    const res = await post('/v1/events', { id: 'inv-7', source: 'billing', type: 'invoice.due', recipients: ['b@x.test', 'c@x.test'], data: { invoice: '7' } });
    expect(res.status).toBe(202);
    const [b, c] = [opOf('billing', 'inv-7', 'b@x.test'), opOf('billing', 'inv-7', 'c@x.test')];
    await waitUntil(async () => (await rt.operations.get(b))?.status === 'scheduled' && (await rt.operations.get(c))?.status === 'scheduled', 'both to be scheduled');
    const first = await cancel({ source: 'billing', id: 'inv-7', recipients: ['B@x.test'], reason: 'paid' });
    expect(first).toEqual({ pending: false, operations: [{ operationKey: b, recipient: 'b@x.test', channel: 'webhook', outcome: 'cancelled' }] });
    const again = await cancel({ source: 'billing', id: 'inv-7', recipients: ['b@x.test'], reason: 'paid' });
    expect(again.operations.map((o) => o.outcome)).toEqual(['already_cancelled']);
    await waitUntil(async () => (await rt.operations.get(c))?.status === 'sent', 'the other recipient to be sent', { timeoutMs: 20_000 });
    await waitForQueuesIdle(rt.queues);
    expect(sink.countFor(b)).toBe(0);
    expect(sink.countFor(c)).toBe(1);
    const record = await rt.operations.get(b);
    expect(record?.status).toBe('cancelled');
    const entries = await rt.journal.forOperation(b, record!.journalIds);
    expect(entries.map((e) => e.type)).toEqual(['scheduled', 'cancelled']);
    expect(entries[1]?.fields).toMatchObject({ reason: 'paid', by: 'anonymous' });
  });

  it('a cancel before its event leaves a tombstone (pending); the event is accepted and nothing is sent', async () => {
    const early = await cancel({ source: 'shop', id: 'never-1', reason: 'order cancelled' });
    expect(early).toEqual({ operations: [], pending: true });
    const res = await post('/v1/events', { id: 'never-1', source: 'shop', type: 'order.created', recipients: ['d@x.test', 'e@x.test'], data: { orderId: 'n' } });
    expect(res.status).toBe(202);
    const ops = [opOf('shop', 'never-1', 'd@x.test'), opOf('shop', 'never-1', 'e@x.test')];
    await waitUntil(async () => (await Promise.all(ops.map((o) => rt.operations.get(o)))).every((r) => r?.status === 'cancelled'), 'both operations to be born cancelled');
    // Journaled with who cancelled and why, though the cancel came before the operations existed.
    const born = await rt.operations.get(ops[0]!);
    expect((await rt.journal.forOperation(ops[0]!, born!.journalIds))[0]?.fields).toMatchObject({ type: 'cancelled', by: 'anonymous', reason: 'order cancelled' });
    await waitForQueuesIdle(rt.queues);
    for (const o of ops) expect(sink.countFor(o)).toBe(0);
    const after = await cancel({ source: 'shop', id: 'never-1' });
    expect(after.pending).toBe(false);
    expect(after.operations.map((o) => o.outcome).sort()).toEqual(['already_cancelled', 'already_cancelled']);
  });

  it('a cancel after the send answers already_sent', async () => {
    await post('/v1/events', { id: 'sent-1', source: 'shop', type: 'order.created', recipients: ['f@x.test'], data: { orderId: 's' } });
    const op = opOf('shop', 'sent-1', 'f@x.test');
    await waitUntil(async () => (await rt.operations.get(op))?.status === 'sent', 'the operation to be sent');
    expect((await cancel({ source: 'shop', id: 'sent-1' })).operations).toEqual([{ operationKey: op, recipient: 'f@x.test', channel: 'webhook', outcome: 'already_sent' }]);
  });

  it('a cancellation key cancels every scheduled event that carries it, and the next one born later', async () => {
    for (const id of ['k-1', 'k-2']) {
      expect((await post('/v1/events', { id, source: 'billing', type: 'invoice.due', recipients: [`${id}@x.test`], data: { invoice: id }, cancellationKey: 'order-o-9' })).status).toBe(202);
    }
    const ops = ['k-1', 'k-2'].map((id) => opOf('billing', id, `${id}@x.test`));
    await waitUntil(async () => (await Promise.all(ops.map((o) => rt.operations.get(o)))).every((r) => r?.status === 'scheduled'), 'both scheduled');
    const answer = await cancel({ source: 'billing', cancellationKey: 'order-o-9', reason: 'order cancelled' });
    expect(answer.operations.map((o) => [o.operationKey, o.outcome]).sort()).toEqual(ops.map((o) => [o, 'cancelled']).sort());
    await post('/v1/events', { id: 'k-3', source: 'billing', type: 'invoice.due', recipients: ['k-3@x.test'], data: { invoice: 'k-3' }, cancellationKey: 'order-o-9' });
    const third = opOf('billing', 'k-3', 'k-3@x.test');
    await waitUntil(async () => (await rt.operations.get(third))?.status === 'cancelled', 'the later event to be born cancelled');
    await new Promise((r) => setTimeout(r, 3500));
    await waitForQueuesIdle(rt.queues);
    for (const o of [...ops, third]) expect(sink.countFor(o)).toBe(0);
  });

  it('refuses bad timing and bad targets with a 4xx naming the problem', async () => {
    const far = await post('/v1/events', { id: 'far', source: 'shop', type: 't', recipients: ['g@x.test'], sendAt: new Date(Date.now() + 40 * 86_400_000).toISOString() });
    expect(far.status).toBe(400);
    expect(((await far.json()) as { error: { code: string } }).error.code).toBe('SEND_AT_BEYOND_HORIZON');
    const both = await post('/v1/events', { id: 'both', source: 'shop', type: 't', recipients: ['g@x.test'], sendAt: new Date().toISOString(), delaySeconds: 5 });
    expect(((await both.json()) as { error: { code: string } }).error.code).toBe('AMBIGUOUS_SEND_AT');
    const none = await post('/v1/cancellations', { reason: 'x' });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('INVALID_CANCELLATION');
  });
});
