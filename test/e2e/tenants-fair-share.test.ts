import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairQueue } from '@singleshot/store';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The fair share between tenants, through real processes: a backlog of each
// tenant's notifications waits (the delivery is not running), then one
// delivery process with one provider call at a time and one job waiting in
// its queue (a capacity of 2) sends them. The provider sees the tenants in
// turn, and a tenant of weight 3 three times for each of a weight-1 tenant's,
// whatever order their events arrived in. A tenant's transactional
// notification goes before its own bulk backlog.
const TENANTS = ['a', 'b', 'c', 'heavy', 'light', 'capped'] as const;
type Tenant = (typeof TENANTS)[number];
const keyOf = (tenant: Tenant) => `${tenant}-producer-key-00000001`;
const SPREAD_KEY = 'a-second-producer-key-0000001';

let redis: TestBackend;
let sink: HttpSink;
let front: AppProcess;
let rt: Runtime;
let fair: FairQueue;
let ingest: string;
let dashboard: Dashboard;
let admin: string;
let configFile: string;
const OPERATOR = { authorization: `Basic ${Buffer.from('admin:fair-share-test-password').toString('base64')}` };
let cleanup: () => void;

const postEvent = (tenant: Tenant, n: number) =>
  fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keyOf(tenant)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: `${tenant}-${n}`, source: 'shop', type: 'order.created', recipients: [`${tenant}-${n}@x.test`], data: {} }),
  });

async function post(tenant: Tenant, n: number): Promise<void> {
  expect((await postEvent(tenant, n)).status).toBe(202);
}

const waitingTotal = async () => [...(await fair.waiting(0)).values()].reduce((a, b) => a + b, 0);

/**
 * Posts `backlog` (tenant, count) in order with the delivery stopped: the
 * first tenant's first job goes to the queue (the window's one place), every
 * other waits in the fair queue. Then runs a delivery until all are sent and
 * returns the tenants in the order the provider was called.
 */
async function sendBacklog(backlog: Array<[Tenant, number]>): Promise<string[]> {
  const before = sink.requests.length;
  const total = backlog.reduce((sum, [, n]) => sum + n, 0);
  const [first] = backlog[0]!;
  await post(first, 0);
  await waitUntil(async () => (await rt.queues.deliverAll[0]!.getWaitingCount()) === 1, 'the first job in the queue');
  for (const [tenant, n] of backlog) for (let i = tenant === first ? 1 : 0; i < n; i++) await post(tenant, i);
  await waitUntil(async () => (await waitingTotal()) === total - 1, `${total - 1} jobs waiting in the fair queue`);
  const delivery = spawnApps('delivery', configFile);
  try {
    await sink.waitFor((s) => s.requests.length >= before + total, { timeoutMs: 30_000, what: `${total} sends` });
  } finally {
    await delivery.stop();
  }
  return sink.requests.slice(before).map((r) => String(r.recipient).split('-')[0]!);
}

beforeAll(async () => {
  redis = await startTestBackend();
  sink = await startHttpSink();
  const config = testConfig({
    ...redis.config,
    ingest: {
      port: 0,
      host: '127.0.0.1',
      // `spread` is tenant a's second key: a tenant is one share however many keys it posts with.
      apiKeys: [...TENANTS.map((t) => ({ name: t, key: keyOf(t), sources: ['*'], tenant: t })), { name: 'spread', key: SPREAD_KEY, sources: ['*'], tenant: 'a' }],
    },
    delivery: { concurrency: 1, metricsPort: 0 },
    dashboard: { auth: { username: 'admin', password: 'fair-share-test-password' } },
    tenancy: { window: 1, tenants: [{ id: 'heavy', weight: 3 }, { id: 'capped', maxPending: 3 }] },
    routes: [
      { name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Order' } },
      { name: 'alerts', match: { source: 'alerts' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Alert' } },
      { name: 'newsletter', match: { source: 'news' }, action: 'notify', channel: 'webhook', recipients: 'event', priority: 'bulk', template: { text: 'News' } },
    ],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  configFile = written.file;
  front = spawnApps('ingest,decision', configFile);
  ingest = `http://127.0.0.1:${await front.metricsPort()}`;
  rt = await testRuntime(config);
  fair = new FairQueue(rt.redis, rt.keys);
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  admin = `http://127.0.0.1:${dashboard.port}`;
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await front?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('fair share between tenants (real processes, capacity 2)', () => {
  it('sends three backlogged tenants of equal weight in turn, though each posted its five at once', async () => {
    const order = await sendBacklog([
      ['a', 5],
      ['b', 5],
      ['c', 5],
    ]);
    expect(order.join(',')).toBe('a,b,c,a,b,c,a,b,c,a,b,c,a,b,c');
  }, 90_000);

  it('sends a weight-3 tenant three times for each of a weight-1 tenant\'s', async () => {
    const order = await sendBacklog([
      ['heavy', 12],
      ['light', 4],
    ]);
    expect(order.map((t) => t[0]).join('')).toBe('hlhhhlhhhlhhhlhh');
  }, 90_000);

  it('sent every operation once, and left nothing waiting or in transit', async () => {
    expect(sink.requests.length).toBe(31);
    expect(new Set(sink.requests.map((r) => r.recipient)).size).toBe(31);
    expect(await fair.waiting(0)).toEqual(new Map());
    expect(await fair.stale(0, -60_000)).toEqual([]);
  });

  it('gives a tenant one share however it spreads its events over keys, routes and recipients', async () => {
    const before = sink.requests.length;
    const spread = async (n: number) => {
      const res = await fetch(`${ingest}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${n % 2 === 0 ? keyOf('a') : SPREAD_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: `a-spread-${n}`, source: n % 3 === 0 ? 'alerts' : 'shop', type: 't', recipients: [`a-spread${n}-${n % 7}@x.test`], data: {} }),
      });
      expect(res.status).toBe(202);
    };
    await spread(0);
    await waitUntil(async () => (await rt.queues.deliverAll[0]!.getWaitingCount()) === 1, 'the first job in the queue');
    for (let n = 1; n < 8; n++) await spread(n);
    for (let n = 0; n < 4; n++) await post('b', 100 + n);
    await waitUntil(async () => (await waitingTotal()) === 11, '11 jobs waiting in the fair queue');
    const delivery = spawnApps('delivery', configFile);
    try {
      await sink.waitFor((s) => s.requests.length >= before + 12, { timeoutMs: 30_000, what: '12 sends' });
    } finally {
      await delivery.stop();
    }
    const order = sink.requests.slice(before).map((r) => String(r.recipient).split('-')[0]);
    // Two keys, two routes and eight recipients of a's take turns with b as one tenant, until b has none.
    expect(order.join('')).toBe('ababababaaaa');
  }, 90_000);

  it('answers 429 with Retry-After to a tenant at its maxPending, and to no other tenant', async () => {
    const before = sink.requests.length;
    await post('capped', 0);
    await waitUntil(async () => (await rt.queues.deliverAll[0]!.getWaitingCount()) === 1, 'the first job in the queue');
    for (let n = 1; n <= 3; n++) {
      await post('capped', n);
      await waitUntil(async () => (await waitingTotal()) === n, `${n} waiting`);
    }
    const refused = await postEvent('capped', 4);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: 'TENANT_BACKLOG_FULL', details: { tenant: 'capped', waiting: 3, maxPending: 3 } } });
    // The operator sees it on the tenants view; a tenant's key may not (it shows every tenant).
    const view = (await (await fetch(`${admin}/admin/api/tenants`, { headers: OPERATOR })).json()) as { fairShare: boolean; tenants: Array<Record<string, unknown>> };
    expect(view.fairShare).toBe(true);
    expect(view.tenants[0]).toMatchObject({ tenant: 'default', weight: 1, maxPending: null, waiting: 0, atLimit: false });
    expect(view.tenants.find((t) => t.tenant === 'capped')).toEqual({ tenant: 'capped', weight: 1, maxPending: 3, waiting: 3, atLimit: true });
    expect(view.tenants.find((t) => t.tenant === 'heavy')).toMatchObject({ weight: 3, atLimit: false });
    const page = await (await fetch(`${admin}/admin/tenants`, { headers: OPERATOR })).text();
    expect(page).toMatch(/<tr data-tenant="capped">.*<td data-waiting>3<\/td><td data-at-limit><strong>/);
    const asTenant = await fetch(`${admin}/admin/api/tenants`, { headers: { authorization: `Bearer ${keyOf('capped')}` } });
    expect(asTenant.status).toBe(403);
    // Another tenant's event is taken: the bound is the capped tenant's alone.
    await post('a', 50);
    await waitUntil(async () => (await waitingTotal()) === 4, "a's job waiting too");
    const delivery = spawnApps('delivery', configFile);
    try {
      await sink.waitFor((s) => s.requests.length >= before + 5, { timeoutMs: 30_000, what: 'the five sends' });
      // Once its backlog went, the refused event is taken on its retry.
      await post('capped', 4);
      await sink.waitFor((s) => s.requests.length >= before + 6, { timeoutMs: 30_000, what: 'the retried event sent' });
    } finally {
      await delivery.stop();
    }
    expect(sink.requests.slice(before).map((r) => r.recipient).sort()).toEqual(['a-50@x.test', ...[0, 1, 2, 3, 4].map((n) => `capped-${n}@x.test`)]);
  }, 90_000);

  it("sends a tenant's transactional notification before its 20,000 bulk ones that were waiting first", async () => {
    const before = sink.requests.length;
    const news = async (n: number) => {
      const recipients = Array.from({ length: 1000 }, (_, i) => `news${n}-${i}@x.test`);
      const res = await fetch(`${ingest}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keyOf('a')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: `news-${n}`, source: 'news', type: 'newsletter', recipients, data: {} }),
      });
      expect(res.status).toBe(202);
    };
    for (let n = 0; n < 20; n++) await news(n);
    // One bulk job took the queue's one place; the other 19,999 wait in the fair queue.
    await waitUntil(async () => (await waitingTotal()) === 19_999, '19,999 bulk jobs waiting', { timeoutMs: 120_000, intervalMs: 250 });
    await post('a', 100);
    await waitUntil(async () => (await waitingTotal()) === 20_000, 'the transactional job waiting behind them');
    const delivery = spawnApps('delivery', configFile);
    try {
      await sink.waitFor((s) => s.requests.slice(before).some((r) => r.recipient === 'a-100@x.test'), { timeoutMs: 30_000, what: 'the transactional send' });
    } finally {
      await delivery.stop();
    }
    const sent = sink.requests.slice(before).map((r) => String(r.recipient));
    // Only the bulk job already in the queue (the window of 1) went before it.
    expect(sent.indexOf('a-100@x.test')).toBe(1);
    expect(sent[0]).toMatch(/^news\d+-\d+@x\.test$/);
  }, 240_000);
});
