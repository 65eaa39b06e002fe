import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestGroupId, digestId } from '@singleshot/core';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { REPO_ROOT, startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { answerChecker, documentProblems } from '../support/openapi-check';
import { testRuntime } from '../support/runtime';

// The dashboard's view of the open digests on a real Redis: digests opened by
// the same join script the decision runs (digest-join.lua), read back by
// `GET /admin/api/digests` and the `/admin/digests` page behind the dashboard's
// authentication, soonest close first; a digest closed by its close script
// leaves both. One screenshot of the page (Debian's `chromium`, as in
// test/e2e/dashboard-ui.test.ts) goes to test-artifacts/.
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const USER = 'admin';
const PASSWORD = 'digests-test-password';
const AUTH = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

let redis: TestRedis;
let rt: Runtime;
let dashboard: Dashboard;
let base: string;

const openedAt = Date.now();
const HOUR = 3_600_000;

/** Three groups over the shards, opened in an order other than their close order; one carries markup in its recipient and key. */
const seeds = [
  { route: 'stock', recipient: 'a@x.test', key: 'supplier-1', items: 3, closeAt: openedAt + 2 * HOUR },
  { route: 'daily', recipient: '<script>alert(1)</script>@x.test', key: '<b>"&"</b>', items: 2, closeAt: openedAt + 3 * HOUR },
  { route: 'stock', recipient: 'b@x.test', key: '', items: 1, closeAt: openedAt + HOUR },
].map((s) => {
  const group = digestGroupId(s.route, s.recipient, s.key);
  return { ...s, group, id: digestId(group, 1) };
});
const [supplier, hostile, soonest] = seeds as [(typeof seeds)[0], (typeof seeds)[0], (typeof seeds)[0]];

/** The API's row of a seeded digest: its first digest in the group, with every item joined. */
const row = (s: (typeof seeds)[0]) => ({ id: s.id, group: s.group, seq: 1, route: s.route, recipient: s.recipient, key: s.key, count: s.items, openedAt, closeAt: s.closeAt });

type Json = Record<string, unknown>;
async function api(path: string, headers: Record<string, string> = AUTH): Promise<{ status: number; type: string | null; body: Json }> {
  const res = await fetch(`${base}/admin/api${path}`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Json };
}
async function page(query = ''): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}/admin/digests${query}`, { headers: AUTH });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

beforeAll(async () => {
  redis = await startTestRedis();
  rt = await testRuntime({ redis: { url: redis.url }, log: { level: 'silent' }, dashboard: { auth: { username: USER, password: PASSWORD } } });
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${dashboard.port}`;
  for (const s of seeds) {
    for (let i = 1; i <= s.items; i++) {
      const messageKey = `${s.route}-${s.recipient}-${i}`;
      const joined = await rt.digests.join(s.group, messageKey, JSON.stringify({ messageKey, n: i }), {
        now: openedAt,
        closeAt: s.closeAt,
        maxItems: 100,
        maxBytes: 100_000,
        route: s.route,
        recipient: s.recipient,
        key: s.key,
      });
      expect(joined).toMatchObject({ status: 'joined', seq: 1, state: 'open', opened: i === 1 });
    }
  }
});

afterAll(async () => {
  await dashboard?.close();
  await rt?.close();
  await redis?.destroy();
});

describe('GET /admin/api/digests', () => {
  it('needs credentials', async () => {
    expect((await fetch(`${base}/admin/api/digests`)).status).toBe(401);
    expect((await fetch(`${base}/admin/digests`)).status).toBe(401);
  });

  it('lists the open digests soonest close first, with their item counts', async () => {
    const { status, body } = await api('/digests');
    expect(status).toBe(200);
    expect(body).toEqual({ open: 3, limit: 100, digests: [row(soonest), row(supplier), row(hostile)] });
    // A limit keeps the soonest and still counts every open digest.
    expect((await api('/digests?limit=1')).body).toEqual({ open: 3, limit: 1, digests: [row(soonest)] });
    expect((await api('/digests?limit=2')).body).toMatchObject({ open: 3, limit: 2, digests: [{ id: soonest.id }, { id: supplier.id }] });
  });

  it.each([['limit=0'], ['limit=1001'], ['limit=ten'], ['limit=1.5'], ['offset=1']])('?%s answers 400 naming the problem', async (query) => {
    const { status, body } = await api(`/digests?${query}`);
    expect(status).toBe(400);
    const path = query.startsWith('limit') ? 'query.limit' : 'query';
    expect(body).toMatchObject({ error: { code: 'INVALID_REQUEST', details: [expect.objectContaining({ path })] } });
  });

  it('answers as the OpenAPI document says', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as object;
    const answers = [
      ['/admin/api/digests', await api('/digests')],
      ['/admin/api/digests?limit=1', await api('/digests?limit=1')],
      ['/admin/api/digests?limit=0', await api('/digests?limit=0')],
      ['/admin/api/digests', await api('/digests', {})],
    ] as const;
    // The document is checked after the calls: compiling its schemas holds the event loop for seconds on a
    // loaded machine, which is then not spent between two calls on one kept-alive connection.
    expect(await documentProblems(doc)).toEqual([]);
    const check = answerChecker(doc);
    expect(answers.map(([, a]) => a.status)).toEqual([200, 200, 400, 401]);
    expect(answers.flatMap(([url, a]) => check('GET', url, a.status, a.type, a.body))).toEqual([]);
  });
});

describe('the /admin/digests page', () => {
  it('shows one row per open digest, soonest close first, with what it gathers, its items and when it closes', async () => {
    const { status, headers, text } = await page();
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^text\/html/);
    expect(headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(text).toContain('data-open="3"');
    const rows = [...text.matchAll(/<tr data-digest="([0-9a-f]{64})">(.*?)<\/tr>/g)];
    expect(rows.map((r) => r[1])).toEqual([soonest.id, supplier.id, hostile.id]);
    const cells = (html: string) => [...html.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]);
    const [first, second, third] = rows.map((r) => cells(r[2] as string));
    expect(first?.slice(0, 4)).toEqual(['stock', 'b@x.test', '<span class="detail">(per recipient)</span>', '1']);
    expect(second?.slice(0, 4)).toEqual(['stock', 'a@x.test', 'supplier-1', '3']);
    expect(first?.[4]).toBe(new Date(openedAt).toISOString());
    expect(first?.[5]).toMatch(new RegExp(`^${new Date(soonest.closeAt).toISOString()} <span class="detail">in \\d+s</span>$`));
    expect(first?.[6]).toBe(soonest.id);
    // Recipients and keys come from events: shown as text, never as markup.
    expect(third?.slice(0, 4)).toEqual(['daily', '&lt;script&gt;alert(1)&lt;/script&gt;@x.test', '&lt;b&gt;&quot;&amp;&quot;&lt;/b&gt;', '2']);
    expect(text).not.toContain('<script>');
    expect(text).toContain('href="/admin/digests"');
  });

  it('renders in a browser as a table a person reads (screenshot in test-artifacts/)', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm run setup installs it (tools/system-packages.txt)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    try {
      const context = await browser.newContext({ httpCredentials: { username: USER, password: PASSWORD }, viewport: { width: 1400, height: 600 } });
      // Only the dashboard: the page loads nothing else, and nothing may leave this machine.
      await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
      const tab = await context.newPage();
      expect((await tab.goto(`${base}/admin/digests`))?.status()).toBe(200);
      expect(await tab.locator('tr[data-digest]').count()).toBe(3);
      // The markup in a recipient is text on the page, not an element.
      expect(await tab.locator(`tr[data-digest="${hostile.id}"] td[data-recipient]`).textContent()).toBe(hostile.recipient);
      expect(await tab.locator('script').count()).toBe(0);
      await tab.screenshot({ path: join(ARTIFACTS, 'dashboard-digests.png'), fullPage: true });
    } finally {
      await browser.close();
    }
    expect(existsSync(join(ARTIFACTS, 'dashboard-digests.png'))).toBe(true);
  });

  it('takes the same limit as the API, and says what is wrong with a bad one', async () => {
    const one = await page('?limit=1');
    expect(one.status).toBe(200);
    expect([...one.text.matchAll(/data-digest="([0-9a-f]{64})"/g)].map((m) => m[1])).toEqual([soonest.id]);
    expect(one.text).toContain('Showing the 1 closing soonest');
    const bad = await page('?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/<p class="problem" data-problem>invalid query: query\.limit: [^<]+<\/p>/);
  });

  it('a digest closed by its close script leaves the list; with none open the page says so', async () => {
    const closed = await rt.digests.close(soonest.group, 1, soonest.closeAt);
    expect(closed).toMatchObject({ state: 'closed', digest: { reason: 'window' } });
    expect((await api('/digests')).body).toEqual({ open: 2, limit: 100, digests: [row(supplier), row(hostile)] });
    for (const s of [supplier, hostile]) expect((await rt.digests.close(s.group, 1, s.closeAt)).state).toBe('closed');
    expect((await api('/digests')).body).toEqual({ open: 0, limit: 100, digests: [] });
    const empty = await page();
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('<p data-empty>no open digests</p>');
    expect(empty.text).not.toContain('data-digest=');
  });
});
