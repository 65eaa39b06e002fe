import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairQueue } from '@singleshot/store';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type TestBackend } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// A tenant's in-flight cap, through real processes and a SIGKILL: tenant x
// (maxInFlight 2) and tenant y (no cap) flood one delivery process that runs
// 8 provider calls at once. The provider holds each call a while and counts
// the calls open per tenant at every moment; the delivery process is killed
// with calls open and another takes over. x never has more than 2 calls open,
// y has more (the cap is x's, not the fleet's), every notification is sent,
// and once all is done x's in-flight count is back to 0: no place leaked.
const HOLD_MS = 120;
const EVENTS = 24;
const KEYS = { x: 'x-producer-key-0000000001', y: 'y-producer-key-0000000001' };

interface Provider {
  url: string;
  open: Record<string, number>;
  most: Record<string, number>;
  accepted: Map<string, number>;
  requests: Record<string, number>;
  close(): Promise<void>;
}

/** A provider that answers each send after HOLD_MS and counts, per tenant, the sends it holds open. */
async function startProvider(): Promise<Provider> {
  const p = { open: { x: 0, y: 0 } as Record<string, number>, most: { x: 0, y: 0 } as Record<string, number>, accepted: new Map<string, number>(), requests: { x: 0, y: 0 } as Record<string, number> };
  const server: Server = createServer((req, res) => {
    const lookup = /^\/messages\/(.+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && lookup) {
      const key = decodeURIComponent(lookup[1]!);
      res.writeHead(p.accepted.has(key) ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(p.accepted.has(key) ? { id: key } : { error: 'not found' }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { recipient: string };
      const tenant = body.recipient.slice(0, 1);
      const key = String(req.headers['idempotency-key']);
      p.requests[tenant] = (p.requests[tenant] ?? 0) + 1;
      p.open[tenant] = (p.open[tenant] ?? 0) + 1;
      p.most[tenant] = Math.max(p.most[tenant] ?? 0, p.open[tenant]!);
      let closed = false;
      const done = () => {
        if (closed) return;
        closed = true;
        p.open[tenant]!--;
      };
      // A sender killed mid-call closes its socket: the call is no longer open.
      res.on('close', done);
      setTimeout(() => {
        if (closed) return;
        p.accepted.set(key, (p.accepted.get(key) ?? 0) + 1);
        done();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: key }));
      }, HOLD_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { ...p, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let redis: TestBackend;
let provider: Provider;
let front: AppProcess;
let rt: Runtime;
let ingest: string;
let configFile: string;
let cleanup: () => void;

beforeAll(async () => {
  redis = await startTestBackend();
  provider = await startProvider();
  const config = testConfig({
    ...redis.config,
    ingest: { port: 0, host: '127.0.0.1', apiKeys: (['x', 'y'] as const).map((t) => ({ name: t, key: KEYS[t], sources: ['*'], tenant: t })) },
    delivery: { concurrency: 8, leaseMs: 2000, metricsPort: 0 },
    tenancy: { window: 16, tenants: [{ id: 'x', maxInFlight: 2 }] },
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'Order' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: `${provider.url}/send`, lookupUrl: `${provider.url}/messages`, timeoutMs: 1500 }] },
  });
  const written = writeConfigFile(config);
  cleanup = written.cleanup;
  configFile = written.file;
  front = spawnApps('ingest,decision', configFile);
  ingest = `http://127.0.0.1:${await front.metricsPort()}`;
  rt = await testRuntime(config);
}, 60_000);

afterAll(async () => {
  await front?.stop();
  await rt?.close();
  await provider?.close();
  await redis?.destroy();
  cleanup?.();
});

describe("a tenant's in-flight cap (real processes, a SIGKILL)", () => {
  it('holds through a killed delivery process, and leaks no place', async () => {
    const first = spawnApps('delivery', configFile);
    let second: AppProcess | undefined;
    try {
      await first.metricsPort();
      const post = (tenant: 'x' | 'y', n: number) =>
        fetch(`${ingest}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEYS[tenant]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: `${tenant}-${n}`, source: 'shop', type: 'order.created', recipients: [`${tenant}-${n}@x.test`], data: {} }),
        });
      const answers = await Promise.all(Array.from({ length: EVENTS }, (_, n) => [post('x', n), post('y', n)]).flat());
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 202));
      await waitUntil(() => (provider.requests.x ?? 0) >= 6 && (provider.open.x ?? 0) > 0, "x's sends under way");
      first.signal('SIGKILL');
      await first.exited();
      second = spawnApps('delivery', configFile);
      await waitUntil(() => provider.accepted.size === 2 * EVENTS, `all ${2 * EVENTS} notifications accepted`, { timeoutMs: 60_000 });
      // Once every operation ended, x's in-flight places are free again (the killed worker's too).
      await waitUntil(async () => (await new FairQueue(rt.redis, rt.keys).inFlight(0, 'x')) === 0, "x's in-flight count back to 0", { timeoutMs: 30_000 });
    } finally {
      await second?.stop();
      if (first.child.exitCode === null) first.signal('SIGKILL');
    }
    expect(provider.most.x).toBeLessThanOrEqual(2);
    expect(provider.most.x).toBe(2);
    // The cap is x's own: y used more of the 8 calls at once.
    expect(provider.most.y).toBeGreaterThan(2);
    // Each notification accepted once: the killed calls were never accepted, and were sent again.
    expect([...provider.accepted.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);
});
