import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startIngest, type IngestApp } from './server';

// Bad input and slow or many clients: each gets a clear 4xx or is cut off,
// never a 5xx or a socket held open.
let redis: TestRedis;
let rt: Runtime;
const started: IngestApp[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    providers: { log: [{ type: 'log', name: 'log' }] },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'log' }],
  });
  rt = await createRuntime(config, { app: 'test' });
});

afterAll(async () => {
  for (const app of started) await app.close();
  await rt?.close();
  await redis?.destroy();
});

/** An ingest on the shared runtime with some `ingest.*` settings changed. */
async function ingestWith(overrides: Partial<Runtime['config']['ingest']>): Promise<string> {
  const config = { ...rt.config, ingest: { ...rt.config.ingest, ...overrides } };
  const app = await startIngest({ ...rt, config }, { port: 0, host: '127.0.0.1', pollers: false });
  started.push(app);
  return `127.0.0.1:${app.port}`;
}

const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

function openSocket(hostPort: string): Promise<Socket> {
  const [host, port] = hostPort.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), host, () => resolve(s));
    s.once('error', reject);
  });
}

describe('JSON limits', () => {
  it('5,000-deep JSON is a 400 INVALID_EVENT naming the limit (it was a 503 STORE_UNAVAILABLE)', async () => {
    const base = await ingestWith({});
    const body = JSON.stringify({ id: 'deep-1', source: 'shop', type: 't' }).replace(/}$/, `,"data":{"x":${nested(5_000)}}}`);
    const res = await fetch(`http://${base}/v1/events`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'INVALID_EVENT', details: { limit: 'maxJsonDepth', max: 64 } } });
    // Just under the limit is fine; brackets inside strings do not count.
    const ok = JSON.stringify({ id: 'deep-2', source: 'shop', type: 't', data: { s: '[[[[{{{{'.repeat(100) } }).replace(/}$/, `,"n":${nested(60)}}`);
    expect((await fetch(`http://${base}/v1/events`, { method: 'POST', body: ok, headers: { 'content-type': 'application/json' } })).status).toBe(202);
  });
});

describe('slow and many clients', () => {
  it('closes a connection that sends half a header and stalls, after headersTimeoutMs', async () => {
    const base = await ingestWith({ headersTimeoutMs: 1_000 });
    const socket = await openSocket(base);
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    let closed = false;
    socket.once('close', () => (closed = true));
    socket.write('POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Ty');
    // Bounded well below node's own defaults (60 s, checked every 30 s: up to 90 s).
    await waitUntil(() => closed, 'the server to hang up on the stalled client', { timeoutMs: 15_000 });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('sheds load past maxRequestsInFlight with 503 OVERLOADED and Retry-After', async () => {
    const base = await ingestWith({ maxRequestsInFlight: 1 });
    // One request whose body never finishes: it stays in flight.
    const slow = await openSocket(base);
    slow.write('POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":');
    const res = await waitUntil(async () => {
      const r = await fetch(`http://${base}/v1/events`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      return r.status === 503 ? r : undefined;
    }, 'the second request to be shed');
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ error: { code: 'OVERLOADED' } });
    slow.destroy();
    // Once the slow one is gone, requests are served again.
    await waitUntil(async () => {
      const r = await fetch(`http://${base}/v1/events`, {
        method: 'POST',
        body: JSON.stringify({ id: 'after-shed', source: 'shop', type: 't' }),
        headers: { 'content-type': 'application/json' },
      });
      return r.status === 202;
    }, 'a request to be served after the slow one left');
  });

  it('2,000 concurrent stalled connections do not stop a well-behaved producer; the default header timeout then closes them', async () => {
    const base = await ingestWith({});
    const stalled: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 2_000; i++) {
      const s = await openSocket(base);
      s.on('error', () => undefined);
      // Flowing, so the server's 408 and FIN are read and 'close' fires.
      s.resume();
      s.once('close', () => (closed += 1));
      s.write('POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: appl');
      stalled.push(s);
    }
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://${base}/v1/events`, {
        method: 'POST',
        body: JSON.stringify({ id: `good-${i}`, source: 'shop', type: 't', recipients: ['a@example.com'] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(202);
    }
    // They really were concurrent: the stalled connections were still open while the producer was served.
    expect(closed).toBeLessThan(100);
    // headersTimeoutMs defaults to 10 s: the server hangs up on every one of them.
    await waitUntil(() => closed === 2_000, 'the stalled connections to be closed by the server', { timeoutMs: 40_000 });
    for (const s of stalled) s.destroy();
  });
});
