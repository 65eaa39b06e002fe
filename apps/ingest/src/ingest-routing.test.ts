import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex as sha } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { RouteMatcher } from './http/route-match';
import { ingestRoutes } from './route-table';
import { startIngest, type IngestApp } from './server';

// One route table on one server with one gate: `POST /v1/events` and its
// other spelling `/v1/events/` (trailing slash) answer the same requests side
// by side, with the same metrics, and every route shares the in-flight cap
// and each key's rate bucket.
const SHOP = 'fast-path-shop-key-0123456789abcdef';
const SLOW = 'fast-path-slow-key-0123456789abcdef';
const MAX_BODY = 2_048;

let redis: TestRedis;
let rt: Runtime;
const started: IngestApp[] = [];
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    ingest: {
      host: '127.0.0.1',
      maxBodyBytes: MAX_BODY,
      apiKeys: [
        { name: 'shop', key: SHOP, sources: ['shop', 'mail'] },
        { name: 'slow', key: SLOW, sources: ['*'], rateLimit: { perSecond: 1, burst: 1 } },
      ],
    },
    mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
    providers: { log: [{ type: 'log', name: 'log' }] },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'log' }],
  });
  rt = await createRuntime(config, { app: 'test' });
  base = `127.0.0.1:${(await ingestWith({})).port}`;
  await waitUntil(async () => (await fetch(`http://${base}/readyz`)).status === 200 || undefined, 'the producer connection');
});

afterAll(async () => {
  for (const app of started) await app.close();
  await rt?.close();
  await redis?.destroy();
});

async function ingestWith(overrides: Partial<Runtime['config']['ingest']>): Promise<IngestApp> {
  const app = await startIngest({ ...rt, config: { ...rt.config, ingest: { ...rt.config.ingest, ...overrides } } }, { port: 0, host: '127.0.0.1', pollers: false });
  started.push(app);
  return app;
}

interface Seen {
  status: number;
  type: string | null;
  retryAfter: string | null;
  challenge: string | null;
  body: unknown;
}

async function call(path: string, body: string | Buffer, headers: Record<string, string> = {}, host = base): Promise<Seen> {
  const res = await fetch(`http://${host}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), challenge: res.headers.get('www-authenticate'), body: JSON.parse(text) as unknown };
}

const shop = { authorization: `Bearer ${SHOP}` };
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** Every answer of the route but the 429 and the 503s, posted to `path`; ids carry `tag` so the two runs do not meet. */
async function everyAnswer(path: string, tag: string): Promise<Seen[]> {
  const event = (id: string, more: Record<string, unknown> = {}) => JSON.stringify({ id: `${tag}-${id}`, source: 'shop', type: 'order.created', recipients: ['a@example.com'], ...more });
  const answers = [
    await call(path, event('1'), shop),
    await call(path, event('1', { data: { changed: true } }), shop),
    await call(path, JSON.stringify({ source: 'shop', type: 't' }), { ...shop, 'idempotency-key': ` ${tag}-idem ` }),
    await call(path, '{"id":', shop),
    await call(path, '', shop),
    await call(path, event('deep', { data: { x: JSON.parse(nested(70)) as unknown } }), shop),
    await call(path, JSON.stringify({ id: 'x', source: '', type: 7, recipients: [''] }), shop),
    await call(path, JSON.stringify({ source: 'shop', type: 't' }), shop),
    await call(path, JSON.stringify({ id: `${tag}-b`, source: 'billing', type: 't' }), shop),
    await call(path, event('noauth')),
    await call(path, event('badkey'), { authorization: 'Bearer not-a-key' }),
    await call(path, event('big', { data: { pad: 'x'.repeat(MAX_BODY) } }), shop),
  ];
  // The message key is of this run's ids: check it, then compare the rest.
  return answers.map((a) => {
    const body = a.body as { messageKey?: string };
    if (typeof body.messageKey !== 'string') return a;
    expect([sha(`shop:${tag}-1`), sha(`shop:${tag}-idem`)]).toContain(body.messageKey);
    return { ...a, body: { ...body, messageKey: body.messageKey === sha(`shop:${tag}-1`) ? 'id' : 'idem' } };
  });
}

type Series = Record<string, number>;
async function metricSeries(): Promise<Series> {
  const out: Series = {};
  const wanted = ['singleshot_ingest_requests_total', 'singleshot_ingest_request_duration_seconds', 'singleshot_events_received_total', 'singleshot_duplicates_suppressed_total'];
  for (const metric of await rt.metrics.registry.getMetricsAsJSON()) {
    if (!wanted.includes(metric.name)) continue;
    for (const v of metric.values as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>) {
      // A histogram is compared by its count per label set (durations differ by nature).
      if (v.metricName !== undefined && !v.metricName.endsWith('_count') && v.metricName !== metric.name) continue;
      out[`${v.metricName ?? metric.name}${JSON.stringify(v.labels)}`] = v.value;
    }
  }
  return out;
}
const delta = (after: Series, before: Series): Series => Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));

describe('POST /v1/events through the route table', () => {
  it('answers every outcome the same under both spellings, with the same metrics', async () => {
    const m0 = await metricSeries();
    const fast = await everyAnswer('/v1/events', 'fast');
    const m1 = await metricSeries();
    const slash = await everyAnswer('/v1/events/', 'express');
    const m2 = await metricSeries();
    expect(fast).toEqual(slash);
    expect(fast.map((a) => a.status)).toEqual([202, 202, 202, 400, 400, 400, 400, 400, 403, 401, 401, 413]);
    expect(fast[0]?.body).toEqual({ messageKey: 'id', status: 'accepted' });
    expect(fast[1]?.body).toEqual({ messageKey: 'id', status: 'duplicate' });
    expect(fast[9]?.challenge).toBe('Bearer realm="singleshot"');
    expect(delta(m1, m0)).toEqual(delta(m2, m1));
    expect(delta(m1, m0)).toMatchObject({
      'singleshot_ingest_requests_total{"key":"shop","status":"202"}': 3,
      'singleshot_ingest_requests_total{"key":"none","status":"401"}': 2,
      'singleshot_ingest_request_duration_seconds_count{"route":"/v1/events","status":"202"}': 3,
      'singleshot_ingest_request_duration_seconds_count{"route":"unmatched","status":"413"}': 1,
      'singleshot_events_received_total{"source":"shop","result":"accepted"}': 2,
      'singleshot_duplicates_suppressed_total{"stage":"ingest","reason":"seen_before"}': 1,
    });
  });

  it('counts every route against the one rate bucket of a key (429 with Retry-After)', async () => {
    const body = (id: string) => JSON.stringify({ id, source: 'shop', type: 't' });
    // The bucket refills one token a second: should one come back between the
    // two posts, try again. A bucket per route would give the mail post a 202 or 400 every time.
    let mail: Seen | undefined;
    for (let attempt = 0; attempt < 5 && mail?.status !== 429; attempt++) {
      await waitUntil(async () => (await call('/v1/events', body(`slow-${attempt}`), { authorization: `Bearer ${SLOW}` })).status === 429 || undefined, 'the bucket to be empty');
      mail = await call('/v1/mail/inbound?mailbox=support', body(`slow-e-${attempt}`), { authorization: `Bearer ${SLOW}` });
    }
    expect(mail?.status).toBe(429);
    expect(mail?.retryAfter).toMatch(/^\d+$/);
    expect(mail?.body).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it('shares the in-flight cap among routes and spellings, both ways (503 OVERLOADED)', async () => {
    const host = `127.0.0.1:${(await ingestWith({ maxRequestsInFlight: 1 })).port}`;
    for (const [held, probe] of [
      ['/v1/events', '/v1/mail/inbound?mailbox=support'],
      ['/v1/events/', '/v1/events'],
    ] as const) {
      const socket = await hold(host, held);
      const shed = await waitUntil(async () => {
        const answer = await call(probe, '{}', shop, host);
        return answer.status === 503 ? answer : undefined;
      }, `a post to ${probe} to be shed while ${held} is in flight`);
      expect(shed.retryAfter).toBe('1');
      expect(shed.body).toMatchObject({ error: { code: 'OVERLOADED' } });
      socket.destroy();
      await waitUntil(async () => (await call(probe, '{}', shop, host)).status !== 503 || undefined, 'the cap to be free again');
    }
  });
});

/** A request to `path` whose body never finishes: it stays in flight until the socket is destroyed. */
function hold(host: string, path: string): Promise<Socket> {
  const [h, port] = host.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), h, () => {
      s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${SHOP}\r\nContent-Length: 100\r\n\r\n{"id":`);
      resolve(s);
    });
    s.on('error', () => undefined);
    s.once('error', reject);
  });
}

describe('routing', () => {
  it('matches paths as Express did: any case, one trailing slash, a query, HEAD as GET', () => {
    const routes = ingestRoutes({ ctx: (started[0] as IngestApp).ctx, registry: rt.metrics.registry, ready: async () => ({ ok: true, checks: {} }) });
    const matcher = new RouteMatcher(routes);
    const pathOf = (method: string, path: string) => {
      const m = matcher.match(method, path);
      return m && 'route' in m ? m.route.path : undefined;
    };
    for (const path of ['/v1/events', '/v1/events/', '/V1/Events']) expect(pathOf('POST', path), path).toBe('/v1/events');
    expect(pathOf('POST', '/v1/mail/inbound/')).toBe('/v1/mail/inbound');
    expect(pathOf('HEAD', '/healthz')).toBe('/healthz');
    for (const [method, path] of [
      ['GET', '/v1/events'],
      ['PUT', '/v1/events'],
      ['POST', '/v1/events//'],
      ['POST', '/v1/eventsx'],
      ['POST', '/v1/events/x'],
      ['POST', '/v1/mail/inbound/a/b/c'],
    ] as const) {
      expect(pathOf(method, path), `${method} ${path}`).toBeUndefined();
    }
  });

  it('a compressed body is inflated; an unknown encoding is 415', async () => {
    const body = gzipSync(JSON.stringify({ id: 'gz-1', source: 'shop', type: 't' }));
    const answer = await call('/v1/events', body, { ...shop, 'content-encoding': 'gzip' });
    expect(answer).toMatchObject({ status: 202, body: { messageKey: sha('shop:gz-1'), status: 'accepted' } });
    const unknown = await call('/v1/events', JSON.stringify({ id: 'gz-2', source: 'shop', type: 't' }), { ...shop, 'content-encoding': 'compress' });
    expect(unknown).toMatchObject({ status: 415, body: { error: { code: 'BAD_REQUEST', message: 'unsupported content encoding "compress"' } } });
    // Bytes that do not inflate: a 400 naming zlib's complaint, never a 500.
    const corrupt = await call('/v1/events', Buffer.from('not gzip at all'), { ...shop, 'content-encoding': 'gzip' });
    expect(corrupt).toMatchObject({ status: 400, body: { error: { code: 'BAD_REQUEST', message: 'incorrect header check' } } });
    // Past the limit once inflated, however small compressed.
    const bomb = gzipSync(JSON.stringify({ id: 'gz-3', source: 'shop', type: 't', data: { pad: 'x'.repeat(4 * MAX_BODY) } }));
    expect(bomb.length).toBeLessThan(MAX_BODY);
    expect(await call('/v1/events', bomb, { ...shop, 'content-encoding': 'gzip' })).toMatchObject({ status: 413, body: { error: { code: 'BODY_TOO_LARGE' } } });
  });

  it('other methods, spellings and absolute-form targets', async () => {
    const get = await fetch(`http://${base}/v1/events`, { headers: shop });
    expect(get.status).toBe(404);
    expect(await get.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const upper = await call('/V1/EVENTS', JSON.stringify({ id: 'upper-1', source: 'shop', type: 't' }), shop);
    expect(upper).toMatchObject({ status: 202, body: { messageKey: sha('shop:upper-1'), status: 'accepted' } });
    expect((await fetch(`http://${base}/healthz`)).status).toBe(200);
    const absolute = await rawPost(`http://${base}/v1/events`, JSON.stringify({ id: 'abs-1', source: 'shop', type: 't' }));
    expect(absolute).toMatch(/^HTTP\/1\.1 202 /);
  });
});

/** A POST with an absolute-form request target (fetch always sends origin-form). */
function rawPost(target: string, body: string): Promise<string> {
  const [h, port] = base.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), h, () => {
      s.write(`POST ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nAuthorization: Bearer ${SHOP}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    let out = '';
    s.on('data', (c: Buffer) => (out += c.toString()));
    s.on('end', () => resolve(out));
    s.once('error', reject);
  });
}
