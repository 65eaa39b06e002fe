import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerChecker, documentProblems } from '../support/openapi-check';
import { startSinkFleet, type SinkFleet } from '../support/sink-fleet';

// `/openapi.json` of ingest, served by a real fleet: the document must be
// valid OpenAPI 3.1, and every live answer below (success and failure
// statuses of every endpoint) must be documented and match its schema. The
// dashboard's admin document has its own: dashboard-openapi.test.ts.
const SECRET = 'openapi-test-secret-0123456789';
const SHOP_KEY = 'openapi-shop-key-0123456789abcdef';
const SLOW_KEY = 'openapi-slow-key-0123456789abcdef';

describe('OpenAPI documents against live answers', () => {
  let fleet: SinkFleet;
  let ingest: string;

  beforeAll(async () => {
    fleet = await startSinkFleet('ingest', {
      ingest: {
        port: 0,
        host: '127.0.0.1',
        signingSecrets: [SECRET],
        apiKeys: [
          { name: 'shop', key: SHOP_KEY, sources: ['shop'] },
          { name: 'slow', key: SLOW_KEY, sources: ['*'], rateLimit: { perSecond: 1, burst: 1 } },
        ],
        maxBodyBytes: 4096,
        enqueueTimeoutMs: 500,
      },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
      mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
    });
    ingest = `http://127.0.0.1:${await fleet.apps.metricsPort()}`;
  });

  afterAll(async () => {
    await fleet?.stop();
  });

  type Seen = { method: string; url: string; status: number; type: string | null; body: unknown };
  async function call(base: string, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Seen> {
    const res = await fetch(`${base}${path}`, { method, ...init });
    const text = await res.text();
    const type = res.headers.get('content-type');
    return { method, url: path, status: res.status, type, body: type?.includes('json') ? JSON.parse(text) : text };
  }
  const signed = (body: string) => ({ body, headers: { 'content-type': 'application/json', 'x-singleshot-signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` } });
  const mail = 'Message-ID: <m-1@example.test>\r\nFrom: a@example.test\r\nTo: support@example.test\r\nSubject: hi\r\n\r\nhello\r\n';
  const signedMail = { body: mail, headers: { 'content-type': 'message/rfc822', 'x-singleshot-signature': `sha256=${createHmac('sha256', SECRET).update(mail).digest('hex')}` } };

  it('ingest: the document is valid OpenAPI 3.1 and every answer matches it', async () => {
    const doc = (await call(ingest, 'GET', '/openapi.json')).body as object;
    const event = JSON.stringify({ id: 'evt-oa', source: 'shop', type: 'order.created', recipients: ['a@example.test'] });
    const answers: Seen[] = [
      await call(ingest, 'GET', '/openapi.json'),
      await call(ingest, 'POST', '/v1/events', signed(event)),
      await call(ingest, 'POST', '/v1/events', signed(event)),
      await call(ingest, 'POST', '/v1/events', signed('{not json')),
      await call(ingest, 'POST', '/v1/events', signed(JSON.stringify({ source: 'shop' }))),
      await call(ingest, 'POST', '/v1/events', signed(JSON.stringify({ source: 'shop', type: 't' }))),
      await call(ingest, 'POST', '/v1/events', { body: event, headers: { 'content-type': 'application/json' } }),
      await call(ingest, 'POST', '/v1/events', { body: JSON.stringify({ id: 'evt-key', source: 'shop', type: 't' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${SHOP_KEY}` } }),
      await call(ingest, 'POST', '/v1/events', { body: JSON.stringify({ id: 'evt-key', source: 'billing', type: 't' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${SHOP_KEY}` } }),
      await call(ingest, 'POST', '/v1/events', { body: JSON.stringify({ id: 'evt-slow-1', source: 'shop', type: 't' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${SLOW_KEY}` } }),
      await call(ingest, 'POST', '/v1/events', { body: JSON.stringify({ id: 'evt-slow-2', source: 'shop', type: 't' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${SLOW_KEY}` } }),
      await call(ingest, 'POST', '/v1/events', signed(JSON.stringify({ id: 'big', source: 'shop', type: 't', data: { pad: 'x'.repeat(5000) } }))),
      await call(ingest, 'POST', '/v1/mail/inbound?mailbox=support', signedMail),
      await call(ingest, 'POST', '/v1/mail/inbound?mailbox=nope', signedMail),
      await call(ingest, 'POST', '/v1/mail/inbound/postmark?mailbox=support', { body: '{}', headers: { 'content-type': 'application/json' } }),
      await call(ingest, 'GET', '/healthz'),
      await call(ingest, 'GET', '/readyz'),
      await call(ingest, 'GET', '/metrics'),
    ];
    // Redis away: the intake answers 503 with Retry-After, readiness 503.
    await fleet.redis.stop();
    answers.push(await call(ingest, 'POST', '/v1/events', signed(JSON.stringify({ id: 'evt-down', source: 'shop', type: 't' }))));
    answers.push(await call(ingest, 'GET', '/readyz'));
    await fleet.redis.restart();

    // The document is checked after the calls: compiling its schemas holds the event loop for seconds on a
    // loaded machine, which is then not spent between two calls on one kept-alive connection.
    expect(await documentProblems(doc)).toEqual([]);
    const check = answerChecker(doc);
    const problems = answers.flatMap((a) => check(a.method, a.url, a.status, a.type, a.body));
    expect(problems).toEqual([]);
    expect(answers.map((a) => a.status).sort()).toEqual(expect.arrayContaining([200, 202, 400, 401, 403, 404, 413, 429, 503]));
    // The checker bites: a body off its schema, an undocumented status or path.
    expect(check('POST', '/v1/events', 202, 'application/json', { messageKey: 'x', status: 'kept' })).toHaveLength(2);
    expect(check('POST', '/v1/events', 418, 'application/json', {})).toHaveLength(1);
    expect(check('GET', '/v1/nothing', 200, 'application/json', {})).toHaveLength(1);
  });
});
