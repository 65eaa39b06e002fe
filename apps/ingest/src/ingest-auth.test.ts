import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { parseConfig } from '@singleshot/config';
import { createLogger } from '@singleshot/observability';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { IngestStartError, resolveIngestHost } from './producer-auth';
import { startIngest, type IngestApp } from './server';

// Producer authentication: without credentials ingest must not take events
// from anyone who can reach it.
const SHOP_OLD = 'shop-key-old-0123456789abcdef';
const SHOP_NEW = 'shop-key-new-0123456789abcdef';
const BILLING = 'billing-key-0123456789abcdef';

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;
const logLines: string[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'ingest-keys-'));
  writeFileSync(join(dir, 'shop-new'), `${SHOP_NEW}\n`);
  const config = parseConfig(
    {
      redis: { url: redis.url },
      log: { level: 'info' },
      ingest: {
        host: '127.0.0.1',
        apiKeys: [
          { name: 'shop-old', key: SHOP_OLD, sources: ['shop'] },
          { name: 'shop-new', keyFile: 'shop-new', sources: ['shop'] },
          { name: 'billing', keyEnv: 'TEST_BILLING_KEY', sources: ['billing', 'mail'], rateLimit: { perSecond: 1, burst: 3 } },
        ],
      },
      mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
      providers: { log: [{ type: 'log', name: 'log' }] },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'log' }],
    },
    { TEST_BILLING_KEY: BILLING },
    { baseDir: dir },
  );
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) });
  rt = await createRuntime(config, { app: 'test', logger: createLogger({ app: 'test', level: 'debug', destination: sink }) });
  ingest = await startIngest(rt, { port: 0 });
  base = `http://127.0.0.1:${ingest.port}`;
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: (text ? JSON.parse(text) : {}) as { error?: { code: string; details?: unknown } } };
}
const event = (source: string, id: string) => JSON.stringify({ id, source, type: 'order.created', recipients: ['a@example.com'], data: {} });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('producer API keys', () => {
  it('401 without a key or with a wrong one; nothing is queued', async () => {
    const none = await post('/v1/events', event('shop', 'e-none'));
    expect(none.status).toBe(401);
    expect(none.json.error?.code).toBe('UNAUTHORIZED');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post('/v1/events', event('shop', 'e-bad'), bearer('nope-0123456789abcdef'))).status).toBe(401);
    expect((await post('/v1/events', event('shop', 'e-basic'), { authorization: `Basic ${Buffer.from(`x:${SHOP_OLD}`).toString('base64')}` })).status).toBe(401);
    expect(await rt.queues.decide.count()).toBe(0);
  });

  it('each of several keys for a source is accepted (rotation), from config, file and environment', async () => {
    expect((await post('/v1/events', event('shop', 'e-old'), bearer(SHOP_OLD))).status).toBe(202);
    expect((await post('/v1/events', event('shop', 'e-new'), bearer(SHOP_NEW))).status).toBe(202);
    expect((await post('/v1/events', event('billing', 'e-bill'), bearer(BILLING))).status).toBe(202);
  });

  it('403 with a JSON error for a source the key may not post', async () => {
    const denied = await post('/v1/events', event('billing', 'e-x'), bearer(SHOP_OLD));
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'SOURCE_NOT_ALLOWED', details: { key: 'shop-old', source: 'billing' } });
    const mail = await fetch(`${base}/v1/mail/inbound?mailbox=support`, {
      method: 'POST',
      body: 'Message-ID: <m1@x>\r\nSubject: hi\r\n\r\nbody',
      headers: { 'content-type': 'message/rfc822', ...bearer(SHOP_NEW) },
    });
    expect(mail.status).toBe(403);
    const mailOk = await fetch(`${base}/v1/mail/inbound?mailbox=support`, {
      method: 'POST',
      body: 'Message-ID: <m1@x>\r\nSubject: hi\r\n\r\nbody',
      headers: { 'content-type': 'message/rfc822', ...bearer(BILLING) },
    });
    expect(mailOk.status).toBe(202);
  });

  it('counts requests by key name, and never writes a key to the logs or metrics', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/singleshot_ingest_requests_total\{key="shop-old",status="202"\} 1/);
    expect(text).toMatch(/singleshot_ingest_requests_total\{key="shop-old",status="403"\} 1/);
    expect(text).toMatch(/singleshot_ingest_requests_total\{key="none",status="401"\} 3/);
    for (const key of [SHOP_OLD, SHOP_NEW, BILLING]) {
      expect(text).not.toContain(key);
      expect(logLines.join('')).not.toContain(key);
    }
    expect(logLines.length).toBeGreaterThan(0);
  });

  it('429 with Retry-After past a key’s rate limit', async () => {
    // billing: burst 3, 1 per second; two were used above.
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post('/v1/events', event('billing', `r-${i}`), bearer(BILLING)));
    const limited = answers.find((a) => a.status === 429);
    expect(limited?.json.error?.code).toBe('RATE_LIMITED');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Other keys have their own buckets.
    expect((await post('/v1/events', event('shop', 'e-after'), bearer(SHOP_OLD))).status).toBe(202);
  });
});

describe('where ingest listens', () => {
  const ingestConfig = (input: Record<string, unknown>) => parseConfig({ ingest: input }).ingest;

  it('loopback by default without credentials; every interface with them', () => {
    expect(resolveIngestHost(ingestConfig({}))).toBe('127.0.0.1');
    expect(resolveIngestHost(ingestConfig({ apiKeys: [{ name: 'k', key: SHOP_OLD, sources: ['*'] }] }))).toBe('0.0.0.0');
    expect(resolveIngestHost(ingestConfig({ signingSecrets: ['s'] }))).toBe('0.0.0.0');
  });

  it('refuses any other host without credentials (INGEST_AUTH_REQUIRED) unless allowAnonymous', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5']) {
      let err: unknown;
      try {
        resolveIngestHost(ingestConfig({ host }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IngestStartError);
      expect((err as IngestStartError).code).toBe('INGEST_AUTH_REQUIRED');
    }
    expect(resolveIngestHost(ingestConfig({ host: '0.0.0.0', allowAnonymous: true }))).toBe('0.0.0.0');
  });

  it('rejects short keys and an unset key variable at config load', () => {
    expect(() => parseConfig({ ingest: { apiKeys: [{ name: 'k', key: 'short', sources: ['shop'] }] } })).toThrow(/at least 16/);
    expect(() => parseConfig({ ingest: { apiKeys: [{ name: 'k', keyEnv: 'NOPE_UNSET', sources: ['shop'] }] } }, {})).toThrow(/NOPE_UNSET is unset/);
  });
});
