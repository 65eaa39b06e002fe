import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import { Worker } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { KeyBuilder, OperationStore, createRedis } from '@singleshot/store';
import { enqueueDeliveries, openQueues, type Queues } from '@singleshot/queues';
import { createLogger } from '@singleshot/observability';
import { deliverJob, hexKey } from '@singleshot/test-jobs';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { RecoverySweeper, type SweeperDeps } from './sweeper';

// The sweeper on a real Redis with a real BullMQ queue and no worker, so what
// it puts in the queue stays there to be looked at.
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let ops: OperationStore;
const keys = new KeyBuilder('sw', 4);
const HOUR = 3_600_000;
// Operations were claimed an hour ago (as far as the index knows): all overdue now.
const past = () => Date.now() - HOUR;
const logger = createLogger({ app: 'test', level: 'silent' });
const sweepers: RecoverySweeper[] = [];

let n = 0;
function job(): DeliverJobData {
  return deliverJob(`sw-${++n}`, { firstArrivalAt: 1 });
}

function sweeper(workerId = 'w1', extra: Partial<SweeperDeps> = {}): RecoverySweeper {
  const s = new RecoverySweeper({ redis, keys, deliverQueues: queues, workerId, intervalMs: 1000, leaseMs: 2000, logger, ...extra });
  sweepers.push(s);
  return s;
}

/** Claims as a worker that then died: no lock left, no job in the queue. */
async function abandoned(data: DeliverJobData, then?: 'in_doubt' | 'failed'): Promise<void> {
  const claim = await ops.claim({ ...data, owner: 'dead-worker', leaseMs: 2000, job: data });
  if (claim.kind !== 'go') throw new Error('expected a claim');
  if (then) await ops.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: then, messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, nextAttemptAt: past() });
  await redis.del(keys.lock(data.operationKey));
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, keys);
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000, now: past });
});

afterAll(async () => {
  for (const s of sweepers) await s.stop();
  await queues.close();
  redis.disconnect();
  await server.destroy();
});

describe('RecoverySweeper', () => {
  it('re-enqueues operations left sending or in_doubt whose job is gone, from the job kept at the claim', async () => {
    const sending = job();
    const doubt = job();
    await abandoned(sending);
    await abandoned(doubt, 'in_doubt');
    const report = await sweeper().sweepOnce();
    expect(report.swept).toBe(true);
    expect(report.requeued.sort()).toEqual([sending.operationKey, doubt.operationKey].sort());
    for (const data of [sending, doubt]) {
      const queued = await queues.deliver.getJob(data.operationKey);
      expect(await queued?.getState()).toBe('waiting');
      expect(queued?.data).toEqual(data);
    }
    // Looked at again only after the new job had time to run; the in-doubt sign is kept.
    expect(Number(await redis.zscore(keys.activeIndexOf(doubt.operationKey), doubt.operationKey))).toBeLessThan(-Date.now());
    expect((await sweeper().sweepOnce()).requeued).toEqual([]);
  });

  it('leaves an operation alone while its lock is held or its job still waits', async () => {
    const locked = job();
    await ops.claim({ ...locked, owner: 'alive', leaseMs: 60_000, job: locked });
    const waiting = job();
    await abandoned(waiting, 'failed');
    await enqueueDeliveries(queues, [waiting]);
    const before = await queues.deliver.getJobCounts();
    const report = await sweeper().sweepOnce();
    expect(report.requeued).not.toContain(locked.operationKey);
    expect(report.requeued).not.toContain(waiting.operationKey);
    expect(report.alive).toBeGreaterThanOrEqual(2);
    expect(await queues.deliver.getJobCounts()).toEqual(before);
    expect(await queues.deliver.getJob(locked.operationKey)).toBeUndefined();
  });

  it('replaces a finished job whose operation is not terminal (e.g. BullMQ gave up on it)', async () => {
    const data = job();
    await abandoned(data, 'failed');
    // Failed for good inside BullMQ: what a worker leaves after its last infrastructure retry.
    await queues.deliver.drain(); // jobs of earlier cases: the worker below must take this one
    await queues.deliver.add('deliver', data, { jobId: data.operationKey, attempts: 1 });
    const conn = createRedis({ url: server.url, role: 'worker' });
    const worker = new Worker(queues.deliver.name, null, { connection: conn, prefix: keys.queuePrefix, autorun: false });
    const taken = await worker.getNextJob('token');
    expect(taken?.id).toBe(data.operationKey);
    await taken?.moveToFailed(new Error('Redis went away mid-job'), 'token', false);
    await worker.close();
    conn.disconnect();
    expect(await (await queues.deliver.getJob(data.operationKey))?.getState()).toBe('failed');
    expect((await sweeper().sweepOnce()).requeued).toEqual([data.operationKey]);
    expect(await (await queues.deliver.getJob(data.operationKey))?.getState()).toBe('waiting');
  });

  it('drops index entries of terminal or expired operations', async () => {
    const data = job();
    const claim = await ops.claim({ ...data, owner: 'w', leaseMs: 2000, job: data });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    await ops.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: 'sent', messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, externalId: 'x' });
    // A stale entry (say, restored from an older AOF) and one whose state expired.
    await redis.zadd(keys.activeIndexOf(data.operationKey), past(), data.operationKey);
    const gone = hexKey('gone');
    await redis.zadd(keys.activeIndexOf(gone), past(), gone);
    const report = await sweeper().sweepOnce();
    expect(report.cleaned).toBeGreaterThanOrEqual(2);
    expect(await redis.zscore(keys.activeIndexOf(data.operationKey), data.operationKey)).toBeNull();
    expect(await redis.zscore(keys.activeIndexOf(gone), gone)).toBeNull();
    expect(await queues.deliver.getJob(data.operationKey)).toBeUndefined();
  });

  it('only one process sweeps at a time; another takes over when the holder stops', async () => {
    const a = sweeper('holder-a');
    const b = sweeper('holder-b');
    await redis.del(keys.sweeperLock());
    expect((await a.sweepOnce()).swept).toBe(true);
    expect((await b.sweepOnce()).swept).toBe(false);
    expect((await a.sweepOnce()).swept).toBe(true);
    await a.stop();
    expect((await b.sweepOnce()).swept).toBe(true);
  });

  it('runs on its own every interval once started', async () => {
    await redis.del(keys.sweeperLock());
    const data = job();
    await abandoned(data);
    const s = sweeper('timer', { intervalMs: 100 });
    s.start();
    for (let i = 0; i < 200 && !(await queues.deliver.getJob(data.operationKey)); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await (await queues.deliver.getJob(data.operationKey))?.getState()).toBe('waiting');
    await s.stop();
  });
});
