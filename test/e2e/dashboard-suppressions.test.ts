import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The suppression list from the dashboard, on a real Redis: the changes sit
// behind the same authentication and origin guard as a replay, are made as
// the dashboard user with origin `operator`, land in the audit, and are what
// the claim of the next operation reads.
const USER = 'admin';
const PASSWORD = 'suppressions-test-password';
const AUTH = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

let redis: TestRedis;
let rt: Runtime;
let dashboard: Dashboard;
let base: string;

type Json = Record<string, unknown>;
async function api(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}/admin/api${path}`, {
    method: init.method ?? 'GET',
    headers: { ...AUTH, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}
const add = (body: unknown, headers: Record<string, string> = {}) => api('/suppressions', { method: 'POST', body, headers });
const remove = (body: unknown, headers: Record<string, string> = {}) => api('/suppressions', { method: 'DELETE', body, headers });

let n = 0;
/** A claim of a fresh operation for the recipient on the webhook channel, as a delivery worker makes it. */
const claim = (recipient: string) => rt.operations.claim({ operationKey: (++n).toString(16).padStart(64, 'c'), messageKey: 'd'.repeat(64), recipient, channel: 'webhook', owner: 'test', leaseMs: 30_000 });

beforeAll(async () => {
  redis = await startTestRedis();
  rt = await testRuntime({
    redis: { url: redis.url },
    log: { level: 'silent' },
    dashboard: { auth: { username: USER, password: PASSWORD } },
    routes: [{ name: 'hooks', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'hi' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: 'http://127.0.0.1:9/never', timeoutMs: 2000 }] },
  });
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${dashboard.port}`;
});

afterAll(async () => {
  await dashboard?.close();
  await rt?.close();
  await redis?.destroy();
});

describe('POST and DELETE /admin/api/suppressions', () => {
  it('needs credentials and the dashboard origin; refused, nothing is stored', async () => {
    expect((await fetch(`${base}/admin/api/suppressions`)).status).toBe(401);
    const entry = { channel: 'webhook', recipient: 'x@x.test', reason: 'r' };
    const anonymous = await fetch(`${base}/admin/api/suppressions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(entry) });
    expect(anonymous.status).toBe(401);
    const crossSite: Array<Record<string, string>> = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of crossSite) {
      expect(await add(entry, headers)).toMatchObject({ status: 403, body: { error: { code: 'CROSS_ORIGIN' } } });
      expect(await remove(entry, headers)).toMatchObject({ status: 403, body: { error: { code: 'CROSS_ORIGIN' } } });
    }
    expect((await api('/suppressions/x@x.test')).body).toMatchObject({ suppressions: [], optOuts: [] });
    expect((await api('/suppressions/audit')).body).toEqual({ limit: 100, entries: [] });
  });

  it.each([
    [{ channel: 'webhook', recipient: 'x@x.test' }, 'INVALID_REQUEST'],
    [{ channel: 'webhook', recipient: ' ', reason: 'r' }, 'INVALID_REQUEST'],
    [{ channel: 'webhook', recipient: 'x@x.test', reason: 'r', extra: 1 }, 'INVALID_REQUEST'],
    [{ channel: 'webhook', recipient: 'x@x.test', reason: 'r', expiresAt: 'tomorrow' }, 'INVALID_REQUEST'],
    [{ channel: 'webhook', recipient: 'x@x.test', reason: 'r', expiresAt: '2001-01-01T00:00:00Z' }, 'INVALID_REQUEST'],
    [{ channel: 'pigeon', recipient: 'x@x.test', reason: 'r' }, 'UNKNOWN_CHANNEL'],
  ])('%j answers 400 %s', async (body, code) => {
    expect(await add(body)).toMatchObject({ status: 400, body: { error: { code } } });
  });

  it('adds as the dashboard user (normalized recipient), stops the next claim, and counts it once', async () => {
    expect((await claim('held@x.test')).kind).toBe('go');
    const first = await add({ channel: 'webhook', recipient: ' Held@X.test ', reason: 'asked by support' }, { origin: base, 'sec-fetch-site': 'same-origin' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      added: true,
      by: `dashboard:${USER}`,
      recipient: { recipient: 'held@x.test', suppressions: [{ channel: 'webhook', recipient: 'held@x.test', reason: 'asked by support', origin: 'operator', by: `dashboard:${USER}`, expired: false }] },
    });
    const again = await add({ channel: 'webhook', recipient: 'held@x.test', reason: 'again' });
    expect(again).toMatchObject({ status: 200, body: { added: false, recipient: { suppressions: [{ reason: 'asked by support' }] } } });
    expect(await claim('held@x.test')).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'recipient_suppressed' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^singleshot_suppressions_total\{reason="operator"\} 1$/m);
  });

  it('lists and reads recipients, and the audit newest first', async () => {
    await add({ channel: 'webhook', recipient: 'later@x.test', category: 'news', reason: 'temporary', expiresAt: '2999-01-01T00:00:00Z' });
    const list = await api('/suppressions');
    expect(list.status).toBe(200);
    expect((list.body.recipients as Array<{ recipient: string }>).map((r) => r.recipient)).toEqual(['later@x.test', 'held@x.test']);
    expect(list.body).toMatchObject({ limit: 100, nextCursor: null });
    const page = await api('/suppressions?limit=1');
    expect(page.body).toMatchObject({ recipients: [{ recipient: 'later@x.test' }] });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const next = await api(`/suppressions?limit=1&cursor=${encodeURIComponent(String(page.body.nextCursor))}`);
    expect(next.body).toEqual({ limit: 1, recipients: [expect.objectContaining({ recipient: 'held@x.test' })], nextCursor: null });
    expect((await api('/suppressions?limit=0')).status).toBe(400);
    // Paging by offset is refused by name, never ignored.
    const byOffset = await api('/suppressions?limit=1&offset=1');
    expect(byOffset).toMatchObject({ status: 400, body: { error: { code: 'INVALID_REQUEST', details: [{ path: 'query.offset' }] } } });
    expect(String((byOffset.body.error as Json).message)).toContain('paged by cursor');
    expect(await api('/suppressions?cursor=bm90LWEtY3Vyc29y')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_REQUEST' } } });
    const one = await api(`/suppressions/${encodeURIComponent('LATER@x.test')}`);
    expect(one.body).toMatchObject({ recipient: 'later@x.test', suppressions: [{ category: 'news', expiresAt: Date.parse('2999-01-01T00:00:00Z'), expired: false }] });
    const audit = await api('/suppressions/audit?limit=2');
    expect(audit.body.entries).toMatchObject([
      { change: 'add', recipient: 'later@x.test', detail: { field: 's|webhook|news', origin: 'operator', by: `dashboard:${USER}`, reason: 'temporary' } },
      { change: 'add_existing', recipient: 'held@x.test' },
    ]);
    const older = await api(`/suppressions/audit?limit=2&before=${String(audit.body.before)}`);
    expect(older.body.entries).toMatchObject([{ change: 'add', recipient: 'held@x.test', detail: { reason: 'asked by support' } }]);
    expect((await api('/suppressions/audit?before=yesterday')).status).toBe(400);
  });

  it('removes: the next claim goes, what was suppressed stays suppressed, the audit says who', async () => {
    const stopped = await claim('held@x.test');
    expect(stopped).toMatchObject({ kind: 'ended', status: 'suppressed', endedNow: true });
    const stoppedKey = n.toString(16).padStart(64, 'c');
    const res = await remove({ channel: 'webhook', recipient: 'HELD@x.test' });
    expect(res).toMatchObject({ status: 200, body: { removed: true, by: `dashboard:${USER}`, recipient: { suppressions: [] } } });
    expect((await remove({ channel: 'webhook', recipient: 'held@x.test' })).body).toMatchObject({ removed: false });
    expect((await claim('held@x.test')).kind).toBe('go');
    expect((await rt.operations.get(stoppedKey))?.status).toBe('suppressed');
    expect((await api('/suppressions/audit?limit=1')).body.entries).toMatchObject([{ change: 'remove', recipient: 'held@x.test', detail: { by: `dashboard:${USER}` } }]);
    // Nothing left for it: the list leaves it out.
    expect((await api('/suppressions')).body).toMatchObject({ recipients: [{ recipient: 'later@x.test' }] });
  });
});
