import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import { InDoubtError, PermanentError, RetryableError, type DeliverJobData, externalCode } from '@singleshot/core';
import type { Provider, SendRequest } from '@singleshot/providers';
import { KeyBuilder, OperationStore, RateLimiter, createRedis } from '@singleshot/store';
import { createLogger, createMetrics, type Metrics } from '@singleshot/observability';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { deliver, type DeliverDeps } from './deliver';

// Every ending of a claimed attempt adds exactly one `singleshot_deliveries_total`
// sample, with the `result` that names the ending (ending.ts owns them all), on a
// real Redis. The two miscounts this pins: a failed reconciliation was never
// counted `retry`, and a last failed call was counted `retry` and then `dead`.
let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
let metrics: Metrics;
const keys = new KeyBuilder('en', 4);
const logger = createLogger({ app: 'test', level: 'silent' });
let n = 0;

function job(): DeliverJobData {
  return deliverJob(`en-${++n}-${Date.now()}`, { route: 'orders' });
}

/** A provider whose calls follow `script`; `lookup` when given. */
function provider(script: ((req: SendRequest) => Promise<string>)[], lookup?: Provider['lookup']): Provider {
  return {
    name: 'p',
    type: 'http',
    send: async (req) => ({ externalId: await (script.shift() ?? (async () => 'ok-id'))(req) }),
    ...(lookup ? { lookup } : {}),
    close: async () => undefined,
  };
}

function deps(chain: Provider[], extra: Partial<DeliverDeps> & { attempts?: number } = {}): DeliverDeps {
  const { attempts = 5, ...rest } = extra;
  return {
    operations: ops,
    providers: () => chain,
    addDead: async () => undefined,
    policy: { leaseMs: 5000, attempts, backoffMs: [10], backoffCapMs: 1000, inDoubtPolicy: 'resend', providerAttempts: 1 },
    workerId: 'test',
    logger,
    metrics,
    random: () => 0.5,
    ...rest,
  };
}

/** The samples of singleshot_deliveries_total as `result:value`, non-zero only. */
async function samples(): Promise<string[]> {
  const values = (await metrics.deliveries.get()).values.filter((v) => v.value > 0);
  return values.map((v) => `${String(v.labels.result)}:${v.value}`).sort();
}

const fail503 = async (): Promise<string> => {
  throw new RetryableError('p: HTTP 503', 'HTTP_503');
};
const failInDoubt = async (): Promise<string> => {
  throw new InDoubtError('p: reset after write', externalCode('ECONNRESET'));
};

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
});

beforeEach(() => {
  metrics = createMetrics();
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('one singleshot_deliveries_total sample per ending', () => {
  it('sent', async () => {
    expect(await deliver(job(), deps([provider([])]))).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(await samples()).toEqual(['sent:1']);
  });

  it('retry (a retryable failure with attempts left)', async () => {
    expect(await deliver(job(), deps([provider([fail503])]))).toMatchObject({ kind: 'retry', reason: 'HTTP_503' });
    expect(await samples()).toEqual(['retry:1']);
  });

  it('in_doubt (a call the provider may have taken)', async () => {
    expect(await deliver(job(), deps([provider([failInDoubt])]))).toMatchObject({ kind: 'retry', reason: 'in_doubt' });
    expect(await samples()).toEqual(['in_doubt:1']);
  });

  it('dead (a permanent error)', async () => {
    const permanent = async (): Promise<string> => {
      throw new PermanentError('p: HTTP 422', 'HTTP_422');
    };
    expect(await deliver(job(), deps([provider([permanent])]))).toEqual({ kind: 'ended', status: 'dead', endedNow: true, reason: 'permanent' });
    expect(await samples()).toEqual(['dead:1']);
  });

  it('dead, not retry and dead, when the last attempt fails', async () => {
    expect(await deliver(job(), deps([provider([fail503])], { attempts: 1 }))).toEqual({ kind: 'ended', status: 'dead', endedNow: true, reason: 'attempts_exhausted' });
    expect(await samples()).toEqual(['dead:1']);
  });

  it('dead, not in_doubt and dead, when the last attempt ends in doubt', async () => {
    expect(await deliver(job(), deps([provider([failInDoubt])], { attempts: 1 }))).toEqual({ kind: 'ended', status: 'dead', endedNow: true, reason: 'in_doubt_after_last_attempt' });
    expect(await samples()).toEqual(['dead:1']);
  });

  it('retry when the reconciliation of an in-doubt send fails', async () => {
    const lookupDown: Provider['lookup'] = async () => {
      throw new RetryableError('p: lookup HTTP 503', 'HTTP_503');
    };
    const data = job();
    const d = deps([provider([failInDoubt], lookupDown)]);
    await deliver(data, d);
    metrics = createMetrics();
    expect(await deliver(data, deps([provider([], lookupDown)]))).toMatchObject({ kind: 'retry', reason: 'reconcile_failed' });
    expect(await samples()).toEqual(['retry:1']);
    expect((await ops.get(data.operationKey))?.status).toBe('in_doubt');
  });

  it('suppressed (over the per-recipient limit)', async () => {
    const limits = { limiter: new RateLimiter(redis, keys), perRecipient: { max: 1, windowSeconds: 60 }, route: () => undefined };
    const first = job();
    await deliver(first, deps([provider([])], { limits }));
    metrics = createMetrics();
    const second = { ...job(), recipient: first.recipient };
    expect(await deliver(second, deps([provider([])], { limits }))).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'rate_limit' });
    expect(await samples()).toEqual(['suppressed:1']);
  });

  it('released (shutdown before the call)', async () => {
    const shutdown = new AbortController();
    shutdown.abort();
    expect(await deliver(job(), deps([provider([])], { shutdown: shutdown.signal }))).toMatchObject({ kind: 'retry', reason: 'shutdown' });
    expect(await samples()).toEqual(['released:1']);
  });

  it('stale (a later claim superseded the fence during the call)', async () => {
    const data = job();
    const takeOver = async (): Promise<string> => {
      // Our lease, and the time a call under it may still land, ran out.
      await redis.del(keys.lock(data.operationKey));
      await redis.hset(keys.op(data.operationKey), 'leaseUntil', '0');
      const other = await ops.claim({ ...data, owner: 'other', leaseMs: 60_000 });
      if (other.kind !== 'go') throw new Error('expected the other claim');
      return 'late-id';
    };
    expect(await deliver(data, deps([provider([takeOver])]))).toEqual({ kind: 'stale' });
    expect(await samples()).toEqual(['stale:1']);
    expect((await metrics.staleCommits.get()).values[0]?.value).toBe(1);
  });
});
