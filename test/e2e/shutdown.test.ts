import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliverJobData } from '@singleshot/core';
import { enqueueDeliveries } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitForQueuesIdle,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { deliverJob } from '@singleshot/test-jobs';

// Graceful shutdown of a real delivery process (`singleshot start --only
// delivery`) while a provider call is in flight: SIGTERM lets the call finish
// and commit (or releases work not started), the process exits 0, and a worker
// started afterwards finds nothing to send again. A second signal exits at once;
// the next worker then reconciles instead of sending twice.
const LEASE_MS = 4000;

let redis: TestRedis;
let sink: HttpSink;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];

function job(name: string): DeliverJobData {
  return deliverJob(`shutdown:${name}`, { recipient: `${name}@example.com` });
}
function worker(file = configFile): AppProcess {
  const p = spawnApps('delivery', file);
  procs.push(p);
  return p;
}
async function journalTypes(key: string): Promise<string[]> {
  const record = await rt.operations.get(key);
  return (await rt.journal.forOperation(key, record?.journalIds ?? [])).map((e) => e.type);
}

/**
 * A provider lookup endpoint that holds each request until `open()`, then
 * answers what the sink answers: it keeps a worker inside reconciliation
 * (claimed, nothing sent yet) for as long as the test needs.
 */
async function startLookupGate(target: string): Promise<{ url: string; pending(): number; open(): void; close(): Promise<void> }> {
  const held: Array<{ key: string; res: ServerResponse }> = [];
  let isOpen = false;
  const answer = async ({ key, res }: { key: string; res: ServerResponse }) => {
    const upstream = await fetch(`${target}/${encodeURIComponent(key)}`);
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(await upstream.text());
  };
  const server: Server = createServer((req, res) => {
    const key = decodeURIComponent((req.url ?? '/').split('/').pop() ?? '');
    if (isOpen) void answer({ key, res });
    else held.push({ key, res });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`,
    pending: () => held.length,
    open: () => {
      isOpen = true;
      for (const entry of held.splice(0)) void answer(entry);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [100, 200, 400], concurrency: 1, metricsPort: 0 },
    routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 3000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  rt = await testRuntime(config);
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  sink.reset();
});

afterAll(async () => {
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('SIGTERM during a send', () => {
  it('finishes the call in flight, leaves the next job for another worker, exits 0; each operation is sent once', async () => {
    const inFlight = job('in-flight');
    const queued = job('queued');
    // The provider takes its time to answer the first send (it does accept it).
    sink.scriptFor(inFlight.recipient, { delayMs: 1500, then: 'ok' });
    const a = worker();
    await a.metricsPort();
    await enqueueDeliveries(rt.queues, [inFlight, queued]);
    await sink.waitFor((s) => s.requests.some((r) => r.idempotencyKey === inFlight.operationKey), { what: 'the first send to reach the provider' });
    expect(sink.accepted.has(inFlight.operationKey)).toBe(false);

    a.signal('SIGTERM');
    expect(await a.exited()).toBe(0);
    // The call in flight was answered and committed before the process left.
    expect((await rt.operations.get(inFlight.operationKey))?.status).toBe('sent');
    expect(a.logs.map((l) => l.event)).toContain('shutdown_complete');
    // Concurrency 1: the second job had not started, so the stopping worker did not take it.
    expect(sink.countFor(queued.operationKey)).toBe(0);
    expect((await rt.operations.get(queued.operationKey))?.status ?? 'unclaimed').not.toBe('sent');

    const b = worker();
    await waitUntil(async () => (await rt.operations.get(queued.operationKey))?.status === 'sent', 'the queued job to be sent by the next worker');
    await waitForQueuesIdle(rt.queues);
    for (const op of [inFlight, queued]) {
      expect(sink.countFor(op.operationKey), op.recipient).toBe(1);
      expect(sink.accepted.get(op.operationKey)?.count, op.recipient).toBe(1);
      expect((await journalTypes(op.operationKey)).filter((t) => t === 'sent'), op.recipient).toEqual(['sent']);
    }
    const counts = await rt.queues.deliver.getJobCounts('completed', 'failed');
    expect(counts.failed).toBe(0);
    b.signal('SIGTERM');
    expect(await b.exited()).toBe(0);
  });

  it('a second signal exits at once; the next worker reconciles the accepted send instead of repeating it', async () => {
    const op = job('second-signal');
    // The provider takes the message and never answers: the call stays in flight.
    sink.scriptFor(op.recipient, 'accept-then-hang');
    const a = worker();
    await a.metricsPort();
    await enqueueDeliveries(rt.queues, [op]);
    await sink.waitFor((s) => s.accepted.has(op.operationKey), { what: 'the provider to accept the send' });

    a.signal('SIGTERM');
    await waitUntil(() => a.logs.some((l) => l.event === 'shutdown_started'), 'the first signal to be handled');
    a.signal('SIGTERM');
    expect(await a.exited()).toBe(130);
    expect((await rt.operations.get(op.operationKey))?.status).toBe('sending');

    worker();
    await waitUntil(async () => (await rt.operations.get(op.operationKey))?.status === 'sent', 'the operation to be reconciled as sent', { timeoutMs: 60_000 });
    expect(sink.countFor(op.operationKey)).toBe(1);
    expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
    expect(sink.lookups.filter((l) => l.key === op.operationKey && l.found)).not.toHaveLength(0);
    expect(await rt.operations.get(op.operationKey)).toMatchObject({ status: 'sent', externalId: sink.accepted.get(op.operationKey)?.id });
    expect((await journalTypes(op.operationKey)).filter((t) => t === 'sent')).toEqual(['sent']);
  });

  it('releases an operation claimed but not yet sent: exit 0, the lock is free, and the next worker sends it once', async () => {
    const gate = await startLookupGate(sink.lookupUrl);
    // A long lease keeps the held lookup well inside its deadline (half the lease).
    const written = writeConfigFile(
      testConfig({
        redisUrl: redis.url,
        delivery: { leaseMs: 10_000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 1, metricsPort: 0 },
        routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: gate.url, timeoutMs: 3000 }] },
      }),
    );
    try {
      const op = job('released');
      // First attempt: the connection drops after the request was written, so the
      // operation is in doubt; the retry must reconcile (a lookup) before sending.
      sink.scriptFor(op.recipient, 'refuse');
      const a = worker(written.file);
      await a.metricsPort();
      await enqueueDeliveries(rt.queues, [op]);
      await waitUntil(() => gate.pending() > 0, 'the retry to be reconciling (lookup held)');
      expect((await rt.operations.get(op.operationKey))?.status).toBe('sending');

      a.signal('SIGTERM');
      await waitUntil(() => a.logs.some((l) => l.event === 'shutdown_started'), 'the signal to be handled');
      gate.open();
      expect(await a.exited()).toBe(0);
      // Released untouched: nothing new sent, still in doubt, the lock free, the job scheduled again.
      expect(sink.countFor(op.operationKey)).toBe(1);
      expect(sink.accepted.has(op.operationKey)).toBe(false);
      expect((await rt.operations.get(op.operationKey))?.status).toBe('in_doubt');
      expect(await rt.redis.exists(rt.keys.lock(op.operationKey))).toBe(0);
      expect(await (await rt.queues.deliver.getJob(op.operationKey))?.getState()).toBe('delayed');

      worker(written.file);
      await waitUntil(async () => (await rt.operations.get(op.operationKey))?.status === 'sent', 'the next worker to send it', { timeoutMs: 60_000 });
      expect(sink.countFor(op.operationKey)).toBe(2);
      expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
      expect((await journalTypes(op.operationKey)).filter((t) => t === 'sent')).toEqual(['sent']);
    } finally {
      await Promise.all(procs.splice(0).map((p) => p.stop()));
      await gate.close();
      written.cleanup();
    }
  });
});
