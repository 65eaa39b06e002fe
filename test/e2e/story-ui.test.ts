import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startOtlpReceiver,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type OtlpReceiver,
  type TestRedis,
} from '@singleshot/test-harness';

// The story page (`/admin/story/<key>`) in headless Chromium (Debian's
// `chromium`, driven by playwright-core as test/e2e/dashboard-ui.test.ts
// does) and `singleshot story` for two notifications: one delivered after an
// in-doubt attempt and a reconciliation, one that went to the DLQ and was
// replayed. Screenshots: /tmp/story-*.png.
const CHROMIUM = '/usr/bin/chromium';
const CLI = join(REPO_ROOT, 'dist/apps/cli/main.js');
const USER = 'operator';
const PASSWORD = 'story-test-password';
const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

const doubtMessage = eventMessageKey('shop', 'evt-doubt');
const doubtKey = operationKey({ messageKey: doubtMessage, action: parseAction('notify'), recipient: 'doubt@example.com', channel: 'webhook' });
const deadMessage = eventMessageKey('shop', 'evt-dead');
const deadKey = operationKey({ messageKey: deadMessage, action: parseAction('notify'), recipient: 'bad@example.com', channel: 'webhook' });

let redis: TestRedis;
let sink: HttpSink;
let receiver: OtlpReceiver;
let fleet: AppProcess;
let browser: Browser | undefined;
let cleanup: () => void;
let configFile: string;
let base: string;
let ingest: string;

async function post(id: string, recipient: string): Promise<void> {
  const res = await fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: [recipient], data: {} }),
  });
  expect(res.status).toBe(202);
}

async function statusOf(key: string): Promise<string | undefined> {
  const res = await fetch(`${base}/admin/api/operations/${key}`, { headers: { authorization: auth } });
  return res.status === 200 ? ((await res.json()) as { operation: { status: string } }).operation.status : undefined;
}

/** The steps of the page as `kind|operation|title`, in the page's order. */
async function steps(page: Page): Promise<Array<{ kind: string; of: string; title: string }>> {
  return page.locator('tr.step').evaluateAll((rows) =>
    rows.map((r) => ({ kind: r.getAttribute('data-kind') ?? '', of: r.children[3]?.textContent ?? '', title: r.querySelector('[data-title]')?.textContent ?? '' })),
  );
}

/** The kinds of one operation's steps, in order. */
const kindsOf = (list: Array<{ kind: string; of: string }>, key: string) => list.filter((s) => s.of === key.slice(0, 12)).map((s) => s.kind);

/** `singleshot story KEY`: its steps' kinds and operations, in order. */
function cliSteps(key: string): Array<{ kind: string; of: string }> {
  const run = spawnSync(process.execPath, [CLI, 'story', key, '--config', configFile], { encoding: 'utf8', timeout: 20_000 });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout
    .split('\n')
    .map((line) => /^ {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}(\S+)\s+(\S+)\s/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ of: m[1] === 'message' ? 'message' : (m[1] as string), kind: m[2] as string }));
}

async function localOnly(context: BrowserContext): Promise<void> {
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm run setup installs it (tools/system-packages.txt)`);
  redis = await startTestRedis();
  sink = await startHttpSink();
  receiver = await startOtlpReceiver();
  const written = writeConfigFile(
    testConfig({
      redisUrl: redis.url,
      dashboard: { port: 0, host: '127.0.0.1', auth: { username: USER, password: PASSWORD } },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1000 }] },
    }),
  );
  cleanup = written.cleanup;
  configFile = written.file;
  fleet = spawnApps('ingest,decision,delivery,dashboard', configFile, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  base = `http://127.0.0.1:${await waitUntil(() => fleet.logs.find((l) => l.event === 'dashboard_listening')?.port as number | undefined, 'the dashboard', { timeoutMs: 20_000 })}`;
  // The first call is taken and its answer lost: in doubt; the next attempt reconciles by lookup.
  sink.scriptFor('doubt@example.com', 'accept-then-drop');
  // A permanent refusal: dead at once, in the DLQ; after the replay the provider takes it.
  sink.scriptFor('bad@example.com', { status: 422, body: { error: 'recipient rejected' } });
  await post('evt-doubt', 'doubt@example.com');
  await post('evt-dead', 'bad@example.com');
  await waitUntil(async () => (await statusOf(doubtKey)) === 'sent', 'the in-doubt operation to be reconciled and sent', { timeoutMs: 30_000 });
  await waitUntil(async () => (await statusOf(deadKey)) === 'dead', 'the refused operation to be dead', { timeoutMs: 30_000 });
  // A second arrival of the same event: a duplicate, on the story too.
  await post('evt-doubt', 'doubt@example.com');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
  await sink?.close();
  await receiver?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('the story page', () => {
  it('answers 401 without credentials, like the rest of the dashboard', async () => {
    const res = await fetch(`${base}/admin/story/${doubtKey}`);
    expect(res.status).toBe(401);
  });

  it('tells a notification delivered after an in-doubt attempt and a reconciliation, every step in order, with its trace id', async () => {
    const context = await browser!.newContext({ httpCredentials: { username: USER, password: PASSWORD }, viewport: { width: 1400, height: 900 } });
    try {
      await localOnly(context);
      const page = await context.newPage();
      // Through the search box, with the message key ingest answered.
      expect((await page.goto(`${base}/admin/story`))?.status()).toBe(200);
      await page.locator('input[name=key]').fill(doubtMessage);
      await Promise.all([page.waitForURL(`${base}/admin/story/${doubtMessage}`), page.getByRole('button', { name: 'Show story' }).click()]);
      const list = await steps(page);
      expect(kindsOf(list, doubtKey)).toEqual(['claim', 'in_doubt', 'in_doubt', 'claim', 'reconcile', 'sent']);
      const titles = list.filter((s) => s.of === doubtKey.slice(0, 12)).map((s) => s.title);
      expect(titles[1]).toContain('left it in doubt');
      expect(titles[4]).toContain('found it');
      expect(titles[5]).toContain('committed under fence 2');
      const message = list.filter((s) => s.of === 'message');
      expect(message.map((s) => s.kind)).toEqual(['arrival', 'queued', 'decided', 'arrival']);
      expect(message[0]?.title).toContain('first arrival via api');
      expect(message[2]?.title).toContain('route orders → 1 operation');
      // The duplicate arrival came after the send; the decision before the send's commit.
      const kinds = list.map((s) => s.kind);
      expect(kinds.indexOf('decided')).toBeLessThan(kinds.indexOf('sent'));
      expect(kinds.lastIndexOf('arrival')).toBe(kinds.length - 1);
      // The trace id is the decision's trace, as exported.
      const decide = await waitUntil(() => receiver.spans.find((s) => s.name === 'decide' && s.attributes['singleshot.message_key'] === doubtMessage), 'the decide span');
      expect(await page.locator('[data-fact="trace id"]').textContent()).toBe(decide.traceId);
      await page.screenshot({ path: '/tmp/story-in-doubt.png', fullPage: true });
      // The CLI tells the same story.
      expect(cliSteps(doubtMessage)).toEqual(list.map((s) => ({ kind: s.kind, of: s.of })));
    } finally {
      await context.close();
    }
  });

  it('tells a notification that went to the DLQ and was replayed, every step in order', async () => {
    const context = await browser!.newContext({ httpCredentials: { username: USER, password: PASSWORD }, viewport: { width: 1400, height: 900 } });
    try {
      await localOnly(context);
      const page = await context.newPage();
      expect((await page.goto(`${base}/admin/story/${deadKey}`))?.status()).toBe(200);
      expect(kindsOf(await steps(page), deadKey)).toEqual(['claim', 'attempt', 'dead', 'dlq']);
      await page.screenshot({ path: '/tmp/story-dlq.png', fullPage: true });

      const replay = await fetch(`${base}/admin/api/dlq/${deadKey}/replay`, { method: 'POST', headers: { authorization: auth } });
      expect(replay.status).toBe(202);
      await waitUntil(async () => (await statusOf(deadKey)) === 'sent', 'the replayed operation to be sent', { timeoutMs: 30_000 });
      await page.reload();
      const list = await steps(page);
      // The DLQ record is gone with the replay; the journal keeps the `dead` and the `replayed`.
      expect(kindsOf(list, deadKey)).toEqual(['claim', 'attempt', 'dead', 'replayed', 'claim', 'attempt', 'sent']);
      const titles = list.filter((s) => s.of === deadKey.slice(0, 12)).map((s) => s.title);
      expect(titles[1]).toContain('dead (HTTP_422)');
      expect(titles[3]).toContain(`replayed by ${USER} via api`);
      expect(titles[5]).toContain('primary took it');
      expect(await page.locator(`tr[data-operation="${deadKey}"] [data-status]`).textContent()).toBe('sent');
      await page.screenshot({ path: '/tmp/story-replayed.png', fullPage: true });
      expect(cliSteps(deadKey)).toEqual(list.map((s) => ({ kind: s.kind, of: s.of })));
    } finally {
      await context.close();
    }
  });

  it('names the problem with a bad or unknown key', async () => {
    const bad = await fetch(`${base}/admin/story?key=nope`, { headers: { authorization: auth }, redirect: 'manual' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('is not a message or operation key');
    const unknown = await fetch(`${base}/admin/story/${'0'.repeat(64)}`, { headers: { authorization: auth } });
    expect(unknown.status).toBe(404);
    const api = await fetch(`${base}/admin/api/story/${doubtKey}`, { headers: { authorization: auth } });
    expect(api.status).toBe(200);
    expect(((await api.json()) as { kind: string }).kind).toBe('operation');
  });
});
