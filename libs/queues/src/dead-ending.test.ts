import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyBuilder, OperationStore, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { endDead, type DeadEndingDeps } from './dead-ending';
import { addDead, openQueues, type Queues } from './queues';

// The shared dead ending on a real Redis: fenced commit, then the DLQ record.
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let ops: OperationStore;
const keys = new KeyBuilder('de', 4);
const error = { code: 'INVALID_RECIPIENT' as const, message: 'recipient has a line break' };

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, keys);
  ops = new OperationStore(redis, keys, { retentionMs: 86_400_000 });
});

afterAll(async () => {
  await queues.close();
  redis.disconnect();
  await server.destroy();
});

function deps(order: string[]): DeadEndingDeps {
  return {
    operations: ops,
    addDead: async (record) => {
      order.push('record');
      await addDead(queues.dead, record);
    },
  };
}

describe('endDead', () => {
  it('commits dead under the fence, runs `committed`, then writes the DLQ record', async () => {
    const job = deliverJob('dead-ok');
    const claim = await ops.claim({ ...job, owner: 'w', leaseMs: 30_000, job });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    const order: string[] = [];
    const history = { at: Date.now(), attempt: claim.attempts, fence: claim.fence, outcome: 'dead' as const, errorCode: error.code, error: error.message };

    const result = await endDead(deps(order), { job, fence: claim.fence, reason: 'invalid_recipient', error, history }, () => order.push('counted'));

    expect(result.kind).toBe('ok');
    expect(order).toEqual(['counted', 'record']);
    expect(await ops.get(job.operationKey)).toMatchObject({ status: 'dead', reason: 'invalid_recipient', lastErrorCode: 'INVALID_RECIPIENT' });
    const record = await queues.dead.getJob(job.operationKey);
    expect(record?.data).toMatchObject({ operationKey: job.operationKey, reason: 'invalid_recipient', error });
    expect(record?.data.attempts).toHaveLength(1);
  });

  it('a commit under a superseded fence writes nothing: no count, no DLQ record, the state unchanged', async () => {
    const job = deliverJob('dead-stale');
    const first = await ops.claim({ ...job, owner: 'w1', leaseMs: 30_000, job });
    if (first.kind !== 'go') throw new Error('expected a claim');
    await ops.commit({ operationKey: job.operationKey, fence: first.fence, outcome: 'released', messageKey: job.messageKey, recipient: job.recipient, channel: job.channel, releaseTo: 'pending', refundAttempt: true, nextAttemptAt: 0 });
    const second = await ops.claim({ ...job, owner: 'w2', leaseMs: 30_000, job });
    if (second.kind !== 'go') throw new Error('expected a second claim');
    const order: string[] = [];
    const history = { at: Date.now(), attempt: first.attempts, fence: first.fence, outcome: 'dead' as const };

    const result = await endDead(deps(order), { job, fence: first.fence, reason: 'permanent', error, history }, () => order.push('counted'));

    expect(result).toEqual({ kind: 'stale', currentFence: second.fence });
    expect(order).toEqual([]);
    expect((await ops.get(job.operationKey))?.status).not.toBe('dead');
    expect(await queues.dead.getJob(job.operationKey)).toBeUndefined();
  });
});
