import { sha256Hex as sha } from '@singleshot/core';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { parseRawMail } from '@singleshot/mail';
import type { DecideJobData } from '@singleshot/core';
import { startIngest, type IngestApp } from './server';

const MAX_BODY = 8_192;

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    ingest: { maxBodyBytes: MAX_BODY },
    mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
    providers: { log: [{ type: 'log', name: 'log' }] },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'log' }],
  });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${ingest.port}`;
  // Ingest listens before its fail-fast producer connection is up (a Redis
  // outage at start must not stop it): until /readyz says so, an event gets
  // 503. Under a loaded machine that window is long enough for the first test.
  for (let i = 0; i < 200 && (await fetch(`${base}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const postEvent = (event: unknown, headers: Record<string, string> = {}) => post('/v1/events', JSON.stringify(event), headers);

/** Sends a request with no body framing at all (no Content-Length, no chunking). */
function rawRequest(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(ingest.port, '127.0.0.1', () => socket.end(request));
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const errorOf = (a: Answer) => a.body.error as { code: string; message: string; details?: string[] };

describe('POST /v1/events', () => {
  it('answers 202 accepted, then duplicate for the same (source, id)', async () => {
    const event = { id: 'evt-1', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 'o-1' } };
    const first = await postEvent(event);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ messageKey: sha('shop:evt-1'), status: 'accepted' });
    const again = await postEvent({ ...event, data: { orderId: 'changed' } });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ messageKey: sha('shop:evt-1'), status: 'duplicate' });
    // Same id from another source is another event.
    const other = await postEvent({ ...event, source: 'billing' });
    expect(other.body).toEqual({ messageKey: sha('billing:evt-1'), status: 'accepted' });
  });

  it('has the decide job in Redis once it answered 202', async () => {
    const event = { id: 'evt-job', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 'o-2' } };
    const answer = await postEvent(event);
    expect(answer.status).toBe(202);
    const job = await rt.queues.decide.getJob(answer.body.messageKey as string);
    expect(job).toBeDefined();
    expect(job?.id).toBe(sha('shop:evt-job'));
    const data = job?.data as DecideJobData;
    expect(data.messageKey).toBe(sha('shop:evt-job'));
    expect(data.via).toBe('api');
    expect(data.input).toEqual({ kind: 'event', source: 'shop', eventId: 'evt-job', type: 'order.created', recipients: ['a@example.com'], data: { orderId: 'o-2' } });
    const record = await rt.messages.get(sha('shop:evt-job'));
    expect(record?.queuedAt).toBeGreaterThan(0);
  });

  it('takes the Idempotency-Key header in place of id', async () => {
    const withHeader = await postEvent({ id: 'body-id', source: 'shop', type: 't' }, { 'Idempotency-Key': 'idem-1' });
    expect(withHeader.body).toEqual({ messageKey: sha('shop:idem-1'), status: 'accepted' });
    const noBodyId = await postEvent({ source: 'shop', type: 't' }, { 'Idempotency-Key': ' idem-1 ' });
    expect(noBodyId.body).toEqual({ messageKey: sha('shop:idem-1'), status: 'duplicate' });
    const job = await rt.queues.decide.getJob(sha('shop:idem-1'));
    expect((job?.data as DecideJobData).input).toMatchObject({ eventId: 'idem-1' });
  });

  it('refuses an event without id with 400 MISSING_EVENT_ID', async () => {
    const answer = await postEvent({ source: 'shop', type: 'order.created' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('MISSING_EVENT_ID');
    const blankHeader = await postEvent({ source: 'shop', type: 'order.created' }, { 'Idempotency-Key': '   ' });
    expect(blankHeader.status).toBe(400);
    expect(errorOf(blankHeader).code).toBe('MISSING_EVENT_ID');
  });

  it('refuses invalid JSON with 400 INVALID_JSON', async () => {
    for (const body of ['{"id":', 'not json', '']) {
      const answer = await post('/v1/events', body);
      expect(answer.status, body).toBe(400);
      expect(errorOf(answer).code).toBe('INVALID_JSON');
    }
  });

  it('refuses a request without any body framing with 400, not 500', async () => {
    const response = await rawRequest('POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toContain('"INVALID_JSON"');
  });

  it('refuses schema errors with 400 INVALID_EVENT listing every path', async () => {
    const answer = await postEvent({ id: 'x', source: '', type: 7, recipients: ['ok@example.com', ''], data: 'nope' });
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('INVALID_EVENT');
    const paths = (error.details ?? []).map((d) => d.split(':')[0]);
    expect(paths).toEqual(expect.arrayContaining(['source', 'type', 'recipients.1', 'data']));
    for (const body of [[], 'string', null, 42]) {
      const answer = await postEvent(body);
      expect(answer.status).toBe(400);
      expect(errorOf(answer).code).toBe('INVALID_EVENT');
    }
  });

  it('refuses source "mail" (reserved for mail ingestion)', async () => {
    const answer = await postEvent({ id: 'm', source: 'mail', type: 'x' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('INVALID_EVENT');
    expect(errorOf(answer).details?.join(' ')).toMatch(/source/);
  });

  it('answers 413 BODY_TOO_LARGE in JSON past ingest.maxBodyBytes', async () => {
    const big = JSON.stringify({ id: 'big', source: 'shop', type: 't', data: { pad: 'x'.repeat(MAX_BODY) } });
    const answer = await post('/v1/events', big);
    expect(answer.status).toBe(413);
    expect(answer.headers.get('content-type')).toMatch(/application\/json/);
    expect(errorOf(answer).code).toBe('BODY_TOO_LARGE');
    expect(await rt.queues.decide.getJob(sha('shop:big'))).toBeUndefined();
  });

  it('accepts without signing configured, whatever signature header comes along', async () => {
    const answer = await postEvent({ id: 'unsigned', source: 'shop', type: 't' }, { 'X-Singleshot-Signature': 'sha256=bogus' });
    expect(answer.status).toBe(202);
  });
});

describe('POST /v1/mail/inbound (raw MIME)', () => {
  const mime = (messageId: string) =>
    Buffer.from(
      [
        'From: Alice <alice@example.com>',
        'To: support@example.test',
        'Subject: Printer on fire',
        'Date: Tue, 14 Nov 2023 22:13:20 +0000',
        `Message-ID: ${messageId}`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'It is really on fire.',
        '',
      ].join('\r\n'),
    );
  const postMail = (query: string, body: Buffer) => post(`/v1/mail/inbound${query}`, body, { 'content-type': 'message/rfc822' });

  it('refuses a missing mailbox with 400', async () => {
    const answer = await postMail('', mime('<a@example.com>'));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('MISSING_MAILBOX');
  });

  it('refuses an unknown mailbox with 404', async () => {
    const answer = await postMail('?mailbox=nobody', mime('<a@example.com>'));
    expect(answer.status).toBe(404);
    expect(errorOf(answer).code).toBe('UNKNOWN_MAILBOX');
  });

  it('refuses an empty body with 400', async () => {
    const answer = await postMail('?mailbox=support', Buffer.alloc(0));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('EMPTY_MAIL');
  });

  it('accepts a valid mail with the message key of parseRawMail, queued in Redis', async () => {
    const raw = mime('<Part.1@Example.COM>');
    const expected = await parseRawMail(raw, { mailboxId: 'support' });
    expect(expected.messageKey).toBe(sha('support:Part.1@example.com'));
    const answer = await postMail('?mailbox=support', raw);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ messageKey: expected.messageKey, status: 'accepted' });
    const job = await rt.queues.decide.getJob(expected.messageKey);
    expect((job?.data as DecideJobData).via).toBe('mail-raw');
    expect((job?.data as DecideJobData).input).toMatchObject({ kind: 'mail', mailboxId: 'support', subject: 'Printer on fire', identity: 'message-id' });
    // The same mail again (another spelling of its id) is a duplicate.
    const again = await postMail('?mailbox=support', mime('(resent) <Part.1@example.com>'));
    expect(again.body).toEqual({ messageKey: expected.messageKey, status: 'duplicate' });
  });

  it('keys a mail without Message-ID by its fingerprint and counts the fallback', async () => {
    const raw = Buffer.from('From: bob@example.com\r\nSubject: no id\r\nDate: Tue, 14 Nov 2023 22:13:20 +0000\r\n\r\nbody\r\n');
    const expected = await parseRawMail(raw, { mailboxId: 'support' });
    expect(expected.identityFallbackReason).toBe('missing');
    const answer = await postMail('?mailbox=support', raw);
    expect(answer.body).toEqual({ messageKey: expected.messageKey, status: 'accepted' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/singleshot_\w*fingerprint\w*\{source="mail-raw"\} 1\b/);
  });
});

describe('other endpoints', () => {
  it('answers 404 in JSON for an unknown path', async () => {
    const res = await fetch(`${base}/v2/nothing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const get = await fetch(`${base}/v1/events`);
    expect(get.status).toBe(404);
  });

  it('serves /healthz and /readyz', async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { redis: 'ok' } });
  });

  it('serves Prometheus metrics with events received by bounded source label', async () => {
    await postEvent({ id: 'label-1', source: 'some-unrouted-producer', type: 't' });
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('singleshot_events_received_total');
    expect(text).toMatch(/singleshot_events_received_total\{source="shop",result="accepted"\} [1-9]/);
    expect(text).toMatch(/singleshot_events_received_total\{source="shop",result="duplicate"\} [1-9]/);
    expect(text).toMatch(/singleshot_events_received_total\{source="other",result="accepted"\} [1-9]/);
    expect(text).not.toContain('some-unrouted-producer');
  });
});
