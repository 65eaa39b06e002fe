import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliverJobData } from '@singleshot/core';
import { enqueueDeliveries } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startTestBackend,
  testBackendKind,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestBackend,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';
import { deliverJob } from '@singleshot/test-jobs';

// Delivery under real process faults: racing workers, SIGKILL after the claim,
// SIGSTOP past the lease, and misbehaving providers. Each case uses a fresh
// operation key; workers are real OS processes running `singleshot start --only delivery`.
const LEASE_MS = 2000;

let redis: TestBackend;
let sink: HttpSink;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];

function job(name: string, recipient = `${name}@example.com`): DeliverJobData {
  return deliverJob(name, { recipient });
}
let baseConfig: Record<string, unknown>;
const worker = (file = configFile) => {
  const p = spawnApps('delivery', file);
  procs.push(p);
  return p;
};
const statusOf = async (key: string) => (await rt.operations.get(key))?.status;
const journalTypes = async (key: string) => {
  const record = await rt.operations.get(key);
  return (await rt.journal.forOperation(key, record?.journalIds ?? [])).map((e) => e.type);
};

beforeAll(async () => {
  redis = await startTestBackend();
  sink = await startHttpSink();
  const config = testConfig({
    ...redis.config,
    delivery: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [100, 200, 400], concurrency: 1, metricsPort: 0 },
    routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] },
  });
  baseConfig = config;
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

describe(`delivery under faults (${testBackendKind()} Redis)`, () => {
  it('two worker processes racing on one operation: one send, the conflict counted, the loser retries', async () => {
    // A long lease here: this case is about the lock, not about lease expiry, and
    // the held send must stay well inside its deadline on a loaded machine.
    const long = writeConfigFile({ ...baseConfig, delivery: { ...(baseConfig.delivery as object), leaseMs: 20_000 } });
    const a = worker(long.file);
    const b = worker(long.file);
    await Promise.all([a.metricsPort(), b.metricsPort()]);
    const data = job('race');
    // Hold the first send long enough that the second job is claimed meanwhile.
    sink.script({ delayMs: 3000, then: 'ok' });
    // Two jobs for one operation (say, a decide job redelivered after its deliver
    // job was removed): each process takes one, concurrency 1.
    await rt.queues.deliverOf(data.operationKey).add('deliver', data, { jobId: `${data.operationKey}-x` });
    await rt.queues.deliverOf(data.operationKey).add('deliver', data, { jobId: `${data.operationKey}-y` });
    const jobsDone = async () => {
      const [x, y] = await Promise.all([rt.queues.deliverOf(data.operationKey).getJob(`${data.operationKey}-x`), rt.queues.deliverOf(data.operationKey).getJob(`${data.operationKey}-y`)]);
      return (await x?.isCompleted()) && (await y?.isCompleted()) ? [x, y] : undefined;
    };
    await waitUntil(jobsDone, 'both jobs to complete', { timeoutMs: 60_000 });
    // Fetched again: a job object read before it completed carries no return value.
    const [x, y] = await Promise.all([rt.queues.deliverOf(data.operationKey).getJob(`${data.operationKey}-x`), rt.queues.deliverOf(data.operationKey).getJob(`${data.operationKey}-y`)]);
    expect(sink.countFor(data.operationKey)).toBe(1);
    const conflicts = (await a.metric('singleshot_lock_conflicts_total')) + (await b.metric('singleshot_lock_conflicts_total'));
    expect(conflicts).toBeGreaterThanOrEqual(1);
    // The loser was not dropped: it came back and found the operation sent.
    // One sent it (ended now), the other found it sent (ended before: a duplicate).
    expect([x!.returnvalue, y!.returnvalue].map((r) => `${r.kind} ${r.status} ${r.endedNow ? 'now' : 'before'}`).sort()).toEqual(['ended sent before', 'ended sent now']);
    long.cleanup();
    expect((await journalTypes(data.operationKey)).filter((t) => t === 'sent')).toHaveLength(1);
  });

  it('a worker SIGKILLed after claiming, before the provider took it: another worker sends after the lease, once', async () => {
    const a = worker();
    await a.metricsPort();
    const data = job('sigkill');
    sink.script('hang'); // the first request never completes and is not accepted
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(async () => (await statusOf(data.operationKey)) === 'sending' && sink.countFor(data.operationKey) === 1, 'the claim and the first request');
    a.signal('SIGKILL');
    await a.exited();
    const b = worker();
    await waitUntil(async () => (await statusOf(data.operationKey)) === 'sent', 'another worker to send', { timeoutMs: 60_000 });
    expect(sink.accepted.get(data.operationKey)?.count).toBe(1);
    const record = await rt.operations.get(data.operationKey);
    expect(record).toMatchObject({ attempts: 2, fence: '2' });
    // It asked the provider before sending again (docs/protocol.md invariant 5).
    expect(sink.lookups.filter((l) => l.key === data.operationKey)).toEqual([{ key: data.operationKey, found: false }]);
    expect((await journalTypes(data.operationKey)).filter((t) => t === 'sent')).toHaveLength(1);
    await b.stop();
  });

  it('a worker SIGSTOPped mid-send past its lease: another takes over; the resumed commit is rejected by the fence', async () => {
    const a = worker();
    await a.metricsPort();
    const data = job('sigstop');
    sink.script({ delayMs: 500, then: 'ok' });
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(() => sink.countFor(data.operationKey) === 1, 'the first request');
    a.signal('SIGSTOP');
    const b = worker();
    await waitUntil(async () => (await statusOf(data.operationKey)) === 'sent', 'the second worker to send', { timeoutMs: 60_000 });
    const sentBy = await rt.operations.get(data.operationKey);
    expect(sentBy?.fence).toBe('2');
    a.signal('SIGCONT');
    await waitUntil(async () => (await a.metric('singleshot_stale_commits_total')) >= 1, 'the stale commit to be counted', { timeoutMs: 60_000 });
    // The provider is idempotent by key: both POSTs are one accepted message.
    expect(sink.accepted.size).toBe(1);
    expect((await journalTypes(data.operationKey)).filter((t) => t === 'sent')).toHaveLength(1);
    expect((await rt.operations.get(data.operationKey))?.externalId).toBe(sentBy?.externalId);
    await b.stop();
  });

  it('provider accepts then drops the connection: in_doubt, then reconciled through lookupUrl with no second POST', async () => {
    worker();
    const data = job('drop');
    sink.script('accept-then-drop');
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(async () => (await statusOf(data.operationKey)) === 'sent', 'reconciliation', { timeoutMs: 60_000 });
    expect(sink.countFor(data.operationKey)).toBe(1);
    expect(await journalTypes(data.operationKey)).toEqual(['in_doubt', 'sent']);
    expect((await rt.operations.get(data.operationKey))?.externalId).toBe(sink.accepted.get(data.operationKey)?.id);
    const history = await rt.operations.history(data.operationKey);
    expect(history.at(-1)?.note).toBe('reconciled by lookup');
  });

  it('a 2xx without an id is not recorded as sent', async () => {
    worker();
    const data = job('noid');
    sink.script('no-id');
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(async () => (await journalTypes(data.operationKey)).includes('sent'), 'the operation to settle', { timeoutMs: 60_000 });
    const record = await rt.operations.get(data.operationKey);
    const entries = await rt.journal.forOperation(data.operationKey, record!.journalIds);
    // The id-less answer left it in doubt; only the lookup's answer made it sent.
    expect(entries[0]).toMatchObject({ type: 'in_doubt', fields: { err: 'NO_PROVIDER_ID' } });
    expect(entries.map((e) => e.type)).toEqual(['in_doubt', 'sent']);
    expect(sink.countFor(data.operationKey)).toBe(1);
  });

  it('a permanent 4xx goes to the DLQ at once with its reason', async () => {
    worker();
    const data = job('permanent');
    sink.script({ status: 422, body: { error: 'invalid recipient' } });
    await enqueueDeliveries(rt.queues, [data]);
    const dead = await waitUntil(() => rt.queues.dead.getJob(data.operationKey), 'the DLQ record', { timeoutMs: 60_000 });
    expect(dead.data).toMatchObject({ operationKey: data.operationKey, reason: 'permanent', error: { code: 'HTTP_422' } });
    expect(dead.data.attempts).toHaveLength(1);
    expect(await rt.operations.get(data.operationKey)).toMatchObject({ status: 'dead', attempts: 1, reason: 'permanent' });
    expect(sink.countFor(data.operationKey)).toBe(1);
    expect(await journalTypes(data.operationKey)).toEqual(['dead']);
  });
});
