import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import type { Runtime } from '@singleshot/runtime';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Cross-site request forgery against the dashboard: a page on another site
// could make the operator's browser POST a replay with the browser's saved
// basic credentials. Here a page served from another origin
// (http://localhost:<other port>, the dashboard is on 127.0.0.1) submits a
// form to the admin API's replay and one to a Bull Board action, in Chromium
// with the operator's credentials; each is refused with 403 before it reaches
// a handler, while the same requests from the dashboard's own origin reach
// them (404 for the unknown operation key).
const CHROMIUM = '/usr/bin/chromium';
const USER = 'operator';
const PASSWORD = 'origin-test-password';
const KEY = 'a'.repeat(64);

let redis: TestRedis;
let rt: Runtime;
let dashboard: Dashboard;
let attacker: Server;
let browser: Browser;
let dash: string;
let evil: string;

const page = (target: string) => `<!doctype html><html><body>
<form id="f" method="POST" action="${target}/admin/api/dlq/${KEY}/replay"><input name="x" value="1"></form>
<form id="b" method="POST" action="${target}/admin/queues/api/queues/dead/add"><input name="x" value="1"></form>
</body></html>`;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  redis = await startTestRedis();
  rt = await testRuntime({ redis: { url: redis.url }, log: { level: 'silent' }, dashboard: { auth: { username: USER, password: PASSWORD } } });
  dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  dash = `http://127.0.0.1:${dashboard.port}`;
  attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page(dash)));
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
  evil = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  attacker?.close();
  await dashboard?.close();
  await rt?.close();
  await redis?.destroy();
});

/** Statuses of the browser's requests to the dashboard, in order. */
async function withPage(origin: string, run: (p: import('playwright-core').Page, statuses: Array<[string, number, Promise<string>]>) => Promise<void>) {
  const context = await browser.newContext({ httpCredentials: { username: USER, password: PASSWORD } });
  try {
    // Nothing leaves this machine.
    await context.route('**/*', (route) => (['127.0.0.1', 'localhost'].includes(new URL(route.request().url()).hostname) ? route.continue() : route.abort()));
    const p = await context.newPage();
    const statuses: Array<[string, number, Promise<string>]> = [];
    p.on('response', (r) => {
      if (r.url().startsWith(dash) && r.request().method() !== 'GET') statuses.push([new URL(r.url()).pathname, r.status(), r.text().catch(() => '')]);
    });
    await p.goto(origin);
    await run(p, statuses);
  } finally {
    await context.close();
  }
}

describe('state-changing requests from another origin', () => {
  it('a form POST to the admin API and a Bull Board action from another site get 403', async () => {
    // The operator's browser holds the dashboard's basic credentials.
    await withPage(evil, async (p, statuses) => {
      await p.$eval('#f', (form) => (form as unknown as { submit(): void }).submit());
      await waitUntil(() => statuses.find(([path]) => path.endsWith('/replay')), 'the form POST to be answered', { timeoutMs: 15_000 });
      const answers = statuses.filter(([path]) => path.endsWith('/replay'));
      expect(answers.map(([, s]) => s)).toEqual([403]);
      // The body from the response itself: reading the page while the form's
      // navigation is still committing failed under load ("page is navigating").
      expect(JSON.parse(await (answers[0] as [string, number, Promise<string>])[2])).toMatchObject({ error: { code: 'CROSS_ORIGIN' } });
    });
    await withPage(evil, async (p, statuses) => {
      await p.$eval('#b', (form) => (form as unknown as { submit(): void }).submit());
      await waitUntil(() => statuses.find(([path]) => path.endsWith('/add')), 'the board action to be answered', { timeoutMs: 15_000 });
      const answers = statuses.filter(([path]) => path.endsWith('/add'));
      expect(answers.map(([, s]) => s)).toEqual([403]);
      // Refused by the origin guard, before the board (or its guard) saw it.
      expect(JSON.parse(await (answers[0] as [string, number, Promise<string>])[2])).toMatchObject({ error: { code: 'CROSS_ORIGIN', details: { secFetchSite: 'cross-site' } } });
    });
  });

  it('the same requests from the dashboard’s own origin reach the handlers', async () => {
    await withPage(`${dash}/healthz`, async (p) => {
      const answers = await p.evaluate(async (key) => {
        const replay = await fetch(`/admin/api/dlq/${key}/replay`, { method: 'POST' });
        const add = await fetch('/admin/queues/api/queues/dead/add', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        return [replay.status, ((await replay.json()) as { error: { code: string } }).error.code, add.status, ((await add.json()) as { error: string }).error];
      }, KEY);
      // 404: no such operation (the handler ran); 403 from the board guard's own rule (adding jobs by hand is refused), not CROSS_ORIGIN.
      expect(answers.slice(0, 2)).toEqual([404, 'NOT_FOUND']);
      expect(answers.slice(2)).toEqual([403, 'Not allowed on singleshot queues']);
    });
  });
});
