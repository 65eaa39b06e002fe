import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { externalCode, type DeliverJobData } from '@singleshot/core';
import { enqueueDeliveries } from '@singleshot/queues';
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
import { deliverJob } from '@singleshot/test-jobs';

// The recovery sweeper in real delivery processes: operations left `in_doubt`
// or `sending` by a dead process whose deliver job is gone are found after
// their lease and driven to `sent`, once.
const LEASE_MS = 2000;
let redis: TestRedis;
let sink: HttpSink;
let rt: Runtime;
const files: Record<string, string> = {};
const cleanups: (() => void)[] = [];
const procs: AppProcess[] = [];

function job(name: string): DeliverJobData {
  return deliverJob(name);
}
function worker(which: 'sweeping' | 'not-sweeping'): AppProcess {
  const p = spawnApps('delivery', files[which] as string);
  procs.push(p);
  return p;
}
const status = async (key: string) => (await rt.operations.get(key))?.status;
const journalTypes = async (key: string) => {
  const record = await rt.operations.get(key);
  return (await rt.journal.forOperation(key, record?.journalIds ?? [])).map((e) => e.type);
};

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  for (const [which, sweepIntervalMs] of [['sweeping', 300], ['not-sweeping', 0]] as const) {
    const config = testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [50], concurrency: 2, metricsPort: 0, sweepIntervalMs },
      routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] },
    });
    const written = writeConfigFile(config);
    files[which] = written.file;
    cleanups.push(written.cleanup);
    if (which === 'sweeping') rt = await testRuntime(config);
  }
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  sink.reset();
});

afterAll(async () => {
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  for (const c of cleanups) c();
});

describe('recovery sweeper', () => {
  it('an operation left in_doubt whose job is gone: counted in the gauge, found, reconciled to sent without a second POST', async () => {
    const data = job('lost-in-doubt');
    // A process claimed it, its POST reached the provider, the answer was lost,
    // it committed in_doubt and died; its retry job was lost with it.
    const claim = await rt.operations.claim({ ...data, owner: 'dead-process', leaseMs: LEASE_MS, job: data });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    const posted = await fetch(sink.url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': data.operationKey }, body: JSON.stringify({ operationKey: data.operationKey, recipient: data.recipient }) });
    expect(posted.status).toBe(200);
    await rt.operations.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: 'in_doubt', messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, provider: 'primary', error: { code: externalCode('ECONNRESET'), message: 'socket hang up' }, nextAttemptAt: Date.now() });
    expect(await rt.queues.deliver.getJob(data.operationKey)).toBeUndefined();

    // Without a sweeper nothing would ever touch it again; the gauge shows it.
    const idle = worker('not-sweeping');
    await waitUntil(async () => (await idle.metric('singleshot_operations_in_doubt')) === 1, 'the in-doubt gauge to show it', { timeoutMs: 30_000 });
    await idle.stop();

    const sweeping = worker('sweeping');
    await waitUntil(async () => (await status(data.operationKey)) === 'sent', 'the sweeper to drive it to sent', { timeoutMs: 60_000 });
    expect(sink.countFor(data.operationKey)).toBe(1);
    expect(sink.lookups).toEqual([{ key: data.operationKey, found: true }]);
    expect(await journalTypes(data.operationKey)).toEqual(['in_doubt', 'sent']);
    expect((await rt.operations.get(data.operationKey))?.externalId).toBe(sink.accepted.get(data.operationKey)?.id);
    await waitUntil(async () => (await sweeping.metric('singleshot_operations_in_doubt')) === 0, 'the in-doubt gauge to drop', { timeoutMs: 30_000 });
    expect(sweeping.logs.some((l) => l.event === 'sweeper_requeued' && l.operationKey === data.operationKey)).toBe(true);
  });

  it('a worker SIGKILLed mid-send and its job removed: after the lease another process sends it, once', async () => {
    const a = worker('sweeping');
    await a.metricsPort();
    const data = job('lost-sending');
    sink.scriptFor(data.recipient, 'hang'); // never answers, never accepts
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(async () => (await status(data.operationKey)) === 'sending' && sink.countFor(data.operationKey) === 1, 'the claim and the first POST');
    a.signal('SIGKILL');
    await a.exited();
    // The job is lost (say, an operator removed it, or Redis lost it): removable once its lock ran out.
    await waitUntil(async () => (await rt.queues.deliver.remove(data.operationKey)) === 1, 'the job to be removed', { timeoutMs: 30_000 });
    expect(await rt.queues.deliver.getJob(data.operationKey)).toBeUndefined();
    expect(await status(data.operationKey)).toBe('sending');

    worker('sweeping');
    await waitUntil(async () => (await status(data.operationKey)) === 'sent', 'the sweeper to drive it to sent', { timeoutMs: 60_000 });
    expect(sink.accepted.get(data.operationKey)?.count).toBe(1);
    // Reconciled first: the provider did not have it, so it was sent again under the same key.
    expect(sink.lookups).toEqual([{ key: data.operationKey, found: false }]);
    expect(await rt.operations.get(data.operationKey)).toMatchObject({ status: 'sent', attempts: 2 });
    expect((await journalTypes(data.operationKey)).filter((t) => t === 'sent')).toHaveLength(1);
  });
});
