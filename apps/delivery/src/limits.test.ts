import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import type { DeliverJobData } from '@singleshot/core';
import type { Provider } from '@singleshot/providers';
import { Cancellations, JournalReader, KeyBuilder, OperationStore, RateLimiter, createRedis, replayOperationState } from '@singleshot/store';
import { createLogger, createMetrics } from '@singleshot/observability';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { deliver, type DeliverDeps } from './deliver';

// Per-recipient limits inside `deliver`, on a real Redis.
let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
const keys = new KeyBuilder('lm', 4);
const metrics = createMetrics();
const sent: string[] = [];
const sink: Provider = {
  name: 'sink',
  type: 'http',
  send: async (req) => {
    sent.push(req.operationKey);
    return { externalId: `id-${sent.length}` };
  },
  close: async () => undefined,
};

let n = 0;
function job(recipient: string, route = 'orders'): DeliverJobData {
  return deliverJob(`lm-${++n}`, { recipient, route, firstArrivalAt: 1 });
}

function deps(limits: { global?: { max: number; windowSeconds: number }; routes?: Record<string, { max: number; windowSeconds: number }> }): DeliverDeps {
  return {
    operations: ops,
    providers: () => [sink],
    addDead: async () => undefined,
    policy: { leaseMs: 5000, attempts: 3, backoffMs: [10], backoffCapMs: 1000, inDoubtPolicy: 'resend', providerAttempts: 2 },
    limits: {
      limiter: new RateLimiter(redis, keys),
      ...(limits.global ? { perRecipient: limits.global } : {}),
      route: (name) => limits.routes?.[name],
    },
    workerId: 'test',
    logger: createLogger({ app: 'test', level: 'silent' }),
    metrics,
  };
}

const suppressedCount = async () => (await metrics.suppressed.get()).values.find((v) => v.labels.reason === 'rate_limit')?.value ?? 0;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('per-recipient limits in delivery', () => {
  it('suppresses the (N+1)th operation for a recipient, journaled and counted; a redelivered job stays suppressed', async () => {
    const d = deps({ global: { max: 2, windowSeconds: 3600 } });
    const [a, b, c] = [job('x@example.com'), job('X@example.com'), job('x@example.com')];
    expect(await deliver(a, d)).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(await deliver(b, d)).toMatchObject({ kind: 'ended', status: 'sent' });
    const before = await suppressedCount();
    expect(await deliver(c, d)).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'rate_limit' });
    expect(await suppressedCount()).toBe(before + 1);
    expect(sent).not.toContain(c.operationKey);
    const record = await ops.get(c.operationKey);
    expect(record).toMatchObject({ status: 'suppressed', reason: 'rate_limit', lastErrorCode: 'RATE_LIMIT' });
    const entries = await new JournalReader(redis, keys).forOperation(c.operationKey, record?.journalIds ?? []);
    expect(entries.map((e) => [e.type, e.fields.reason])).toEqual([['suppressed', 'rate_limit']]);
    expect((await ops.history(c.operationKey)).map((h) => h.step)).toEqual(['rate_limit']);
    expect(await deliver(c, d)).toEqual({ kind: 'ended', status: 'suppressed', endedNow: false });
    // Other recipients are not affected.
    expect(await deliver(job('y@example.com'), d)).toMatchObject({ kind: 'ended', status: 'sent' });
  });

  it('a replayed suppression passes once (and takes a slot); the limit holds for the next operation', async () => {
    const d = deps({ global: { max: 1, windowSeconds: 3600 } });
    const [a, b, c] = [job('r@example.com'), job('r@example.com'), job('r@example.com')];
    await deliver(a, d);
    expect(await deliver(b, d)).toMatchObject({ kind: 'ended', status: 'suppressed' });
    await replayOperationState(redis, keys, { operationKey: b.operationKey, by: 'alice', via: 'test' }, { retentionMs: 86_400_000 });
    expect(await deliver(b, d)).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(await deliver(c, d)).toMatchObject({ kind: 'ended', status: 'suppressed' });
  });

  it('a route limit applies to that route only; a slot taken by the route is given back when the global limit stops it', async () => {
    const d = deps({ global: { max: 2, windowSeconds: 3600 }, routes: { alerts: { max: 1, windowSeconds: 3600 } } });
    expect(await deliver(job('z@example.com', 'alerts'), d)).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(await deliver(job('z@example.com', 'alerts'), d)).toMatchObject({ kind: 'ended', status: 'suppressed' });
    expect(await deliver(job('z@example.com', 'orders'), d)).toMatchObject({ kind: 'ended', status: 'sent' });
    // The route lets it through, the global window is full: the route's slot goes back.
    const d2 = deps({ global: { max: 1, windowSeconds: 3600 }, routes: { alerts: { max: 5, windowSeconds: 3600 } } });
    expect(await deliver(job('w@example.com', 'orders'), d2)).toMatchObject({ kind: 'ended', status: 'sent' });
    const stopped = job('w@example.com', 'alerts');
    expect(await deliver(stopped, d2)).toMatchObject({ kind: 'ended', status: 'suppressed' });
    expect(await redis.zscore(keys.rateLimit('route:alerts', 'w@example.com'), stopped.operationKey)).toBeNull();
  });

  it('a cancelled operation ends cancelled, and the slot read for it before the claim goes back', async () => {
    const d = deps({ global: { max: 1, windowSeconds: 3600 } });
    const cancelled = job('c@example.com');
    await new Cancellations(redis, keys, { retentionMs: 86_400_000 }).cancelOperation(cancelled, { by: 't', reason: 'test' });
    expect(await deliver(cancelled, d)).toMatchObject({ kind: 'ended', status: 'cancelled' });
    expect(await redis.zcard(keys.rateLimit('global', 'c@example.com'))).toBe(0);
    expect(await deliver(job('c@example.com'), d)).toMatchObject({ kind: 'ended', status: 'sent' });
  });
});
