import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction, tenantKey } from '@singleshot/core';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Two tenants on one fleet, through real processes: each posts with its own
// producer key, and every read and action of one tenant's key on the other's
// messages and operations answers 404, at ingest and in the admin API, as for
// a record that does not exist. What all tenants share (preferences,
// suppressions, the queues) is an operator's: 403. The operator sees all.
const KEYS = { acme: 'acme-producer-key-0001', globex: 'globex-producer-key-0001', unbound: 'unbound-producer-key-0001' };
const OPERATOR = { authorization: `Basic ${Buffer.from('admin:tenants-test-password').toString('base64')}` };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

const messageOf = (tenant: string, source: string, id: string) => tenantKey(tenant, eventMessageKey(source, id));
const opOf = (tenant: string, source: string, id: string, recipient: string) =>
  operationKey({ messageKey: messageOf(tenant, source, id), action: parseAction('notify'), recipient, channel: 'webhook' });

let redis: TestBackend;
let sink: HttpSink;
let fleet: AppProcess;
let rt: Runtime;
let dashboard: Dashboard;
let ingest: string;
let admin: string;
let cleanup: () => void;

type Answer = { status: number; body: Record<string, unknown> };
async function call(url: string, init: { method?: string; headers: Record<string, string>; body?: unknown }): Promise<Answer> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...init.headers, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : { text } };
}
const post = (key: string, path: string, body: unknown) => call(`${ingest}${path}`, { method: 'POST', headers: bearer(key), body });
const event = (key: string, source: string, id: string, recipient: string, extra: Record<string, unknown> = {}) =>
  post(key, '/v1/events', { id, source, type: 'order.created', recipients: [recipient], data: {}, ...extra });

beforeAll(async () => {
  redis = await startTestBackend();
  sink = await startHttpSink();
  // A permanent refusal for one recipient: each tenant gets a dead operation.
  sink.behave((req) => (req.recipient === 'dead@x.test' ? { status: 400, body: { error: 'no such mailbox' } } : undefined));
  const config = testConfig({
    ...redis.config,
    ingest: {
      port: 0,
      host: '127.0.0.1',
      apiKeys: [
        { name: 'acme', key: KEYS.acme, sources: ['*'], tenant: 'acme' },
        { name: 'globex', key: KEYS.globex, sources: ['*'], tenant: 'globex' },
        { name: 'unbound', key: KEYS.unbound, sources: ['*'] },
      ],
    },
    dashboard: { auth: { username: 'admin', password: 'tenants-test-password' } },
    mailboxes: [
      { id: 'acme-box', owner: 'owner@acme.test', tenant: 'acme' },
      { id: 'globex-box', owner: 'owner@globex.test', tenant: 'globex' },
    ],
    routes: [
      { name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Order' } },
      { name: 'reminders', match: { source: 'billing' }, action: 'notify', channel: 'webhook', recipients: 'event', delay: '1h', template: { text: 'Pay' } },
    ],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery', written.file);
  ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  rt = await testRuntime(config);
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  admin = `http://127.0.0.1:${dashboard.port}`;

  for (const tenant of ['acme', 'globex'] as const) {
    const key = KEYS[tenant];
    // The same source and id for both: two tenants' events, not one event twice.
    expect((await event(key, 'shop', 'o-1', 'a@x.test')).body).toMatchObject({ status: 'accepted', messageKey: messageOf(tenant, 'shop', 'o-1') });
    expect((await event(key, 'shop', 'o-dead', 'dead@x.test')).status).toBe(202);
    expect((await event(key, 'billing', 'inv-1', 'b@x.test')).status).toBe(202);
    expect((await event(key, 'billing', 'inv-2', 'c@x.test', { cancellationKey: 'order-9' })).status).toBe(202);
  }
  for (const tenant of ['acme', 'globex']) {
    await waitUntil(async () => (await rt.operations.get(opOf(tenant, 'shop', 'o-1', 'a@x.test')))?.status === 'sent', `${tenant}'s order to be sent`);
    await waitUntil(async () => (await rt.operations.get(opOf(tenant, 'shop', 'o-dead', 'dead@x.test')))?.status === 'dead', `${tenant}'s refused order to be dead`);
    for (const [id, recipient] of [['inv-1', 'b@x.test'], ['inv-2', 'c@x.test']] as const) {
      await waitUntil(async () => (await rt.operations.get(opOf(tenant, 'billing', id, recipient)))?.status === 'scheduled', `${tenant}'s ${id} to be scheduled`);
    }
  }
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('identity per tenant', () => {
  it('one source and id posted by two tenants is two messages, each sent once', async () => {
    const [acme, globex] = [opOf('acme', 'shop', 'o-1', 'a@x.test'), opOf('globex', 'shop', 'o-1', 'a@x.test')];
    expect(acme).not.toBe(globex);
    expect(sink.accepted.get(acme)?.count).toBe(1);
    expect(sink.accepted.get(globex)?.count).toBe(1);
    expect((await rt.messages.get(messageOf('acme', 'shop', 'o-1')))?.tenant).toBe('acme');
    // The same event again from the same tenant is a duplicate of its own.
    expect((await event(KEYS.acme, 'shop', 'o-1', 'a@x.test')).body).toMatchObject({ status: 'duplicate' });
  });
});

describe("a tenant's mailbox", () => {
  const mail = (n: number) => `Message-ID: <m-${n}@x.test>\r\nFrom: a@x.test\r\nTo: b@x.test\r\nSubject: s\r\nDate: Mon, 7 Dec 2026 10:00:00 +0000\r\n\r\nbody\r\n`;
  const raw = (key: string, mailbox: string, n: number) =>
    fetch(`${ingest}/v1/mail/inbound?mailbox=${mailbox}`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'message/rfc822' }, body: mail(n) });

  it("takes its own tenant's key and a key without a tenant, and its mail is its tenant's", async () => {
    const own = (await (await raw(KEYS.acme, 'acme-box', 1)).json()) as { messageKey: string };
    expect((await rt.messages.get(own.messageKey))?.tenant).toBe('acme');
    const unbound = (await (await raw(KEYS.unbound, 'globex-box', 2)).json()) as { messageKey: string };
    expect((await rt.messages.get(unbound.messageKey))?.tenant).toBe('globex');
  });

  it("answers another tenant's key as a mailbox that does not exist", async () => {
    const theirs = await raw(KEYS.acme, 'globex-box', 3);
    const none = await raw(KEYS.acme, 'no-such-box', 3);
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    const [a, b] = [(await theirs.json()) as { error: { code: string; message: string } }, (await none.json()) as { error: { code: string; message: string } }];
    expect(a.error.code).toBe('UNKNOWN_MAILBOX');
    expect(a.error.message.replace('globex-box', '')).toBe(b.error.message.replace('no-such-box', ''));
  });
});

describe("a tenant's key on another tenant's data", () => {
  const api = (path: string, method = 'GET', body?: unknown) => call(`${admin}/admin/api${path}`, { method, headers: bearer(KEYS.acme), body });
  const theirs = {
    message: messageOf('globex', 'shop', 'o-1'),
    operation: opOf('globex', 'shop', 'o-1', 'a@x.test'),
    dead: opOf('globex', 'shop', 'o-dead', 'dead@x.test'),
    scheduledMessage: messageOf('globex', 'billing', 'inv-1'),
    scheduled: opOf('globex', 'billing', 'inv-1', 'b@x.test'),
  };
  const mine = { message: messageOf('acme', 'shop', 'o-1'), operation: opOf('acme', 'shop', 'o-1', 'a@x.test'), dead: opOf('acme', 'shop', 'o-dead', 'dead@x.test') };

  it.each([
    ['GET /messages', `/messages/${theirs.message}`],
    ['GET /operations', `/operations/${theirs.operation}`],
    ['GET /story of a message', `/story/${theirs.message}`],
    ['GET /story of an operation', `/story/${theirs.operation}`],
  ])('%s answers 404, as for no record, and its own answers 200', async (_what, path) => {
    const { status, body } = await api(path);
    expect(status).toBe(404);
    expect(body).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const missing = await api(path.replace(/[0-9a-f]{64}/, '0'.repeat(64)));
    expect(missing.status).toBe(404);
    expect((body.error as { message: string }).message.replace(/[0-9a-f]{64}/, '')).toBe((missing.body.error as { message: string }).message.replace(/[0-9a-f]{64}/, ''));
    const own = path.replace(theirs.message, mine.message).replace(theirs.operation, mine.operation);
    expect((await api(own)).status).toBe(200);
  });

  it('the story page answers 404 too', async () => {
    const page = (key: string) => fetch(`${admin}/admin/story/${key}`, { headers: bearer(KEYS.acme) });
    expect((await page(theirs.message)).status).toBe(404);
    expect((await page(mine.message)).status).toBe(200);
  });

  it('the DLQ lists its own dead operations only, and its depth counts those', async () => {
    const { status, body } = await api('/dlq');
    expect(status).toBe(200);
    expect(body).toMatchObject({ depth: 1, items: [{ operationKey: mine.dead }] });
    expect((body.items as unknown[]).length).toBe(1);
    const everything = await call(`${admin}/admin/api/dlq`, { headers: OPERATOR });
    expect((everything.body.items as Array<{ operationKey: string }>).map((i) => i.operationKey).sort()).toEqual([mine.dead, theirs.dead].sort());
  });

  it('a replay of theirs answers 404 and replays nothing', async () => {
    const { status, body } = await api(`/dlq/${theirs.dead}/replay`, 'POST');
    expect(status).toBe(404);
    expect(body).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect((await rt.operations.get(theirs.dead))?.status).toBe('dead');
  });

  it('the scheduled list shows its own only, and its total counts those', async () => {
    const { status, body } = await api('/scheduled');
    expect(status).toBe(200);
    const mineScheduled = [opOf('acme', 'billing', 'inv-1', 'b@x.test'), opOf('acme', 'billing', 'inv-2', 'c@x.test')].sort();
    expect(body.total).toBe(2);
    expect((body.scheduled as Array<{ operationKey: string }>).map((s) => s.operationKey).sort()).toEqual(mineScheduled);
    expect((await call(`${admin}/admin/api/scheduled`, { headers: OPERATOR })).body.total).toBe(4);
  });

  it('a cancel of theirs by message key answers 404, at ingest and in the admin API, and cancels nothing', async () => {
    const atIngest = await post(KEYS.acme, '/v1/cancellations', { messageKey: theirs.scheduledMessage });
    expect(atIngest.status).toBe(404);
    expect(atIngest.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const inAdmin = await api('/cancellations', 'POST', { messageKey: theirs.scheduledMessage });
    expect(inAdmin.status).toBe(404);
    expect((await rt.operations.get(theirs.scheduled))?.status).toBe('scheduled');
    // Nor did a tombstone wait for it: the message has none.
    expect((await rt.messages.get(theirs.scheduledMessage))?.cancelled).toBeUndefined();
  });

  it('a cancel by source and id, or by cancellation key, reaches its own events only', async () => {
    const byId = await post(KEYS.acme, '/v1/cancellations', { source: 'billing', id: 'inv-1' });
    expect(byId.body).toMatchObject({ operations: [{ operationKey: opOf('acme', 'billing', 'inv-1', 'b@x.test'), outcome: 'cancelled' }] });
    const byKey = await api('/cancellations', 'POST', { source: 'billing', cancellationKey: 'order-9' });
    expect(byKey.body).toMatchObject({ operations: [{ operationKey: opOf('acme', 'billing', 'inv-2', 'c@x.test'), outcome: 'cancelled' }], by: 'dashboard:key:acme' });
    expect((await rt.operations.get(theirs.scheduled))?.status).toBe('scheduled');
    expect((await rt.operations.get(opOf('globex', 'billing', 'inv-2', 'c@x.test')))?.status).toBe('scheduled');
  });

  it.each([
    ['/suppressions'],
    ['/suppressions/audit'],
    ['/journal'],
    ['/sources'],
    ['/digests'],
    ['/waiting'],
  ])('GET %s, shared by every tenant, answers 403 TENANT_NOT_ALLOWED', async (path) => {
    const { status, body } = await api(path);
    expect(status).toBe(403);
    expect(body).toMatchObject({ error: { code: 'TENANT_NOT_ALLOWED' } });
  });

  it('the queues board and recipients\' preferences answer 403 too', async () => {
    expect((await fetch(`${admin}/admin/queues`, { headers: bearer(KEYS.acme) })).status).toBe(403);
    const put = await call(`${ingest}/v1/preferences/a%40x.test`, { method: 'PUT', headers: bearer(KEYS.acme), body: { optOuts: [{ channel: 'webhook' }] } });
    expect(put.status).toBe(403);
    expect(put.body).toMatchObject({ error: { code: 'TENANT_NOT_ALLOWED' } });
    expect((await call(`${ingest}/v1/preferences/a%40x.test`, { headers: bearer(KEYS.acme) })).status).toBe(403);
  });

  it('the operator sees every tenant; a producer key without a tenant is no admin credential', async () => {
    expect((await call(`${admin}/admin/api/messages/${theirs.message}`, { headers: OPERATOR })).body).toMatchObject({ message: { tenant: 'globex' } });
    expect((await call(`${admin}/admin/api/messages/${theirs.message}`, { headers: bearer(KEYS.unbound) })).status).toBe(401);
  });
});

describe('per-tenant counts', () => {
  // Runs last: every arrival above is in. A duplicate is counted as one, never as a message the tenant is charged for.
  it('counts accepted messages, duplicates and sends by tenant', async () => {
    const messages = (tenant: string, result: string) => fleet.metric('singleshot_tenant_messages_total', { tenant, result });
    // Four events each, and one mail to each tenant's mailbox; acme posted its first order twice.
    expect(await messages('acme', 'accepted')).toBe(5);
    expect(await messages('acme', 'duplicate')).toBe(1);
    expect(await messages('globex', 'accepted')).toBe(5);
    expect(await messages('globex', 'duplicate')).toBe(0);
    // One order sent each; the refused one is dead and the reminders wait an hour. The worker counts a
    // send once its commit answered, a moment after the test can see the operation sent.
    for (const tenant of ['acme', 'globex']) await waitUntil(async () => (await fleet.metric('singleshot_tenant_sends_total', { tenant })) > 0, `${tenant}'s send to be counted`);
    expect(await fleet.metric('singleshot_tenant_sends_total', { tenant: 'acme', channel: 'webhook' })).toBe(1);
    expect(await fleet.metric('singleshot_tenant_sends_total', { tenant: 'globex', channel: 'webhook' })).toBe(1);
  });
});
