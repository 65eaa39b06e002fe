import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { Suppressions } from '@singleshot/store';
import {
  freePort,
  spawnApps,
  startSmtpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type SmtpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// One-click unsubscribe end to end: a real fleet (ingest, decision,
// delivery) sends a `news` email to a real SMTP sink; the link in its
// List-Unsubscribe header is opened in headless Chromium (Debian's
// `chromium`, driven by playwright-core as the dashboard tests do). The GET
// changes nothing, the button's POST opts the recipient out, a repeated POST
// changes nothing, and then the next `news` email ends suppressed while a
// required one of the same category is sent. Screenshots: /tmp/unsubscribe-*.png.
const CHROMIUM = '/usr/bin/chromium';
const RECIPIENT = 'ada@example.test';

let redis: TestRedis;
let smtp: SmtpSink;
let fleet: AppProcess;
let rt: Runtime;
let suppressions: Suppressions;
let browser: Browser | undefined;
let cleanup: () => void;
let ingest: string;

const opOf = (id: string) => operationKey({ messageKey: eventMessageKey('news', id), action: parseAction('notify'), recipient: RECIPIENT, channel: 'email' });

async function post(id: string, type: string): Promise<void> {
  const res = await fetch(`${ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, source: 'news', type, recipients: [RECIPIENT], data: {} }) });
  expect(res.status).toBe(202);
}

async function ended(id: string): Promise<{ status?: string; reason?: string }> {
  return waitUntil(
    async () => {
      const [summary] = await rt.operations.summaries([opOf(id)]);
      return summary?.status === 'sent' || summary?.status === 'suppressed' || summary?.status === 'dead' ? summary : undefined;
    },
    `operation of ${id} to end`,
    { timeoutMs: 30_000 },
  );
}

const mailOf = (id: string) => smtp.messages.find((m) => m.messageId?.startsWith(`<${opOf(id)}@`));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm run setup installs it (tools/system-packages.txt)`);
  [redis, smtp] = await Promise.all([startTestRedis(), startSmtpSink()]);
  const port = await freePort();
  ingest = `http://127.0.0.1:${port}`;
  const config = testConfig({
    redisUrl: redis.url,
    ingest: { port, host: '127.0.0.1' },
    unsubscribe: { publicBaseUrl: ingest, mailto: 'unsubscribe@example.test' },
    routes: [
      { name: 'newsletter', match: { source: 'news', type: 'newsletter' }, action: 'notify', channel: 'email', recipients: 'event', category: 'news', template: { subject: 'News', text: 'This week.' } },
      { name: 'notice', match: { source: 'news', type: 'notice' }, action: 'notify', channel: 'email', recipients: 'event', category: 'news', required: true, template: { subject: 'Terms', text: 'Our terms change.' } },
    ],
    providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: smtp.port, secure: false, from: 'news@example.test' }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery', written.file);
  rt = await testRuntime(config, 'unsubscribe-ui');
  suppressions = new Suppressions(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
  await waitUntil(async () => (await fetch(`${ingest}/readyz`).catch(() => undefined))?.status === 200 || undefined, 'ingest', { timeoutMs: 20_000 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
  await rt?.close();
  await smtp?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('one-click unsubscribe', () => {
  it('the link of the mail: GET changes nothing, the button opts out, a repeated POST changes nothing; then news is suppressed and required mail is sent', async () => {
    await post('n-1', 'newsletter');
    expect(await ended('n-1')).toMatchObject({ status: 'sent' });
    const mail = await waitUntil(() => mailOf('n-1'), 'the first news mail at the sink');
    const [header] = mail.headers.get('list-unsubscribe') ?? [];
    expect(mail.headers.get('list-unsubscribe-post')).toEqual(['List-Unsubscribe=One-Click']);
    const m = /^<(http:\/\/127\.0\.0\.1:\d+\/v1\/unsubscribe\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)>, <mailto:unsubscribe@example\.test\?subject=unsubscribe>$/.exec(header ?? '');
    expect(m, header).not.toBeNull();
    const url = (m as RegExpExecArray)[1] as string;
    expect(url.startsWith(`${ingest}/v1/unsubscribe/`)).toBe(true);
    expect((await suppressions.get(RECIPIENT)).version).toBe(0);

    const context = await browser!.newContext({ viewport: { width: 900, height: 600 } });
    try {
      await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
      const page = await context.newPage();
      // What a link scanner does: a GET. It shows the button and writes nothing.
      expect((await page.goto(url))?.status()).toBe(200);
      expect(await page.locator('#category').textContent()).toBe('news');
      expect(await page.locator('#channel').textContent()).toBe('email');
      await page.screenshot({ path: '/tmp/unsubscribe-confirm.png', fullPage: true });
      expect((await suppressions.get(RECIPIENT)).version).toBe(0);

      const [answer] = await Promise.all([page.waitForResponse((r) => r.url() === url && r.request().method() === 'POST'), page.locator('#unsubscribe').click()]);
      expect(answer.status()).toBe(200);
      await page.locator('#done').waitFor();
      expect(await page.locator('h1').textContent()).toBe('You are unsubscribed');
      await page.screenshot({ path: '/tmp/unsubscribe-done.png', fullPage: true });
      const after = await suppressions.get(RECIPIENT);
      expect(after.version).toBe(1);
      expect(after.optOuts.map(({ channel, category }) => ({ channel, category }))).toEqual([{ channel: 'email', category: 'news' }]);

      // The mail client's one-click POST, after the button: the same answer, nothing written.
      const again = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(again.status).toBe(200);
      expect(await again.text()).toContain('is unsubscribed from news notifications by email');
      expect((await suppressions.get(RECIPIENT)).version).toBe(1);
    } finally {
      await context.close();
    }

    await post('n-2', 'newsletter');
    await post('r-1', 'notice');
    expect(await ended('n-2')).toMatchObject({ status: 'suppressed', reason: 'opted_out' });
    expect(await ended('r-1')).toMatchObject({ status: 'sent' });
    const required = await waitUntil(() => mailOf('r-1'), 'the required mail at the sink');
    // A required route cannot be opted out of: its mail offers no link that would change nothing.
    expect(required.headers.has('list-unsubscribe')).toBe(false);
    expect(mailOf('n-2')).toBeUndefined();
    expect(smtp.messages.filter((x) => x.envelope.to.includes(RECIPIENT))).toHaveLength(2);
  });
});
