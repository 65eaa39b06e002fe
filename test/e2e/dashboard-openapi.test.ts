import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId, eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { waitUntil } from '@singleshot/test-harness';
import { answerChecker, documentProblems, templateFinder } from '../support/openapi-check';
import { testRuntime } from '../support/runtime';
import { startSinkFleet, type SinkFleet } from '../support/sink-fleet';

// The admin API's OpenAPI document (generated from its route table) against
// live answers: a real fleet sends one notification and kills another, the
// test writes a scheduled operation, a waiting one, a document and an open
// digest, then calls every admin route for its answers and its refusals. Each
// answer must be documented (path, method, status, media type) and match its
// schema; the answers' objects are closed, so a field a handler answers that
// the document does not name fails here.
const TOKEN = 'dashboard-openapi-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_BODY = { ...AUTH, 'content-type': 'application/json' };
const CROSS_SITE = { ...JSON_BODY, origin: 'http://elsewhere.example', 'sec-fetch-site': 'cross-site' };

const messageKey = eventMessageKey('shop', 'evt-doc');
const opOf = (recipient: string, key = messageKey) => operationKey({ messageKey: key, action: parseAction('notify'), recipient, channel: 'webhook' });
const sentKey = opOf('ok@example.test');
const deadKey = opOf('bad@example.test');
const laterMessage = eventMessageKey('shop', 'evt-later');
const scheduledKey = opOf('later@example.test', laterMessage);
const waitingKey = opOf('waits@example.test', laterMessage);
const documentKey = 'd'.repeat(64);
const unknown = 'f'.repeat(64);

let fleet: SinkFleet;
let rt: Runtime;
let dashboard: Dashboard;
let base: string;

beforeAll(async () => {
  fleet = await startSinkFleet('ingest,decision,delivery', {
    dashboard: { auth: { token: TOKEN } },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
    sources: [{ type: 'nats', name: 'orders-js', source: 'shop', servers: ['nats://127.0.0.1:1'], stream: 'ORDERS', consumer: 'singleshot' }],
  });
  const ingest = `http://127.0.0.1:${await fleet.apps.metricsPort()}`;
  rt = await testRuntime(fleet.config);
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${dashboard.port}`;

  // One event for two recipients: the provider refuses one for good, so it dies.
  fleet.sink.scriptFor('bad@example.test', { status: 400, body: { error: 'no such mailbox' } });
  const res = await fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'evt-doc', source: 'shop', type: 'order.created', recipients: ['ok@example.test', 'bad@example.test'] }),
  });
  expect(res.status).toBe(202);
  await waitUntil(async () => (await rt.operations.get(sentKey))?.status === 'sent' && (await rt.operations.get(deadKey))?.status === 'dead', 'one sent, one dead', { timeoutMs: 60_000 });
  await waitUntil(async () => (await rt.queues.dead.getWaitingCount()) === 1 || undefined, 'the DLQ record');

  // What the decision and the render app write for what is still to come.
  const job = (recipient: string, key: string) => ({ operationKey: key, messageKey: laterMessage, recipient, channel: 'webhook' });
  await rt.messages.recordDecision(laterMessage, [{ operationKey: scheduledKey, target: 'webhook:later@example.test' }]);
  expect(await rt.operations.schedule(job('later@example.test', scheduledKey), Date.now() + 3_600_000, 'send_at', 60_000)).toBe(true);
  expect(
    await rt.operations.claim({ ...job('waits@example.test', waitingKey), owner: 'test', leaseMs: 60_000, hold: { reason: 'document', untilMs: Date.now() + 60_000, waitingFor: 'document:invoice', waitingKey: documentKey } }),
  ).toMatchObject({ kind: 'wait', reason: 'document', began: true });
  expect(await rt.documents.claim({ documentKey, messageKey: laterMessage, owner: 'render-test', leaseMs: 60_000, job: { documentKey } })).toMatchObject({ kind: 'claimed' });
  const group = digestGroupId('orders', 'ok@example.test', '');
  const joined = await rt.digests.join(group, laterMessage, JSON.stringify({ messageKey: laterMessage }), {
    now: Date.now(),
    closeAt: Date.now() + 3_600_000,
    maxItems: 10,
    maxBytes: 10_000,
    route: 'orders',
    recipient: 'ok@example.test',
    key: '',
  });
  expect(joined).toMatchObject({ status: 'joined' });
});

afterAll(async () => {
  await dashboard?.close();
  await rt?.close();
  await fleet?.stop();
});

type Seen = { method: string; url: string; status: number; type: string | null; body: unknown };
async function call(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Seen> {
  const headers = init.headers ?? (init.body === undefined ? AUTH : JSON_BODY);
  const res = await fetch(`${base}${path}`, { method, headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  const text = await res.text();
  const type = res.headers.get('content-type');
  return { method, url: path, status: res.status, type, body: type?.includes('json') ? JSON.parse(text) : text };
}
const api = (method: string, path: string, init?: { body?: unknown; headers?: Record<string, string> }) => call(method, `/admin/api${path}`, init);

/** Every admin route's answers and refusals, in an order where each finds what it needs. */
async function answers(): Promise<Seen[]> {
  const entry = { channel: 'webhook', recipient: 'Held@Example.test', reason: 'asked by support', expiresAt: '2999-01-01T00:00:00Z' };
  return [
    await api('GET', `/operations/${sentKey}`),
    await api('GET', `/operations/${deadKey}`),
    await api('GET', `/operations/${unknown}`),
    await api('GET', '/operations/not-a-key'),
    await api('GET', `/operations/${sentKey}`, { headers: {} }),
    await api('GET', `/messages/${messageKey}`),
    await api('GET', `/messages/${laterMessage}`),
    await api('GET', `/messages/${unknown}`),
    await api('GET', '/messages/NOT-HEX'),
    await api('GET', `/story/${messageKey}`),
    await api('GET', `/story/${deadKey}`),
    await api('GET', `/story/${unknown}`),
    await api('GET', '/story/x'),
    await api('GET', '/dlq?limit=10'),
    await api('GET', '/dlq?filter=permanent'),
    await api('GET', '/dlq?limit=0'),
    await api('GET', '/dlq?page=2'),
    await api('POST', `/dlq/${sentKey}/replay`),
    await api('POST', `/dlq/${scheduledKey}/replay`),
    await api('POST', `/dlq/${unknown}/replay`),
    await api('POST', '/dlq/x/replay'),
    await api('POST', `/dlq/${deadKey}/replay`, { headers: CROSS_SITE }),
    await api('POST', `/dlq/${deadKey}/replay`),
    await api('GET', '/journal'),
    await api('GET', `/journal?from=0&to=${Date.now() + 60_000}&limit=5`),
    await api('GET', '/journal?from=yesterday'),
    await api('GET', '/waiting'),
    await api('GET', '/waiting?limit=0'),
    await api('GET', `/documents/${documentKey}`),
    await api('GET', `/documents/${unknown}`),
    await api('GET', '/documents/x'),
    await api('GET', '/scheduled?limit=5'),
    await api('GET', '/scheduled?limit=x'),
    await api('GET', '/digests'),
    await api('GET', '/digests?limit=1001'),
    await api('POST', '/cancellations', { body: { messageKey: laterMessage, reason: 'no longer wanted' } }),
    await api('POST', '/cancellations', { body: {} }),
    await api('POST', '/cancellations', { body: { source: 5 } }),
    await api('POST', '/cancellations', { body: { messageKey: laterMessage }, headers: CROSS_SITE }),
    await api('POST', '/suppressions', { body: entry }),
    await api('POST', '/suppressions', { body: entry }),
    await api('POST', '/suppressions', { body: { ...entry, channel: 'pigeon' } }),
    await api('POST', '/suppressions', { body: { channel: 'webhook' } }),
    await api('POST', '/suppressions', { body: entry, headers: CROSS_SITE }),
    await api('GET', '/suppressions?limit=10'),
    await api('GET', '/suppressions?limit=0'),
    await api('GET', '/suppressions/held%40example.test'),
    await api('GET', '/suppressions/%20'),
    await api('GET', '/suppressions/audit?limit=1'),
    await api('GET', '/suppressions/audit?before=yesterday'),
    await api('DELETE', '/suppressions', { body: { channel: 'webhook', recipient: 'held@example.test' } }),
    await api('DELETE', '/suppressions', { body: { channel: 'webhook' } }),
    await api('GET', '/sources'),
    await api('GET', '/sources', { headers: { authorization: 'Bearer wrong' } }),
    await api('GET', '/tenants'),
    await api('GET', '/tenants', { headers: {} }),
    await call('GET', '/openapi.json'),
    await call('GET', '/healthz'),
    await call('GET', '/readyz'),
    await call('GET', '/metrics'),
  ];
}

describe('the admin OpenAPI document against live answers', () => {
  it('is valid OpenAPI 3.1, and every answer of every admin route matches it', async () => {
    const doc = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const seen = await answers();
    // The document is checked after the calls: compiling its schemas holds the event loop for seconds on a
    // loaded machine, which is then not spent between two calls on one kept-alive connection.
    expect(await documentProblems(doc)).toEqual([]);
    const check = answerChecker(doc);
    expect(seen.flatMap((a) => check(a.method, a.url, a.status, a.type, a.body))).toEqual([]);

    // Every documented admin operation was called, for an answer and for a refusal.
    const templateOf = templateFinder(doc);
    const called = (ok: boolean) => new Set(seen.filter((a) => (a.status < 300) === ok).map((a) => `${a.method} ${templateOf(a.url)}`));
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/admin/api/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.length).toBeGreaterThan(15);
    expect(operations.filter((op) => !called(true).has(op))).toEqual([]);
    expect(operations.filter((op) => !called(false).has(op))).toEqual([]);
    expect(new Set(seen.map((a) => a.status))).toEqual(new Set([200, 201, 202, 400, 401, 403, 404, 409]));

    // The answers carried what the routes are for, so their schemas were truly exercised.
    const body = (method: string, url: string) => seen.find((a) => a.method === method && a.url === `/admin/api${url}`)?.body as Record<string, unknown[]>;
    expect(body('GET', '/dlq?limit=10').items).toHaveLength(1);
    expect(body('GET', '/waiting').waiting).toHaveLength(1);
    expect(body('GET', '/scheduled?limit=5').scheduled).toHaveLength(1);
    expect(body('GET', '/digests').digests).toHaveLength(1);
    expect(body('GET', '/sources').sources).toHaveLength(1);
    expect(body('GET', '/suppressions?limit=10').recipients).toHaveLength(1);

    // The check bites: a field the document does not name, in an answer or in a shared record; an undocumented route.
    const sources = seen.find((a) => a.url === '/admin/api/sources' && a.status === 200) as Seen;
    expect(check('GET', sources.url, 200, sources.type, { ...(sources.body as object), total: 1 })).toHaveLength(1);
    const operation = seen.find((a) => a.url === `/admin/api/operations/${sentKey}` && a.status === 200) as Seen & { body: { operation: object } };
    expect(check('GET', operation.url, 200, operation.type, { ...operation.body, operation: { ...operation.body.operation, lockedBy: 'x' } })).toHaveLength(1);
    expect(check('GET', '/admin/api/nothing', 200, 'application/json', {})).toHaveLength(1);
  });
});
