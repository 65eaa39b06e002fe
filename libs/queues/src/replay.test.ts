import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@singleshot/store';
import type { DeliverJobData } from '@singleshot/core';
import { JournalReader, KeyBuilder, OperationStore, createRedis } from '@singleshot/store';
import { createMetrics } from '@singleshot/observability';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { deliverJob, hexKey } from '@singleshot/test-jobs';
import { addDead, enqueueDeliveries, openQueues, type Queues } from './queues';
import { replay, replayMany, type ReplayDeps } from './replay';
import { listDead, listSuppressedOperations } from './replay-list';
import { requeueDelivery } from './replay-requeue';

// Replay on a real Redis with real BullMQ queues (no worker: jobs stay where they are put).
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let ops: OperationStore;
let deps: ReplayDeps;
const keys = new KeyBuilder('rp', 4);
const retentionMs = 86_400_000;
const metrics = createMetrics();
const who = { by: 'alice', via: 'cli' };

function job(name: string, channel = 'webhook'): DeliverJobData {
  return deliverJob(name, { channel, firstArrivalAt: 1 });
}

/** An operation that died the way delivery leaves one: state dead, DLQ record, a finished deliver job. */
async function dead(data: DeliverJobData, reason = 'permanent'): Promise<void> {
  const claim = await ops.claim({ ...data, owner: 'w', leaseMs: 5000, job: data });
  if (claim.kind !== 'go') throw new Error('expected a claim');
  await ops.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: 'dead', messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, reason, error: { code: 'HTTP_422', message: 'bad' } });
  await addDead(queues.dead, { operationKey: data.operationKey, job: data, reason, error: { code: 'HTTP_422', message: 'bad' }, attempts: await ops.history(data.operationKey), diedAt: Date.now() });
}

/** Moves the operation's deliver job to completed, as a worker would after it finished. */
async function completeDeliverJob(data: DeliverJobData): Promise<void> {
  await enqueueDeliveries(queues, [data]);
  const conn = createRedis({ url: server.url, role: 'worker' });
  const { Worker } = await import('bullmq');
  const w = new Worker(queues.deliver.name, async () => 'done', { connection: conn, prefix: keys.queuePrefix, autorun: false });
  const token = 'test-token';
  const next = await w.getNextJob(token);
  if (!next || next.id !== data.operationKey) throw new Error(`expected the deliver job of ${data.operationKey}, got ${next?.id}`);
  await next.moveToCompleted('done', token, false);
  await w.close();
  conn.disconnect();
}

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, keys);
  ops = new OperationStore(redis, keys, { retentionMs });
  deps = { redis, keys, queues, retentionMs, metrics };
});

afterAll(async () => {
  await queues.close();
  redis.disconnect();
  await server.destroy();
});

describe('replay', () => {
  it('puts a dead operation back to pending, re-adds its deliver job under the same id, removes the DLQ record', async () => {
    const data = job('dead-1');
    await dead(data);
    await completeDeliverJob(data);
    expect(await (await queues.deliver.getJob(data.operationKey))?.getState()).toBe('completed');

    const result = await replay(data.operationKey, who, deps);
    expect(result).toMatchObject({ operationKey: data.operationKey, result: 'replayed', from: 'dead', job: 'added' });
    const again = await queues.deliver.getJob(data.operationKey);
    expect(await again?.getState()).toBe('waiting');
    expect(again?.data).toEqual(data);
    expect(await queues.dead.getJob(data.operationKey)).toBeUndefined();
    const record = await ops.get(data.operationKey);
    expect(record).toMatchObject({ status: 'pending', replays: 1, replayedBy: 'alice' });
    const entries = await new JournalReader(redis, keys).forOperation(data.operationKey, record?.journalIds ?? []);
    expect(entries.map((e) => [e.type, e.fields.by ?? ''])).toEqual([['dead', ''], ['replayed', 'alice']]);
    expect((await metrics.replays.get()).values).toEqual(expect.arrayContaining([expect.objectContaining({ labels: { via: 'cli', result: 'replayed' }, value: 1 })]));
  });

  it('reports "already sent" for an operation that meanwhile got sent, and drops its stale DLQ record', async () => {
    const data = job('sent-1');
    await dead(data);
    await replay(data.operationKey, who, deps);
    // Delivered after the replay; then someone replays the same id again (a second operator, an old list).
    const claim = await ops.claim({ ...data, owner: 'w', leaseMs: 5000 });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    await ops.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: 'sent', messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, provider: 'p', externalId: 'ext-1' });
    await addDead(queues.dead, { operationKey: data.operationKey, job: data, reason: 'permanent', error: { code: 'X', message: '' }, attempts: [], diedAt: 1 });
    const jobsBefore = await queues.deliver.getJobCounts();

    expect(await replay(data.operationKey, { by: 'bob', via: 'api' }, deps)).toEqual({ operationKey: data.operationKey, result: 'already_sent', provider: 'p', externalId: 'ext-1' });
    expect(await queues.deliver.getJobCounts()).toEqual(jobsBefore);
    expect(await queues.dead.getJob(data.operationKey)).toBeUndefined();
    const record = await ops.get(data.operationKey);
    expect(record).toMatchObject({ status: 'sent', replays: 1, replayedBy: 'alice' });
  });

  it('leaves an operation in progress alone and reports an unknown one', async () => {
    const data = job('busy-1');
    await ops.claim({ ...data, owner: 'w', leaseMs: 5000, job: data });
    expect(await replay(data.operationKey, who, deps)).toEqual({ operationKey: data.operationKey, result: 'not_replayable', status: 'sending' });
    expect(await replay(hexKey('nothing'), who, deps)).toEqual({ operationKey: hexKey('nothing'), result: 'not_found' });
  });

  it('replays many; two concurrent replays of one operation replay it once', async () => {
    const a = job('many-a');
    const b = job('many-b', 'email');
    await dead(a, 'attempts_exhausted');
    await dead(b);
    expect((await listDead(queues, { filter: 'email' })).map((r) => r.operationKey)).toEqual([b.operationKey]);
    expect((await listDead(queues, { filter: 'attempts_exhausted' })).map((r) => r.operationKey)).toEqual([a.operationKey]);
    const [first, second] = await Promise.all([replay(a.operationKey, who, deps), replay(a.operationKey, who, deps)]);
    expect([first.result, second.result].sort()).toEqual(['not_replayable', 'replayed']);
    const seen: string[] = [];
    const results = await replayMany([b.operationKey], who, deps, (r) => seen.push(r.result));
    expect(seen).toEqual(['replayed']);
    expect(results).toHaveLength(1);
    expect(await listDead(queues, { filter: 'email' })).toEqual([]);
  });

  it('lists suppressed operations until they are replayed', async () => {
    const data = job('suppressed-1');
    const claim = await ops.claim({ ...data, owner: 'w', leaseMs: 5000, job: data });
    if (claim.kind !== 'go') throw new Error('expected a claim');
    await ops.commit({ operationKey: data.operationKey, fence: claim.fence, outcome: 'suppressed', messageKey: data.messageKey, recipient: data.recipient, channel: data.channel, reason: 'rate_limit', error: { code: 'RATE_LIMIT', message: 'global: 2 of 2' } });
    expect(await listSuppressedOperations(deps, { filter: 'rate_limit' })).toEqual([
      expect.objectContaining({ operationKey: data.operationKey, recipient: data.recipient, channel: 'webhook', reason: 'rate_limit', error: 'global: 2 of 2' }),
    ]);
    // No DLQ record: the job comes from the state the claim kept.
    expect(await replay(data.operationKey, who, deps)).toMatchObject({ result: 'replayed', from: 'suppressed', job: 'added' });
    expect((await queues.deliver.getJob(data.operationKey))?.data).toEqual(data);
    expect(await listSuppressedOperations(deps)).toEqual([]);
  });
});

describe('requeueDelivery', () => {
  it('adds a missing job, leaves a waiting one, promotes a delayed one when asked', async () => {
    const data = job('requeue-1');
    expect(await requeueDelivery(queues, data)).toBe('added');
    expect(await requeueDelivery(queues, data)).toBe('present');
    const delayed = job('requeue-2');
    await queues.deliver.add('deliver', delayed, { jobId: delayed.operationKey, delay: 60_000 });
    expect(await requeueDelivery(queues, delayed)).toBe('present');
    expect(await requeueDelivery(queues, delayed, { promote: true })).toBe('promoted');
    expect(await (await queues.deliver.getJob(delayed.operationKey))?.getState()).toBe('waiting');
  });
});
