import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The dashboard's view of what is still to come and its cancel, on a real
// Redis: `GET /admin/api/scheduled` from the per-shard scheduled index, and
// `POST /admin/api/cancellations` behind the same authentication and origin
// guard as a replay, journaled as the dashboard user.
const USER = 'admin';
const PASSWORD = 'scheduling-test-password';
const AUTH = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

let redis: TestRedis;
let rt: Runtime;
let dashboard: Dashboard;
let base: string;

const messageKey = eventMessageKey('billing', 'inv-9');
const opOf = (recipient: string) => operationKey({ messageKey, action: parseAction('notify'), recipient, channel: 'webhook' });
const a = opOf('a@x.test');
const b = opOf('b@x.test');
const soon = Date.now() + 3_600_000;
const later = soon + 3_600_000;

type Json = Record<string, unknown>;
async function api(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}/admin/api${path}`, {
    method: init.method ?? 'GET',
    headers: { ...AUTH, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}
const cancel = (body: unknown, headers: Record<string, string> = {}) => api('/cancellations', { method: 'POST', body, headers });

beforeAll(async () => {
  redis = await startTestRedis();
  rt = await testRuntime({ redis: { url: redis.url }, log: { level: 'silent' }, dashboard: { auth: { username: USER, password: PASSWORD } } });
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${dashboard.port}`;
  // What the decision writes for a message whose operations are due later: its record, then each scheduled operation.
  const job = (recipient: string, key: string) => ({ operationKey: key, messageKey, recipient, channel: 'webhook' });
  await rt.messages.recordDecision(messageKey, [{ operationKey: a, target: 'webhook:a@x.test' }, { operationKey: b, target: 'webhook:b@x.test' }]);
  expect(await rt.operations.schedule(job('b@x.test', b), later, 'delay', 60_000)).toBe(true);
  expect(await rt.operations.schedule(job('a@x.test', a), soon, 'send_at', 60_000)).toBe(true);
});

afterAll(async () => {
  await dashboard?.close();
  await rt?.close();
  await redis?.destroy();
});

describe('GET /admin/api/scheduled', () => {
  it('needs credentials', async () => {
    const res = await fetch(`${base}/admin/api/scheduled`);
    expect(res.status).toBe(401);
  });

  it('lists scheduled operations soonest first, with when and why', async () => {
    const { status, body } = await api('/scheduled');
    expect(status).toBe(200);
    expect(body).toEqual({
      total: 2,
      limit: 100,
      scheduled: [
        { operationKey: a, dueAt: soon, reason: 'send_at', messageKey, recipient: 'a@x.test', channel: 'webhook', status: 'scheduled' },
        { operationKey: b, dueAt: later, reason: 'delay', messageKey, recipient: 'b@x.test', channel: 'webhook', status: 'scheduled' },
      ],
    });
    const one = await api('/scheduled?limit=1');
    expect(one.body).toMatchObject({ total: 2, limit: 1, scheduled: [{ operationKey: a }] });
    expect((await api('/scheduled?limit=0')).status).toBe(400);
  });
});

describe('POST /admin/api/cancellations', () => {
  it('is refused from another origin, as a replay is, and changes nothing', async () => {
    const crossSite: Array<Record<string, string>> = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of crossSite) {
      const { status, body } = await cancel({ source: 'billing', id: 'inv-9' }, headers);
      expect(status).toBe(403);
      expect(body).toMatchObject({ error: { code: 'CROSS_ORIGIN' } });
    }
    const anonymous = await fetch(`${base}/admin/api/cancellations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'billing', id: 'inv-9' }) });
    expect(anonymous.status).toBe(401);
    expect((await rt.operations.get(a))?.status).toBe('scheduled');
    expect((await rt.operations.get(b))?.status).toBe('scheduled');
  });

  it.each([
    [{}, 'INVALID_CANCELLATION'],
    [{ messageKey, source: 'billing', id: 'inv-9' }, 'INVALID_CANCELLATION'],
    [{ id: 'inv-9' }, 'INVALID_CANCELLATION'],
    [{ messageKey: 'nope' }, 'INVALID_REQUEST'],
    [{ source: 'billing', id: 'inv-9', recipients: [] }, 'INVALID_REQUEST'],
  ])('%j answers 400 %s', async (body, code) => {
    const res = await cancel(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code } });
  });

  it('cancels one recipient from the dashboard origin, journaled as the dashboard user, and counted', async () => {
    const { status, body } = await cancel({ source: 'billing', id: 'inv-9', recipients: ['A@x.test'], reason: 'paid' }, { origin: base, 'sec-fetch-site': 'same-origin' });
    expect(status).toBe(200);
    expect(body).toEqual({ operations: [{ operationKey: a, recipient: 'a@x.test', channel: 'webhook', outcome: 'cancelled' }], pending: false, by: `dashboard:${USER}` });
    const record = await rt.operations.get(a);
    expect(record).toMatchObject({ status: 'cancelled', cancelledBy: `dashboard:${USER}`, cancelReason: 'paid' });
    const journal = await rt.journal.forOperation(a, record!.journalIds);
    expect(journal.map((e) => [e.type, e.fields.by])).toEqual([['scheduled', undefined], ['cancelled', `dashboard:${USER}`]]);
    // No longer to come: the list shows only the other.
    expect((await api('/scheduled')).body).toMatchObject({ total: 1, scheduled: [{ operationKey: b }] });
    // The operation as the admin API shows it.
    expect((await api(`/operations/${b}`)).body).toMatchObject({ operation: { status: 'scheduled', scheduledFor: later, scheduleReason: 'delay' } });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^singleshot_cancellations_total\{outcome="cancelled"\} 1$/m);
  });

  it('a repeat by message key says already_cancelled for the first and cancels the rest', async () => {
    const { status, body } = await cancel({ messageKey });
    expect(status).toBe(200);
    const outcomes = (body.operations as Array<{ operationKey: string; outcome: string }>).map((o) => [o.operationKey, o.outcome]).sort();
    expect(outcomes).toEqual([[a, 'already_cancelled'], [b, 'cancelled']].sort());
    expect((await api('/scheduled')).body).toMatchObject({ total: 0, scheduled: [] });
  });

  it('a cancellation key nobody carries yet is pending', async () => {
    const { status, body } = await cancel({ source: 'billing', cancellationKey: 'contract-1', reason: 'ended' });
    expect(status).toBe(200);
    expect(body).toEqual({ operations: [], pending: true, by: `dashboard:${USER}` });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^singleshot_cancellations_total\{outcome="pending"\} 1$/m);
  });
});
