import { afterAll, describe, expect, it } from 'vitest';
import { enqueueDeliveries } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startFaultProxy,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type FaultProxy,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { deliverJob } from '@singleshot/test-jobs';

// A claim reply read after a pause (the chaos suite's seed 4 with 300 events
// runs into it after a SIGSTOP of a delivery process), made deterministic:
//
// 1. worker A sends the claim script; Redis runs it (fence 1, lock with the lease);
// 2. A is SIGSTOPped before it reads the reply (held 700 ms by the proxy here,
//    any pause between Redis running the claim and A reading the answer will do);
// 3. the lease and A's BullMQ job lock run out; worker B takes the stalled job,
//    claims (fence 2), reconciles (lookup: not found), sends, commits `sent`;
// 4. A is continued and reads the claim reply. Were its lease clock started
//    only then (leaseUntil = now() + leaseMs after the claim resolved), A would
//    believe it held a full lease and POST the operation a second time. Its
//    commit would be rejected by the fence, but the provider would already have
//    two POSTs: an idempotent provider absorbs the second, plain SMTP would not.
//
// So the lease runs from when the claim was sent
// (`keepLease({ startedAt: claimSentAt })`): A finds its lease spent on
// waking, releases instead of sending, and its commit is stale.

describe('a claim reply read after a pause (chaos seed 4)', () => {
  let redis: TestRedis;
  let sink: HttpSink;
  let proxy: FaultProxy;
  let rt: Runtime;
  const procs: AppProcess[] = [];
  const cleanups: Array<() => void> = [];

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await rt?.close();
    await proxy?.close();
    await sink?.close();
    await redis?.destroy();
    for (const cleanup of cleanups) cleanup();
  });

  it('does not let a holder whose lease ran out while it was paused send again', async () => {
    redis = await startTestRedis();
    sink = await startHttpSink();
    proxy = await startFaultProxy({ port: redis.port });
    const config = (redisUrl: string) =>
      testConfig({
        redisUrl,
        delivery: { leaseMs: 3000, attempts: 5, backoffMs: [100], concurrency: 1, metricsPort: 0 },
        routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
        providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] },
      });
    const viaProxy = writeConfigFile(config(`redis://127.0.0.1:${proxy.port}`));
    const direct = writeConfigFile(config(redis.url));
    cleanups.push(viaProxy.cleanup, direct.cleanup);
    rt = await testRuntime(config(redis.url));

    const a = spawnApps('delivery', viaProxy.file);
    procs.push(a);
    await a.metricsPort();
    const job = deliverJob('stale-claim-reply', { recipient: 'stale@example.com' });
    const key = job.operationKey;
    proxy.set({ kind: 'latency', delayMs: 700 });
    await enqueueDeliveries(rt.queues, [job]);
    // Redis ran A's claim; its answer is still on the way.
    await waitUntil(async () => (await rt.operations.get(key))?.status === 'sending', 'the claim to run', { intervalMs: 5, timeoutMs: 30_000 });
    a.signal('SIGSTOP');
    proxy.heal();

    procs.push(spawnApps('delivery', direct.file));
    await waitUntil(async () => (await rt.operations.get(key))?.status === 'sent', 'worker B to send', { timeoutMs: 60_000 });
    expect(sink.accepted.get(key)?.count).toBe(1);

    a.signal('SIGCONT');
    // A either sends again (a double send) or commits stale/releases: wait for its stale-commit warning or a second POST.
    await waitUntil(
      () => sink.countFor(key) > 1 || a.logs.some((l) => l.event === 'fence_superseded'),
      'worker A to act on its stale claim',
      { timeoutMs: 30_000 },
    );
    expect(sink.countFor(key)).toBe(1);
  }, 180_000);
});
