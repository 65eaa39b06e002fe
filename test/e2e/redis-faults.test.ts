import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Redis is the only shared state. When it is down, ingest must refuse (503),
// never answer 2xx for an event it did not keep; when it is SIGKILLed and comes
// back on its AOF (appendfsync always), nothing accepted may be lost or sent twice.
describe('Redis faults', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let fleet: AppProcess;
  let base: string;
  let cleanup: () => void;
  let config: Record<string, unknown>;

  beforeAll(async () => {
    redis = await startTestRedis({ appendfsync: 'always' });
    sink = await startHttpSink();
    config = testConfig({
      redisUrl: redis.url,
      ingest: { port: 0, host: '127.0.0.1', enqueueTimeoutMs: 2000 },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event' }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
  });

  afterAll(async () => {
    await fleet?.stop();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (id: string) =>
    fetch(`${base}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: [`${id}@example.com`], data: {} }),
    });

  it('answers 503 (never 2xx) while Redis is stopped, and 202 again once it is back', async () => {
    await redis.stop();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => post(`down-${i}`)));
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('STORE_UNAVAILABLE');
    }
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    await redis.restart();
    await waitUntil(async () => (await post('down-0')).status === 202, 'ingest to accept again', { timeoutMs: 60_000 });
  });

  it('Redis SIGKILLed mid-run and restarted on its AOF: no operation lost, none sent twice', async () => {
    const total = 120;
    const ids = Array.from({ length: total }, (_, i) => `kill-${i}`);
    // A producer that retries until it gets a 2xx, as at-least-once producers do.
    const produce = async (id: string) => {
      for (let attempt = 0; attempt < 400; attempt++) {
        const res = await post(id).catch(() => undefined);
        if (res?.status === 202) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`event ${id} was never accepted`);
    };
    let killed = false;
    const producing = (async () => {
      for (let i = 0; i < ids.length; i += 10) {
        await Promise.all(ids.slice(i, i + 10).map(produce));
        if (i === 50 && !killed) {
          killed = true;
          await redis.kill9();
          await new Promise((r) => setTimeout(r, 300));
          await redis.restart();
        }
      }
    })();
    await producing;
    expect(killed).toBe(true);
    const keyFor = (id: string) => sink.requests.find((r) => r.recipient === `${id}@example.com`)?.idempotencyKey;
    await sink.waitFor((s) => ids.every((id) => keyFor(id) && s.accepted.has(keyFor(id)!)), { timeoutMs: 120_000, what: 'every event to be delivered' });
    const rt: Runtime = await testRuntime(config);
    try {
      for (const id of ids) {
        const key = keyFor(id)!;
        expect(sink.accepted.get(key)?.count, `accepted POSTs for ${id}`).toBe(1);
        await waitUntil(async () => (await rt.operations.get(key))?.status === 'sent', `state of ${id}`);
      }
    } finally {
      await rt.close();
    }
  });
});
