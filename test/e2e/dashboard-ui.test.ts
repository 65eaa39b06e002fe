import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import {
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The dashboard page in headless Chromium (Debian's `chromium`, driven by
// playwright-core): no credentials → 401; with them the queues and a dead job
// are listed; removing the DLQ record from the board is refused; retrying it
// from the board replays the operation, journaled with who clicked.
// Screenshots go to test-artifacts/.
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const USER = 'operator';
const PASSWORD = 'ui-test-password';

let redis: TestRedis;
let sink: HttpSink;
let fleet: AppProcess;
let rt: Runtime;
let cleanup: () => void;
let base: string;
let browser: Browser | undefined;

const messageKey = eventMessageKey('shop', 'evt-ui');
const deadKey = operationKey({ messageKey, action: parseAction('notify'), recipient: 'bad@example.com', channel: 'webhook' });

/** Only 127.0.0.1: the board's page asks Google for fonts, which must not leave this machine. */
async function localOnly(context: BrowserContext): Promise<void> {
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm run setup installs it (tools/system-packages.txt)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  redis = await startTestRedis();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    dashboard: { port: 0, host: '127.0.0.1', auth: { username: USER, password: PASSWORD } },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery,dashboard', written.file);
  const ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  base = `http://127.0.0.1:${await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard')}`;
  rt = await testRuntime(config);
  sink.scriptFor('bad@example.com', { status: 422, body: { error: 'recipient rejected' } });
  const res = await fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'evt-ui', source: 'shop', type: 'order.created', recipients: ['ok@example.com', 'bad@example.com'], data: {} }),
  });
  expect(res.status).toBe(202);
  await waitUntil(async () => (await rt.queues.dead.getWaitingCount()) === 1, 'the dead operation in the DLQ', { timeoutMs: 30_000 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('the dashboard in a browser', () => {
  it('answers 401 without credentials', async () => {
    const context = await browser!.newContext();
    try {
      await localOnly(context);
      const page = await context.newPage();
      const statuses: number[] = [];
      page.on('response', (r) => {
        if (r.url().startsWith(`${base}/admin/queues`)) statuses.push(r.status());
      });
      // Chromium gets a Basic challenge it has no answer for, and gives up on the page.
      const error = await page.goto(`${base}/admin/queues`).then(() => undefined, (err: Error) => err.message);
      expect(statuses).toEqual([401]);
      expect(error).toContain('ERR_INVALID_AUTH_CREDENTIALS');
    } finally {
      await context.close();
    }
  });

  it('lists the queues and the dead job, refuses to remove it, and journals a retry as a replay by the user', async () => {
    const context = await browser!.newContext({ httpCredentials: { username: USER, password: PASSWORD }, viewport: { width: 1400, height: 900 } });
    try {
      await localOnly(context);
      const page = await context.newPage();
      const response = await page.goto(`${base}/admin/queues`);
      expect(response?.status()).toBe(200);
      const sidebar = page.locator('#bull-board-sidebar');
      for (const name of ['decide', 'deliver', 'render', 'dead', 'digest']) await expect.poll(() => sidebar.getByText(name, { exact: true }).count(), { timeout: 15_000 }).toBe(1);
      // The overview: one card per queue, with its counts.
      await expect.poll(() => page.locator('ul[class^="overview"] > li').count(), { timeout: 15_000 }).toBe(5);
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-overview.png') });

      await page.goto(`${base}/admin/queues/queue/dead`);
      const card = page.locator('[class*="card"]', { hasText: deadKey }).first();
      await card.waitFor();
      await expect.poll(() => card.getByText('permanent: HTTP_422').count(), { timeout: 15_000 }).toBeGreaterThan(0);
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-dlq.png') });

      // Removing the record is refused (the toast says why) and the record stays.
      await card.locator('button:has(svg.lucide-trash-2)').click();
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Not allowed on singleshot queues').waitFor();
      expect(await rt.queues.dead.getWaitingCount()).toBe(1);

      // Retry: the board's button, its confirmation, then a replay under the same key.
      const retry = card.locator('button:has(svg.lucide-refresh-cw)');
      await retry.hover();
      await page.getByText('Retry', { exact: true }).waitFor();
      await retry.click();
      await page.getByRole('button', { name: 'Confirm' }).click();
      await waitUntil(async () => (await rt.operations.get(deadKey))?.status === 'sent', 'the replayed operation to be sent', { timeoutMs: 30_000 });
      await page.getByText(deadKey).waitFor({ state: 'detached' });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-after-retry.png') });
    } finally {
      await context.close();
    }

    const record = await rt.operations.get(deadKey);
    const journal = await rt.journal.forOperation(deadKey, record?.journalIds ?? []);
    expect(journal.map((e) => e.type)).toEqual(['dead', 'replayed', 'sent']);
    expect(journal[1]?.fields).toMatchObject({ by: USER, via: 'dashboard', op: deadKey });
    expect(sink.accepted.get(deadKey)?.count).toBe(1);
    expect(await rt.queues.dead.getWaitingCount()).toBe(0);
    expect(fleet.logs).toContainEqual(expect.objectContaining({ event: 'board_action', who: USER, method: 'PUT', path: `/api/queues/dead/${deadKey}/retry` }));
    expect(fleet.logs).toContainEqual(expect.objectContaining({ event: 'replay_requested', who: USER, via: 'dashboard', result: 'replayed', operationKey: deadKey }));
    expect(existsSync(join(ARTIFACTS, 'dashboard-dlq.png'))).toBe(true);
  });
});
