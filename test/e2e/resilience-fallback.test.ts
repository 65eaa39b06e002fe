import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliverJobData } from '@singleshot/core';
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

// The provider fallback chain and the circuit breaker in real delivery
// processes, against two real HTTP providers: `a` (primary, with lookup) and `b`.
// Each case starts its own process, so breaker state never leaks between cases.
let redis: TestRedis;
let a: HttpSink;
let b: HttpSink;
let rt: Runtime;
const cleanups: (() => void)[] = [];
const procs: AppProcess[] = [];

let n = 0;
function job(name: string): DeliverJobData {
  return deliverJob(`${name}-${++n}`);
}

function worker(delivery: Record<string, unknown> = {}): AppProcess {
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [50, 100, 200], concurrency: 1, metricsPort: 0, providerAttempts: 2, breaker: { failureThreshold: 3, cooldownMs: 1500 }, ...delivery },
    routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
    providers: {
      webhook: [
        { name: 'a', type: 'http', url: a.url, lookupUrl: a.lookupUrl, timeoutMs: 5000 },
        { name: 'b', type: 'http', url: b.url, lookupUrl: b.lookupUrl, timeoutMs: 5000 },
      ],
    },
  });
  const written = writeConfigFile(config);
  cleanups.push(written.cleanup);
  const p = spawnApps('delivery', written.file);
  procs.push(p);
  return p;
}

const status = async (key: string) => (await rt.operations.get(key))?.status;
const sentBy = async (key: string) => {
  const record = await rt.operations.get(key);
  return record?.status === 'sent' ? record.provider : undefined;
};
const steps = async (key: string) => (await rt.operations.history(key)).map((h) => `${h.step ?? 'send'}:${h.provider ?? ''}:${h.errorCode ?? h.outcome}`);

beforeAll(async () => {
  redis = await startTestRedis();
  [a, b] = await Promise.all([startHttpSink(), startHttpSink()]);
  rt = await testRuntime(testConfig({ redisUrl: redis.url }));
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  await a.up();
  a.reset();
  b.reset();
});

afterAll(async () => {
  await rt?.close();
  await Promise.all([a?.close(), b?.close()]);
  await redis?.destroy();
  for (const c of cleanups) c();
});

describe('fallback chain', () => {
  it('a refuses connections: b sends, the switch is counted, a never saw the request', async () => {
    await a.down();
    const p = worker();
    const data = job('refused');
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(() => sentBy(data.operationKey), 'b to send', { timeoutMs: 60_000 });
    expect(await sentBy(data.operationKey)).toBe('b');
    expect(a.requests).toHaveLength(0);
    expect(b.accepted.get(data.operationKey)?.count).toBe(1);
    expect(await p.metric('singleshot_fallback_switches_total', { channel: 'webhook', from: 'a', to: 'b' })).toBe(1);
    expect(await steps(data.operationKey)).toEqual(['send:a:ECONNREFUSED', 'send:b:sent']);
  });

  it('a answers 503: retried on a until its budget (2) is spent, then b', async () => {
    worker();
    const data = job('503');
    a.scriptFor(data.recipient, { status: 503, body: { error: 'busy' } }, { status: 503, body: { error: 'busy' } });
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(() => sentBy(data.operationKey), 'the operation to be sent', { timeoutMs: 60_000 });
    expect(await sentBy(data.operationKey)).toBe('b');
    expect(a.countFor(data.operationKey)).toBe(2);
    expect(b.countFor(data.operationKey)).toBe(1);
    expect(await steps(data.operationKey)).toEqual(['send:a:HTTP_503', 'send:a:HTTP_503', 'send:b:sent']);
    expect((await rt.operations.get(data.operationKey))?.attempts).toBe(2);
  });

  it('a in doubt (reset after the request was written): no fallback until a lookup says a does not have it', async () => {
    worker({ providerAttempts: 1 });
    const data = job('doubt');
    a.scriptFor(data.recipient, 'refuse');
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(() => sentBy(data.operationKey), 'the operation to be sent', { timeoutMs: 60_000 });
    expect(await sentBy(data.operationKey)).toBe('b');
    expect(a.lookups).toEqual([{ key: data.operationKey, found: false }]);
    // b was called only after a had been asked.
    const history = await rt.operations.history(data.operationKey);
    expect(history.map((h) => `${h.step}:${h.provider}:${h.outcome}`)).toEqual(['send:a:in_doubt', 'reconcile:a:failed', 'send:b:sent']);
    expect(history[1]?.errorCode).toBe('NOT_FOUND_ON_LOOKUP');
    const record = await rt.operations.get(data.operationKey);
    const journal = await rt.journal.forOperation(data.operationKey, record?.journalIds ?? []);
    expect(journal.map((e) => `${e.type}:${e.fields.provider}`)).toEqual(['in_doubt:a', 'sent:b']);
  });

  it('a in doubt but a has it: reconciled as sent by a, b never called', async () => {
    worker({ providerAttempts: 1 });
    const data = job('dropped');
    a.scriptFor(data.recipient, 'accept-then-drop');
    await enqueueDeliveries(rt.queues, [data]);
    await waitUntil(() => sentBy(data.operationKey), 'the operation to be sent', { timeoutMs: 60_000 });
    expect(await sentBy(data.operationKey)).toBe('a');
    expect(b.requests).toHaveLength(0);
    expect(a.accepted.get(data.operationKey)?.count).toBe(1);
  });
});

describe('circuit breaker', () => {
  it('opens after 3 consecutive failures: a then costs a skip, not a call; half-opens after the cooldown and closes on success', async () => {
    await a.down();
    const p = worker();
    const first = [job('breaker'), job('breaker'), job('breaker')];
    for (const data of first) {
      await enqueueDeliveries(rt.queues, [data]);
      await waitUntil(() => sentBy(data.operationKey), 'b to send', { timeoutMs: 60_000 });
    }
    expect(await p.metric('singleshot_provider_breaker_state', { provider: 'a' })).toBe(2);
    expect(await p.metric('singleshot_provider_breaker_state', { provider: 'b' })).toBe(0);

    // Open: skipped at once, without even a refused connection.
    const skipped = job('breaker');
    await enqueueDeliveries(rt.queues, [skipped]);
    await waitUntil(() => sentBy(skipped.operationKey), 'b to send', { timeoutMs: 60_000 });
    expect(await steps(skipped.operationKey)).toEqual(['breaker_skip:a:BREAKER_OPEN', 'send:b:sent']);

    // a is back; after the cooldown one trial goes to a, and its success closes the breaker.
    await a.up();
    await waitUntil(async () => (await p.metric('singleshot_provider_breaker_state', { provider: 'a' })) === 1, 'the breaker to half-open', { timeoutMs: 30_000 });
    const trial = job('breaker');
    await enqueueDeliveries(rt.queues, [trial]);
    await waitUntil(() => sentBy(trial.operationKey), 'the trial to be sent', { timeoutMs: 60_000 });
    expect(await sentBy(trial.operationKey)).toBe('a');
    expect(await p.metric('singleshot_provider_breaker_state', { provider: 'a' })).toBe(0);
    expect(await p.metric('singleshot_fallback_switches_total', { from: 'a', to: 'b' })).toBe(4);
    expect(b.accepted.size).toBe(4);
    expect(await status(trial.operationKey)).toBe('sent');
  });
});
