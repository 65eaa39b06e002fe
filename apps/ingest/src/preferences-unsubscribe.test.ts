import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUnsubscribeToken } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { createLogger } from '@singleshot/observability';
import { createRuntime, unsubscribeLinks, unsubscribeSecret, type Runtime } from '@singleshot/runtime';
import { Suppressions } from '@singleshot/store';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { startIngest, type IngestApp } from './server';

// The preferences API and the one-click unsubscribe endpoint against a real
// redis-server: what each answers and what it writes (read back from the
// recipient's record).
const KEY = 'shop-key-0123456789abcdef';
let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;
let suppressions: Suppressions;
const logLines: string[] = [];
const auth = { authorization: `Bearer ${KEY}` };

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    ingest: { host: '127.0.0.1', apiKeys: [{ name: 'shop', key: KEY, sources: ['shop'] }] },
    unsubscribe: { publicBaseUrl: 'https://notify.example.test/' },
    providers: { log: [{ type: 'log', name: 'log' }] },
  });
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) });
  rt = await createRuntime(config, { app: 'test', logger: createLogger({ app: 'test', level: 'debug', destination: sink }) });
  ingest = await startIngest(rt, { port: 0, pollers: false });
  base = `http://127.0.0.1:${ingest.port}`;
  suppressions = new Suppressions(rt.redis, rt.keys, { retentionMs: rt.retentionMs });
  await waitUntil(async () => (await fetch(`${base}/readyz`)).status === 200 || undefined, 'the producer connection');
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

const put = (recipient: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(`${base}/v1/preferences/${encodeURIComponent(recipient)}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

describe('PUT and GET /v1/preferences/{recipient}', () => {
  it('replaces the opt-outs of the normalized recipient and answers them with their version', async () => {
    const first = await put(' Ada@Example.TEST ', { optOuts: [{ channel: 'email', category: 'news' }, { category: 'promo' }] });
    expect(first.status).toBe(200);
    const a = (await first.json()) as { recipient: string; optOuts: unknown[]; version: number };
    expect(a).toEqual({ recipient: 'ada@example.test', optOuts: [{ category: 'promo' }, { channel: 'email', category: 'news' }], version: 1 });
    const record = await suppressions.get('ada@example.test');
    expect(record.optOuts.map(({ channel, category }) => ({ channel, category })).sort((x, y) => String(x.category).localeCompare(String(y.category)))).toEqual([
      { channel: 'email', category: 'news' },
      { channel: undefined, category: 'promo' },
    ]);
    expect(record.optOuts.every((o) => o.by === 'producer:shop')).toBe(true);

    const second = await put('ada@example.test', { optOuts: [{ channel: 'sms' }] });
    expect(await second.json()).toEqual({ recipient: 'ada@example.test', optOuts: [{ channel: 'sms' }], version: 2 });
    const read = await fetch(`${base}/v1/preferences/ADA%40example.test`, { headers: auth });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ recipient: 'ada@example.test', optOuts: [{ channel: 'sms' }], version: 2 });
    const never = await fetch(`${base}/v1/preferences/nobody%40example.test`, { headers: auth });
    expect(await never.json()).toEqual({ recipient: 'nobody@example.test', optOuts: [], version: 0 });
  });

  it('refuses bad bodies and recipients with a 400 naming the problem, and writes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'INVALID_PREFERENCES'],
      [{ optOuts: [{ channel: 'e mail' }] }, 'INVALID_PREFERENCES'],
      [{ optOuts: [{ chanel: 'email' }] }, 'INVALID_PREFERENCES'],
      [{ optOuts: 'all' }, 'INVALID_PREFERENCES'],
    ];
    for (const [body, code] of cases) {
      const res = await put('bob@example.test', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    const notJson = await fetch(`${base}/v1/preferences/bob%40example.test`, { method: 'PUT', body: '{', headers: { 'content-type': 'application/json', ...auth } });
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe('INVALID_JSON');
    const control = await fetch(`${base}/v1/preferences/bob%0A%40example.test`, { method: 'PUT', body: '{"optOuts":[]}', headers: { 'content-type': 'application/json', ...auth } });
    expect(control.status).toBe(400);
    expect(((await control.json()) as { error: { code: string } }).error.code).toBe('INVALID_PREFERENCES');
    expect((await suppressions.get('bob@example.test')).version).toBe(0);
  });

  it('needs producer credentials', async () => {
    expect((await put('carol@example.test', { optOuts: [] }, {})).status).toBe(401);
    expect((await fetch(`${base}/v1/preferences/carol%40example.test`)).status).toBe(401);
    expect((await suppressions.get('carol@example.test')).version).toBe(0);
  });
});

describe('/v1/unsubscribe/<token>', () => {
  const linkFor = async (recipient: string, category = 'news') => {
    const links = unsubscribeLinks({ redis: rt.redis, keys: rt.keys, config: rt.config.unsubscribe });
    const { url } = await (links as NonNullable<typeof links>).link({ recipient, channel: 'email', category });
    expect(url.startsWith('https://notify.example.test/v1/unsubscribe/')).toBe(true);
    return `${base}${new URL(url).pathname}`;
  };

  it('GET shows the button and changes nothing; POST opts out once; a repeated POST answers the same and writes nothing', async () => {
    await put('dan@example.test', { optOuts: [{ channel: 'sms', category: 'promo' }] });
    const url = await linkFor('dan@example.test');
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/v1/unsubscribe/');
    expect(html).toContain('id="unsubscribe"');
    expect((await suppressions.get('dan@example.test')).version).toBe(1);

    const first = await fetch(url, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(first.status).toBe(200);
    const done = await first.text();
    expect(done).toContain('id="done"');
    const after = await suppressions.get('dan@example.test');
    expect(after.version).toBe(2);
    expect(after.optOuts.map(({ channel, category }) => `${channel}/${category}`).sort()).toEqual(['email/news', 'sms/promo']);

    const again = await fetch(url, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(done);
    expect((await suppressions.get('dan@example.test')).version).toBe(2);
  });

  it('writes nothing when a broader opt-out already covers the link', async () => {
    await put('erin@example.test', { optOuts: [{ channel: 'email' }] });
    const res = await fetch(await linkFor('erin@example.test'), { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await suppressions.get('erin@example.test')).version).toBe(1);
  });

  it('refuses a tampered token (400) and an expired one (410) with their code, changing nothing and logging no token', async () => {
    const url = await linkFor('fay@example.test');
    const token = url.slice(url.lastIndexOf('/') + 1);
    const tampered = `${base}/v1/unsubscribe/${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const method of ['GET', 'POST']) {
      const res = await fetch(tampered, { method });
      expect(res.status, method).toBe(400);
      expect(await res.text()).toContain('<code id="code">BAD_UNSUBSCRIBE_TOKEN</code>');
    }
    const secret = await unsubscribeSecret(rt.redis, rt.keys, undefined);
    const expired = signUnsubscribeToken({ recipient: 'fay@example.test', channel: 'email', category: 'news', exp: Date.now() - 1_000 }, secret);
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${base}/v1/unsubscribe/${expired}`, { method });
      expect(res.status, method).toBe(410);
      expect(await res.text()).toContain('<code id="code">UNSUBSCRIBE_EXPIRED</code>');
    }
    expect((await fetch(`${base}/v1/unsubscribe/garbage`, { method: 'POST' })).status).toBe(400);
    expect((await suppressions.get('fay@example.test')).version).toBe(0);
    const refusals = logLines.filter((l) => l.includes('"event":"unsubscribe_refused"'));
    expect(refusals.length).toBeGreaterThanOrEqual(5);
    expect(logLines.some((l) => l.includes(token.slice(0, 24)) || l.includes(expired.slice(0, 24)))).toBe(false);
  });
});
