import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryableError, externalCode } from '@singleshot/core';
import type { Provider, LookupResult } from '@singleshot/providers';
import { KeyBuilder, OperationStore, ReplicaWaitError, createRedis, type RedisClient } from '@singleshot/store';
import { createLogger, createMetrics } from '@singleshot/observability';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { deliver, type DeliverDeps } from './deliver';

// The claim must be on a replica before the provider call: on a cluster, a
// failover that loses a claim made before a send would let the next claim see
// a fresh operation and send it again. The store's claim makes that wait
// (OperationStore's `replicas`); here the wait is a function each case scripts,
// on a real Redis.

let server: TestRedis;
let redis: RedisClient;
let ops: OperationStore;
const keys = new KeyBuilder('cr', 4);
const order: string[] = [];
const accepted = new Set<string>();

const provider: Provider = {
  name: 'p',
  type: 'http',
  async send(req) {
    order.push('send');
    accepted.add(req.operationKey);
    return { externalId: `p-${req.operationKey.slice(0, 6)}` };
  },
  lookup: async (key: string): Promise<LookupResult> => (accepted.has(key) ? { found: true, externalId: 'p-found' } : { found: false }),
  close: async () => undefined,
};

/** Deliver's deps on a store whose replica wait is `after` (none: no replica wait, a single Redis). */
function deps(after: ((written: readonly string[]) => Promise<void>) | undefined, leaseMs = 5000): DeliverDeps {
  return {
    operations: after ? new OperationStore(redis, keys, { retentionMs: 86_400_000, replicas: { owners: () => 'master-a', after: (written) => after(written) } }) : ops,
    providers: () => [provider],
    addDead: async () => undefined,
    policy: { leaseMs, attempts: 5, backoffMs: [10], backoffCapMs: 60_000, inDoubtPolicy: 'resend', providerAttempts: 2 },
    workerId: 'test',
    logger: createLogger({ app: 'test', level: 'silent' }),
    metrics: createMetrics(),
    random: () => 0.5,
  };
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

describe('claim replication before the send', () => {
  it('the replica wait runs after the claim and before the provider call', async () => {
    order.length = 0;
    const job = deliverJob(`cr-a-${Date.now()}`, { route: 'orders' });
    const outcome = await deliver(
      job,
      deps(async (written) => {
        expect(written).toEqual([keys.op(job.operationKey)]);
        expect((await ops.get(job.operationKey))?.status).toBe('sending');
        order.push('replicated');
      }),
    );
    expect(outcome).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(order).toEqual(['replicated', 'send']);
  });

  it('a failed replica wait sends nothing; the next claim after the lease reconciles and sends once', async () => {
    order.length = 0;
    const job = deliverJob(`cr-b-${Date.now()}`, { route: 'orders' });
    const failed = Object.assign(new Error('only 0 of 1 replica(s) acknowledged the write in time'), { code: 'REPLICA_WAIT_TIMEOUT' });
    // A short lease for the claim that is not confirmed, so the next claim comes soon.
    await expect(deliver(job, deps(async () => Promise.reject(failed), 300))).rejects.toBe(failed);
    expect(order).toEqual([]);
    // The claim that was not confirmed holds its lease; once it runs out the next
    // claim finds `sending`, asks the provider (not found) and sends.
    let outcome = await deliver(job, deps(async () => undefined));
    for (let i = 0; outcome.kind === 'conflict' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      outcome = await deliver(job, deps(async () => undefined));
    }
    expect(outcome).toMatchObject({ kind: 'ended', status: 'sent' });
    expect(order).toEqual(['send']);
    expect((await ops.get(job.operationKey))?.status).toBe('sent');
  });

  // A lease extension answered by a master that is then failed over (paused
  // past the node timeout, or killed before its replica had it) is lost with
  // it: the promoted master's lock ends where the claim put it, and a later
  // claim may take the operation then. A holder that counted that extension
  // would start its next call on a lease nobody else can see.
  it('an extension whose replica wait fails is not counted: no call after the claim’s lease', async () => {
    const leaseMs = 1500;
    const job = deliverJob(`cr-c-${Date.now()}`, { route: 'orders' });
    let waits = 0;
    let extended = 0;
    const calls: string[] = [];
    // When the claim had answered: the holder's lease runs from before it, so it ends by this plus the lease.
    let claimedAt = Number.POSITIVE_INFINITY;
    const first: Provider = {
      ...provider,
      name: 'first',
      async send() {
        calls.push('first');
        // Past a point where only an extension could leave room for another call.
        await waitUntil(() => extended >= 1 && Date.now() > claimedAt + leaseMs - 350, 'an extension and most of the claimed lease to pass', { timeoutMs: 10_000, intervalMs: 10 });
        throw new RetryableError('first: refused', externalCode('ECONNREFUSED'), { safeToFallback: true });
      },
    };
    const second: Provider = { ...provider, name: 'second', send: async () => (calls.push('second'), { externalId: 'second-1' }) };
    const d = deps(async () => {
      waits += 1;
      if (waits > 1) throw new ReplicaWaitError(0, 1, 'master_changed');
    }, leaseMs);
    const store = d.operations;
    const operations = Object.create(store) as OperationStore;
    operations.claim = async (input) => {
      const claim = await store.claim(input);
      claimedAt = Date.now();
      return claim;
    };
    // Counted when asked: the extension's replica wait fails, so the store's extend rejects.
    operations.extend = async (...args) => {
      extended += 1;
      return store.extend(...args);
    };
    const outcome = await deliver(job, { ...d, operations, providers: () => [first, second] });
    expect(calls).toEqual(['first']);
    expect(outcome).toMatchObject({ kind: 'retry' });
  });
});
