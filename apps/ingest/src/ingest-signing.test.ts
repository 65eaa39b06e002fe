import { sha256Hex as sha } from '@singleshot/core';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startIngest, type IngestApp } from './server';
import { SIGNATURE_HEADER, signBody } from './signature';

const OLD_SECRET = 'old-secret-0123456789';
const NEW_SECRET = 'new-secret-9876543210';

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    ingest: { signingSecrets: [NEW_SECRET, OLD_SECRET] },
    mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
  });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${ingest.port}`;
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: res.status, body: (await res.json()) as { messageKey?: string; status?: string; error?: { code: string } } };
}

const event = (id: string) => JSON.stringify({ id, source: 'shop', type: 'order.created', data: { n: 1 } });

describe('signed ingest', () => {
  it('refuses a missing signature with 401 and keeps nothing', async () => {
    const answer = await post('/v1/events', event('s-missing'));
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('BAD_SIGNATURE');
    expect(await rt.queues.decide.getJob(sha('shop:s-missing'))).toBeUndefined();
  });

  it('refuses a bad signature with 401', async () => {
    const body = event('s-bad');
    for (const header of [
      signBody(body, 'wrong-secret'),
      signBody(event('other'), NEW_SECRET),
      'sha256=zz',
      'sha256=' + 'ab'.repeat(31),
      signBody(body, NEW_SECRET).replace('sha256=', 'sha1='),
      'garbage',
    ]) {
      const answer = await post('/v1/events', body, { [SIGNATURE_HEADER]: header });
      expect(answer.status, header).toBe(401);
      expect(answer.body.error?.code).toBe('BAD_SIGNATURE');
    }
    expect(await rt.queues.decide.getJob(sha('shop:s-bad'))).toBeUndefined();
  });

  it('accepts a body signed with signBody', async () => {
    const body = event('s-good');
    const answer = await post('/v1/events', body, { [SIGNATURE_HEADER]: signBody(body, NEW_SECRET) });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ messageKey: sha('shop:s-good'), status: 'accepted' });
  });

  it('accepts both secrets during a rotation (upper-case hex too)', async () => {
    const a = event('s-rot-new');
    const b = event('s-rot-old');
    expect((await post('/v1/events', a, { [SIGNATURE_HEADER]: signBody(a, NEW_SECRET) })).status).toBe(202);
    const upper = `sha256=${signBody(b, OLD_SECRET).slice('sha256='.length).toUpperCase()}`;
    expect((await post('/v1/events', b, { [SIGNATURE_HEADER]: upper })).status).toBe(202);
  });

  it('checks the signature over the exact bytes (re-serialized JSON fails)', async () => {
    const body = '{ "id": "s-bytes", "source": "shop", "type": "t" }';
    const reserialized = JSON.stringify(JSON.parse(body));
    const answer = await post('/v1/events', body, { [SIGNATURE_HEADER]: signBody(reserialized, NEW_SECRET) });
    expect(answer.status).toBe(401);
  });

  it('signs raw mail too', async () => {
    const mail = 'From: a@example.com\r\nMessage-ID: <signed@example.com>\r\nSubject: hi\r\n\r\nbody\r\n';
    const unsigned = await post('/v1/mail/inbound?mailbox=support', mail, { 'content-type': 'message/rfc822' });
    expect(unsigned.status).toBe(401);
    const signed = await post('/v1/mail/inbound?mailbox=support', mail, {
      'content-type': 'message/rfc822',
      [SIGNATURE_HEADER]: signBody(mail, OLD_SECRET),
    });
    expect(signed.status).toBe(202);
    expect(signed.body.messageKey).toBe(sha('support:signed@example.com'));
  });

  it('answers 400, not 500, to a signed request without any body framing', async () => {
    const header = signBody('', NEW_SECRET);
    const response = await new Promise<string>((resolve, reject) => {
      const socket = connect(ingest.port, '127.0.0.1', () =>
        socket.end(`POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n${SIGNATURE_HEADER}: ${header}\r\nConnection: close\r\n\r\n`),
      );
      let out = '';
      socket.on('data', (c: Buffer) => (out += c.toString()));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    // The empty body is correctly signed: it gets past the signature and fails as JSON.
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toContain('"INVALID_JSON"');
  });
});
