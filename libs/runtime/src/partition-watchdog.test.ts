import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverJob } from '@singleshot/test-jobs';
import { enqueueDeliveries, openQueues, QUEUES } from '@singleshot/queues';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { createLogger, createMetrics } from '@singleshot/observability';
import { startFaultProxy, startTestRedis, waitUntil, type FaultProxy, type TestRedis } from '@singleshot/test-harness';
import { defaultReady } from './app-main';
import { PartitionWorkers, consumedPartitions } from './partition-workers';

// A partition whose worker stops fetching while its queue still answers (the
// worker's own link silent, as a failed master's connection can be) must be
// reported (metric, readiness) and get a working consumer back.

let server: TestRedis;
let proxy: FaultProxy;
const connections: RedisClient[] = [];
const track = (c: RedisClient) => (connections.push(c), c);

beforeAll(async () => {
  server = await startTestRedis();
  proxy = await startFaultProxy({ port: server.port });
});
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await proxy?.close();
  await server?.destroy();
});

const gauge = async (metrics: ReturnType<typeof createMetrics>, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.reduce((sum, v) => sum + v.value, 0);

describe('partition watchdog', () => {
  it('a worker whose link goes silent is reported within stuckAfterMs, replaced, and consumes again once the link heals', async () => {
    const keys = new KeyBuilder('wd', 16, 2);
    const direct = track(createRedis({ url: server.url, role: 'client' }));
    const queues = openQueues(direct, keys);
    const metrics = createMetrics();
    const ran: string[] = [];
    const workers = new PartitionWorkers<{ operationKey: string }, void>(
      {
        // The workers' connection goes through the proxy; the watchdog's probe does not.
        connect: () => track(createRedis({ url: `redis://127.0.0.1:${proxy.port}`, role: 'worker' })),
        redis: direct,
        metrics,
        logger: createLogger({ app: 'test', level: 'silent' }),
      },
      consumedPartitions(keys, QUEUES.deliver),
      async (job) => void ran.push(job.data.operationKey),
      { connectionName: 'wd', concurrency: 4, stuckAfterMs: 1500, drainDelay: 1 },
    );
    const first = Array.from({ length: 10 }, (_, i) => deliverJob(`wd-a-${i}`));
    await enqueueDeliveries(queues, first);
    await waitUntil(() => ran.length >= first.length || undefined, 'the first jobs to run');
    expect((await defaultReady({ redis: direct }, { delivery: workers })).ok).toBe(true);

    proxy.set({ kind: 'blackhole' });
    const during = Array.from({ length: 10 }, (_, i) => deliverJob(`wd-b-${i}`));
    await enqueueDeliveries(queues, during);
    await waitUntil(() => (workers.stuckPartitions().length === 2 ? true : undefined), 'both partitions reported without a consumer', { timeoutMs: 60_000 });
    const ready = await defaultReady({ redis: direct }, { delivery: workers });
    expect(ready.ok).toBe(false);
    expect(ready.checks['delivery-worker']).toMatch(/^no working consumer: deliver-0[01], deliver-0[01]$/);
    await waitUntil(async () => ((await gauge(metrics, 'singleshot_partition_consumers')) === 0 ? true : undefined), 'the consumers gauge to show 0');
    await waitUntil(async () => ((await gauge(metrics, 'singleshot_partition_consumer_restarts_total')) >= 2 ? true : undefined), 'both workers replaced');
    expect(ran.length).toBe(first.length);

    proxy.heal();
    await waitUntil(() => (ran.length >= first.length + during.length ? true : undefined), 'the jobs added during the fault to run', { timeoutMs: 60_000 });
    await waitUntil(() => (workers.stuckPartitions().length === 0 ? true : undefined), 'every partition consumed again', { timeoutMs: 30_000 });
    await waitUntil(async () => ((await gauge(metrics, 'singleshot_partition_consumers')) === 2 ? true : undefined), 'the consumers gauge to show 2');
    expect((await defaultReady({ redis: direct }, { delivery: workers })).ok).toBe(true);
    await workers.close();
    expect([...ran].sort()).toEqual([...first, ...during].map((j) => j.operationKey).sort());
    await queues.close();
  });
});
