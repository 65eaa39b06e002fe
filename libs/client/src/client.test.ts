import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SendDeadlineError, SendRejectedError, createClient, type RetryInfo } from './index';

// A scripted stand-in for ingest: each request takes the next answer of `script`.
type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop';
let server: Server;
let base: string;
const script: Answer[] = [];
const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      const next = script.shift() ?? { status: 202, body: { messageKey: 'mk', status: 'accepted' } };
      if (next === 'drop') return void req.socket.destroy();
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(next.body === undefined ? '' : JSON.stringify(next.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const event = (id: string) => ({ id, source: 'shop', type: 'order.created', recipients: ['a@example.test'], data: { n: 1 } });

describe('send', () => {
  it('retries 503, 429 and a dropped connection with the same body, waiting at least Retry-After', async () => {
    seen.length = 0;
    script.push({ status: 503, headers: { 'retry-after': '1' }, body: { error: { code: 'STORE_UNAVAILABLE', message: 'retry' } } }, { status: 429, headers: { 'retry-after': '0' } }, 'drop');
    const retries: RetryInfo[] = [];
    const client = createClient({ baseUrl: base, apiKey: 'k-1', backoff: { baseMs: 10, capMs: 50 }, onRetry: (i) => retries.push(i) });
    const result = await client.send(event('evt-1'));
    expect(result).toEqual({ messageKey: 'mk', status: 'accepted', attempts: 4 });
    // fetch (undici) reports the closed connection as UND_ERR_SOCKET or ECONNRESET, by who noticed first.
    expect(retries.map((r) => r.code)).toEqual(['HTTP_503', 'HTTP_429', expect.stringMatching(/^(UND_ERR_SOCKET|ECONNRESET)$/)]);
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(1000);
    expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    expect(JSON.parse(seen[0]?.body as string).id).toBe('evt-1');
    expect(seen.every((s) => s.headers.authorization === 'Bearer k-1')).toBe(true);
  });

  it('signs the raw body with the HMAC header', async () => {
    seen.length = 0;
    const { createHmac } = await import('node:crypto');
    await createClient({ baseUrl: base, signingSecret: 's3cret' }).send(event('evt-2'));
    const { headers, body } = seen[0] as { headers: IncomingHttpHeaders; body: string };
    expect(headers['x-singleshot-signature']).toBe(`sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
    expect(headers.authorization).toBeUndefined();
  });

  it('a 400 is final: SendRejectedError with the server code, no retry', async () => {
    seen.length = 0;
    script.push({ status: 400, body: { error: { code: 'INVALID_EVENT', message: 'the event is invalid', details: ['type: required'] } } });
    const err = await createClient({ baseUrl: base }).send(event('evt-3')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendRejectedError);
    expect(err).toMatchObject({ code: 'INVALID_EVENT', status: 400, details: ['type: required'] });
    expect(seen).toHaveLength(1);
  });

  it('gives up at the deadline with DEADLINE_EXCEEDED and the last cause', async () => {
    const refused = createServer();
    await new Promise<void>((r) => refused.listen(0, '127.0.0.1', r));
    const address = refused.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((r) => refused.close(() => r()));
    const err = await createClient({ baseUrl: `http://127.0.0.1:${port}`, deadlineMs: 300, backoff: { baseMs: 20, capMs: 40 } }).send(event('evt-4')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendDeadlineError);
    expect(err).toMatchObject({ code: 'DEADLINE_EXCEEDED', lastCode: 'ECONNREFUSED' });
    expect((err as SendDeadlineError).attempts).toBeGreaterThanOrEqual(1);
  });

  it('an attempt cut short by the deadline reports the failure before it, not ATTEMPT_TIMEOUT', async () => {
    // First answer 503, then hold every request: the second attempt's timeout is the time left.
    let requests = 0;
    const held: Array<() => void> = [];
    const flaky = createServer((req, res) => {
      requests++;
      if (requests === 1) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"STORE_UNAVAILABLE","message":"x"}}');
        return;
      }
      held.push(() => res.destroy());
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const address = flaky.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const err = await createClient({ baseUrl: `http://127.0.0.1:${port}`, deadlineMs: 400, attemptTimeoutMs: 60_000, backoff: { baseMs: 10, capMs: 10 } })
        .send(event('evt-cut'))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SendDeadlineError);
      expect(err).toMatchObject({ code: 'DEADLINE_EXCEEDED', lastCode: 'HTTP_503' });
      expect(requests).toBe(2);
    } finally {
      for (const release of held) release();
      await new Promise<void>((r) => flaky.close(() => r()));
    }
  });

  it('refuses an event without an id before any request', async () => {
    seen.length = 0;
    await expect(createClient({ baseUrl: base }).send({ ...event('x'), id: ' ' })).rejects.toMatchObject({ code: 'INVALID_EVENT' });
    expect(seen).toHaveLength(0);
  });
});
