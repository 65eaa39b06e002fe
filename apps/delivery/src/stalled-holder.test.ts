import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpProvider, type Provider } from '@singleshot/providers';
import { KeyBuilder, OperationStore, createRedis, type RedisClient } from '@singleshot/store';
import { createLogger, createMetrics } from '@singleshot/observability';
import { startHttpSink, startTestRedis, type HttpSink, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { deliver, type DeliverDeps } from './deliver';

// A holder stopped between its last lease check and its POST (SIGSTOP, a long
// GC pause, a stalled VM) resumes after its lease ran out, when a later claim
// may already have looked the operation up at the provider ("not found") and
// sent it. Its call must not start then. The stall here is real: the thread is
// blocked (Atomics.wait), so no timer, keeper tick or I/O runs in it, exactly
// as in a stopped process; the provider is the real HTTP transport against a
// real HTTP server. The POST it would make is the second copy of a chaos run on
// a Redis Cluster (docs/protocol.md, invariant 10).

const LEASE_MS = 1500;
let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
let sink: HttpSink;
let http: HttpProvider;
const keys = new KeyBuilder('stall', 4);

/** The real provider, entered only after the thread stood still for `stallMs`. */
function stalling(stallMs: number): Provider {
  return {
    name: http.name,
    type: 'http',
    send(req, ctx) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, stallMs);
      return http.send(req, ctx);
    },
    lookup: (key, ctx) => http.lookup!(key, ctx),
    close: async () => undefined,
  };
}

function deps(provider: Provider): DeliverDeps {
  return {
    operations: ops,
    providers: () => [provider],
    addDead: async () => undefined,
    policy: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [10], backoffCapMs: 60_000, inDoubtPolicy: 'resend', providerAttempts: 1 },
    workerId: 'stalled',
    logger: createLogger({ app: 'test', level: 'silent' }),
    metrics: createMetrics(),
    random: () => 0.5,
  };
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
  sink = await startHttpSink();
  http = new HttpProvider({ name: 'sink', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 });
});

afterAll(async () => {
  await http?.close();
  await sink?.close();
  redis?.disconnect();
  await server?.destroy();
});

describe('a holder stalled between its lease check and its provider call', () => {
  it('does not POST once its lease ran out while it stood still', async () => {
    const job = deliverJob(`stall-${Date.now()}`, { route: 'orders' });
    const outcome = await deliver(job, deps(stalling(LEASE_MS + 300)));
    expect(sink.requests.filter((r) => r.idempotencyKey === job.operationKey)).toEqual([]);
    expect(outcome.kind).not.toBe('sent');
    expect((await ops.get(job.operationKey))?.status).not.toBe('sent');
  });

  it('still sends after a stall that its call deadline covers', async () => {
    const job = deliverJob(`stall-short-${Date.now()}`, { route: 'orders' });
    const outcome = await deliver(job, deps(stalling(50)));
    expect(outcome).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(sink.requests.filter((r) => r.idempotencyKey === job.operationKey)).toHaveLength(1);
  });
});
