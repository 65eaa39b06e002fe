import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import { InDoubtError, PermanentError, RetryableError, type DeliverJobData, externalCode } from '@singleshot/core';
import { BreakerRegistry, type CallContext, type LookupResult, type Provider, type SendRequest } from '@singleshot/providers';
import { KeyBuilder, OperationStore, createRedis } from '@singleshot/store';
import { createLogger, createMetrics, type Metrics } from '@singleshot/observability';
import type { DeadJobData } from '@singleshot/queues';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { deliver, type DeliverDeps } from './deliver';
import { commitMarginMs } from './send-chain';

// The fallback chain and the breaker inside `deliver`, on a real Redis. Providers
// are small object literals of the provider port that follow a script.
type Step = 'ok' | 'refused' | '503' | 'in_doubt' | 'permanent' | ((req: SendRequest, ctx: CallContext) => Promise<string>);

interface ScriptedProvider extends Provider {
  calls: { key: string; timeoutMs: number }[];
  script: Step[];
  accepted: Set<string>;
}

function provider(name: string, options: { lookup?: boolean } = {}): ScriptedProvider {
  const p: ScriptedProvider = {
    name,
    type: 'http',
    calls: [],
    script: [],
    accepted: new Set(),
    async send(req, ctx) {
      p.calls.push({ key: req.operationKey, timeoutMs: ctx.timeoutMs });
      const step = p.script.shift() ?? 'ok';
      if (typeof step === 'function') return { externalId: await step(req, ctx) };
      switch (step) {
        case 'ok':
          p.accepted.add(req.operationKey);
          return { externalId: `${name}-${req.operationKey.slice(0, 6)}` };
        case 'refused':
          throw new RetryableError(`${name}: ECONNREFUSED`, externalCode('ECONNREFUSED'), { safeToFallback: true });
        case '503':
          throw new RetryableError(`${name}: HTTP 503`, 'HTTP_503');
        case 'in_doubt':
          throw new InDoubtError(`${name}: reset after write`, externalCode('ECONNRESET'));
        case 'permanent':
          throw new PermanentError(`${name}: HTTP 422`, 'HTTP_422');
      }
    },
    close: async () => undefined,
  };
  if (options.lookup) {
    p.lookup = async (key: string): Promise<LookupResult> => (p.accepted.has(key) ? { found: true, externalId: `${name}-found` } : { found: false });
  }
  return p;
}

let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
let metrics: Metrics;
const keys = new KeyBuilder('dc', 4);
const logger = createLogger({ app: 'test', level: 'silent' });
const dead: DeadJobData[] = [];
const breakerRegistries: BreakerRegistry[] = [];
let n = 0;

function job(): DeliverJobData {
  return deliverJob(`dc-${++n}-${Date.now()}`, { route: 'orders' });
}

function deps(chain: Provider[], extra: Partial<DeliverDeps> & { providerAttempts?: number; leaseMs?: number; inDoubtPolicy?: 'resend' | 'dead' } = {}): DeliverDeps {
  const { providerAttempts = 2, leaseMs = 5000, inDoubtPolicy = 'resend', ...rest } = extra;
  return {
    operations: ops,
    providers: () => chain,
    addDead: async (record) => void dead.push(record),
    policy: { leaseMs, attempts: 5, backoffMs: [10], backoffCapMs: 60_000, inDoubtPolicy, providerAttempts },
    workerId: 'test',
    logger,
    metrics,
    random: () => 0.5,
    ...rest,
  };
}

function breakers(now: () => number, failureThreshold = 2, cooldownMs = 1000): BreakerRegistry {
  const registry = new BreakerRegistry({ failureThreshold, cooldownMs, now });
  breakerRegistries.push(registry);
  return registry;
}

const switches = async (from: string, to: string) =>
  (await metrics.fallbackSwitches.get()).values.find((v) => v.labels.from === from && v.labels.to === to)?.value ?? 0;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
});

afterEach(() => {
  metrics = createMetrics();
  for (const r of breakerRegistries.splice(0)) r.dispose();
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

metrics = createMetrics();

describe('fallback chain', () => {
  it('A refused before the request was written → B sends in the same claim', async () => {
    const [a, b] = [provider('a'), provider('b')];
    a.script.push('refused');
    const data = job();
    expect(await deliver(data, deps([a, b]))).toMatchObject({ kind: 'ended', status: 'sent', provider: 'b' });
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
    expect(await switches('a', 'b')).toBe(1);
    const history = await ops.history(data.operationKey);
    expect(history.map((h) => [h.step, h.provider, h.outcome, h.errorCode ?? ''])).toEqual([
      ['send', 'a', 'failed', 'ECONNREFUSED'],
      ['send', 'b', 'sent', ''],
    ]);
    expect(history.every((h) => h.attempt === 1 && typeof h.durationMs === 'number')).toBe(true);
  });

  it('A 503 is retried on A until its budget is spent, then B takes it', async () => {
    const [a, b] = [provider('a'), provider('b')];
    a.script.push('503', '503');
    const data = job();
    const d = deps([a, b], { providerAttempts: 2 });
    expect(await deliver(data, d)).toMatchObject({ kind: 'retry', reason: 'HTTP_503' });
    expect(b.calls).toHaveLength(0);
    expect(await deliver(data, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'b' });
    expect([a.calls.length, b.calls.length]).toEqual([2, 1]);
    // Budget spent: the next attempt of another operation that failed twice on A starts at B.
    expect((await ops.history(data.operationKey)).map((h) => `${h.attempt}:${h.provider}:${h.outcome}`)).toEqual(['1:a:failed', '2:a:failed', '2:b:sent']);
  });

  it('a failed attempt leaves the next attempt on the provider that still has budget', async () => {
    const [a, b] = [provider('a'), provider('b')];
    a.script.push('503');
    b.script.push('503');
    const data = job();
    const d = deps([a, b], { providerAttempts: 1 });
    expect(await deliver(data, d)).toMatchObject({ kind: 'retry' });
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
    // Both spent their budget: the chain starts over at A.
    expect(await deliver(data, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'a' });
  });

  it('A in doubt → no fallback; the next attempt asks A first and moves on only after A says "not found"', async () => {
    const [a, b] = [provider('a', { lookup: true }), provider('b')];
    a.script.push('in_doubt');
    const data = job();
    const d = deps([a, b], { providerAttempts: 1 });
    expect(await deliver(data, d)).toMatchObject({ kind: 'retry', reason: 'in_doubt' });
    expect(b.calls).toHaveLength(0);
    expect((await ops.get(data.operationKey))?.status).toBe('in_doubt');
    expect(await deliver(data, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'b' });
    const history = await ops.history(data.operationKey);
    expect(history.map((h) => `${h.step}:${h.provider}:${h.outcome}`)).toEqual(['send:a:in_doubt', 'reconcile:a:failed', 'send:b:sent']);
  });

  it('A in doubt and A has it after all → sent through A, B never called', async () => {
    const [a, b] = [provider('a', { lookup: true }), provider('b')];
    a.script.push(async (req) => {
      a.accepted.add(req.operationKey);
      throw new InDoubtError('a: reset after write', externalCode('ECONNRESET'));
    });
    const data = job();
    const d = deps([a, b], { providerAttempts: 1 });
    await deliver(data, d);
    expect(await deliver(data, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'a', externalId: 'a-found', reconciled: true });
    expect(b.calls).toHaveLength(0);
  });

  it('A in doubt without a lookup (resend policy): the operation stays on A, never B', async () => {
    const [a, b] = [provider('a'), provider('b')];
    a.script.push('in_doubt', 'in_doubt');
    const data = job();
    const d = deps([a, b], { providerAttempts: 1 });
    await deliver(data, d);
    await deliver(data, d);
    expect(await deliver(data, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'a' });
    expect([a.calls.length, b.calls.length]).toEqual([3, 0]);
  });

  it('a permanent error is the DLQ at once, no fallback', async () => {
    const [a, b] = [provider('a'), provider('b')];
    a.script.push('permanent');
    const data = job();
    expect(await deliver(data, deps([a, b]))).toEqual({ kind: 'ended', status: 'dead', endedNow: true, reason: 'permanent' });
    expect(b.calls).toHaveLength(0);
    expect(dead.at(-1)).toMatchObject({ operationKey: data.operationKey, reason: 'permanent', error: { code: 'HTTP_422' } });
  });
});

describe('circuit breaker in the chain', () => {
  it('opens after consecutive failures, then A costs one fast skip; half-opens after the cooldown', async () => {
    let clock = 1_000_000;
    const now = () => clock;
    const [a, b] = [provider('a'), provider('b')];
    const registry = breakers(now, 2, 1000);
    const d = deps([a, b], { breakers: registry, now });
    a.script.push('refused', 'refused');
    await deliver(job(), d);
    await deliver(job(), d);
    expect(registry.get('webhook', 'a').state()).toBe('open');
    expect(a.calls).toHaveLength(2);

    const skipped = job();
    expect(await deliver(skipped, d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'b' });
    expect(a.calls).toHaveLength(2);
    expect((await ops.history(skipped.operationKey)).map((h) => `${h.step}:${h.provider}:${h.errorCode ?? h.outcome}`)).toEqual(['breaker_skip:a:BREAKER_OPEN', 'send:b:sent']);

    clock += 1000;
    expect(registry.get('webhook', 'a').state()).toBe('half_open');
    expect(await deliver(job(), d)).toMatchObject({ kind: 'ended', status: 'sent', provider: 'a' });
    expect(a.calls).toHaveLength(3);
    expect(registry.get('webhook', 'a').state()).toBe('closed');
  });

  it('when every provider is open the attempt is retried no sooner than the breaker allows, without claiming', async () => {
    const clock = 2_000_000;
    const now = () => clock;
    const a = provider('a');
    const registry = breakers(now, 1, 5000);
    const d = deps([a], { breakers: registry, now });
    a.script.push('refused');
    await deliver(job(), d);
    const data = job();
    const outcome = await deliver(data, d);
    expect(outcome).toMatchObject({ kind: 'wait', reason: 'breaker_open' });
    const delayMs = (outcome as { delayMs: number }).delayMs;
    expect(delayMs).toBeGreaterThanOrEqual(5000);
    expect(delayMs).toBeLessThan(5250);
    expect(a.calls).toHaveLength(1);
    // A skip must not use up an attempt, or good operations die with every
    // claim BREAKER_OPEN and no provider ever called (chaos suite, seed 7).
    // The claim marked the wait instead of taking the lock: no attempt, no fence.
    expect(await ops.get(data.operationKey)).toMatchObject({ status: 'pending', attempts: 0, fence: '0', waitingReason: 'breaker_open' });
    expect(await redis.exists(keys.lock(data.operationKey))).toBe(0);
  });

  it('half-open: only the trial claims; the others wait without an attempt, and an operation waiting is visible', async () => {
    let clock = 3_000_000;
    const now = () => clock;
    const a = provider('a');
    const registry = breakers(now, 1, 5000);
    const waits: string[] = [];
    const d = deps([a], { breakers: registry, now, waiting: { note: (operationKey, reason) => void waits.push(`${operationKey}:${reason}`) } });
    // The trial hangs until released, so the others meet a trial in flight.
    let release!: () => void;
    a.script.push('refused', () => new Promise<string>((r) => (release = () => r('a-trial'))));
    await deliver(job(), d); // opens the breaker
    clock += 5_000; // half-open
    const jobs = [job(), job(), job(), job()];
    const trial = deliver(jobs[0] as DeliverJobData, d);
    await waitUntil(() => a.calls.length === 2, 'the trial call');
    const others = await Promise.all(jobs.slice(1).map((j) => deliver(j, d)));
    expect(others.map((o) => o.kind)).toEqual(['wait', 'wait', 'wait']);
    for (const j of jobs.slice(1)) expect(await ops.get(j.operationKey)).toMatchObject({ status: 'pending', attempts: 0, waitingReason: 'breaker_open' });
    expect(waits).toEqual(jobs.slice(1).map((j) => `${j.operationKey}:breaker_open`));
    release();
    expect(await trial).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(await ops.get((jobs[0] as DeliverJobData).operationKey)).toMatchObject({ status: 'sent', attempts: 1 });
    // Closed again: the others go through, each with one attempt.
    for (const j of jobs.slice(1)) expect(await deliver(j, d)).toMatchObject({ kind: 'ended', status: 'sent' });
    for (const j of jobs.slice(1)) expect(await ops.get(j.operationKey)).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('a claim that meets a breaker that opened meanwhile is released and its attempt refunded', async () => {
    const clock = 4_000_000;
    const now = () => clock;
    const a = provider('a');
    const registry = breakers(now, 1, 5000);
    // The gate sees a closed breaker; another call's failure opens it while this one claims.
    const d = deps([a], { breakers: registry, now });
    const data = job();
    const realGet = d.providers;
    let opened = false;
    d.providers = (channel) => {
      if (!opened) {
        // Runs after the gate's synchronous check, while the claim is in flight.
        queueMicrotask(() => {
          if (!opened) {
            opened = true;
            const permit = registry.get(channel, 'a').acquire();
            registry.get(channel, 'a').record('failure', permit as { trial: boolean });
          }
        });
      }
      return realGet(channel);
    };
    const outcome = await deliver(data, d);
    expect(outcome).toMatchObject({ kind: 'retry', reason: 'breaker_open' });
    expect(a.calls).toHaveLength(0);
    expect(await ops.get(data.operationKey)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});

describe('lease and deadlines with several providers in one claim', () => {
  it('each provider call gets what is left of the lease minus the commit margin', async () => {
    let clock = 5_000_000;
    const now = () => clock;
    const leaseMs = 3000;
    const margin = commitMarginMs(leaseMs);
    const [a, b] = [provider('a'), provider('b')];
    a.script.push(async () => {
      clock += 1000; // A took a second before it was refused
      throw new RetryableError('a: refused', externalCode('ECONNREFUSED'), { safeToFallback: true });
    });
    expect(await deliver(job(), deps([a, b], { leaseMs, now }))).toMatchObject({ kind: 'ended', status: 'sent', provider: 'b' });
    expect(a.calls[0]?.timeoutMs).toBe(leaseMs - margin);
    expect(b.calls[0]?.timeoutMs).toBe(leaseMs - 1000 - margin);
  });

  it('a provider is not called when too little lease is left; the claim is handed back', async () => {
    let clock = 6_000_000;
    const now = () => clock;
    const leaseMs = 3000;
    const [a, b] = [provider('a'), provider('b')];
    a.script.push(async () => {
      clock += leaseMs; // A used the whole lease
      throw new RetryableError('a: refused', externalCode('ECONNREFUSED'), { safeToFallback: true });
    });
    const data = job();
    expect(await deliver(data, deps([a, b], { leaseMs, now }))).toMatchObject({ kind: 'retry', reason: 'lease_too_short' });
    expect(b.calls).toHaveLength(0);
    expect((await ops.get(data.operationKey))?.status).toBe('pending');
  });

  it('a holder that lost its lease during a call stops: no next provider, no commit', async () => {
    const leaseMs = 1000;
    const [a, b] = [provider('a'), provider('b')];
    const data = job();
    a.script.push(async (_req, ctx) => {
      // Another worker takes the operation after our lease (and the time a
      // call under it may still land) ran out.
      await redis.del(keys.lock(data.operationKey));
      await redis.hset(keys.op(data.operationKey), 'leaseUntil', '0');
      const other = await ops.claim({ ...data, owner: 'other', leaseMs: 60_000 });
      if (other.kind !== 'go') throw new Error('expected the other claim');
      await waitUntil(() => ctx.signal.aborted, 'the keeper to notice the lost lease', { timeoutMs: 10_000, intervalMs: 20 });
      throw new RetryableError('a: refused', externalCode('ECONNREFUSED'), { safeToFallback: true });
    });
    expect(await deliver(data, deps([a, b], { leaseMs }))).toEqual({ kind: 'stale' });
    expect(b.calls).toHaveLength(0);
    expect(await ops.get(data.operationKey)).toMatchObject({ status: 'sending', owner: 'other', fence: '2' });
    expect(await ops.history(data.operationKey)).toEqual([]);
  });
});
