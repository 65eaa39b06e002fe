import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf, type DeliverJobData } from '@singleshot/core';
import { BATCH_JOB_NAME, enqueueDeliveryJobs, planDeliverJobs } from '@singleshot/queues';
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
import { deliverJob, hexKey } from '@singleshot/test-jobs';

// Batch deliver jobs (one job carrying a message's operations) under real
// worker processes: every operation is still claimed, sent and committed on
// its own; one that must be tried again gets its own deliver job; a worker
// killed mid-batch leaves nothing sent twice and nothing behind.
// Long enough that the hung first sends are still `sending` when the test
// looks on a loaded machine (their deadline comes from the lease).
const LEASE_MS = 8000;

let redis: TestBackend;
let sink: HttpSink;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];
let round = 0;

const worker = () => {
  const p = spawnApps('delivery', configFile);
  procs.push(p);
  return p;
};
const statusOf = async (key: string) => (await rt.operations.get(key))?.status;
const sentJournal = async (key: string) => {
  const record = await rt.operations.get(key);
  return (await rt.journal.forOperation(key, record?.journalIds ?? [])).filter((e) => e.type === 'sent');
};

/**
 * `n` operations of one fresh message, to distinct recipients, all in one
 * deliver partition (on a cluster there are several; a batch never spans two).
 */
function fanOut(n: number): DeliverJobData[] {
  round++;
  const messageKey = hexKey(`msg:e2e-batch:${round}`);
  const P = rt.keys.partitions;
  const ops: DeliverJobData[] = [];
  for (let i = 0; ops.length < n; i++) {
    const op = deliverJob(`e2e-batch-${round}-${i}`, { messageKey });
    if (ops.length === 0 || partitionOf(op.operationKey, P) === partitionOf(ops[0]!.operationKey, P)) ops.push(op);
  }
  return ops;
}

/** Enqueues the operations as the decision does, and checks they went out as one batch job. */
async function enqueueBatch(ops: DeliverJobData[]): Promise<string> {
  const { batches, singles } = planDeliverJobs(rt.queues, ops, 16);
  expect(singles).toEqual([]);
  expect(batches).toHaveLength(1);
  await enqueueDeliveryJobs(rt.queues, ops, 16);
  const id = batches[0]!.jobId;
  const job = await rt.queues.deliverOf(ops[0]!.operationKey).getJob(id);
  expect(job?.name).toBe(BATCH_JOB_NAME);
  return id;
}

const allSent = async (ops: DeliverJobData[]) => (await Promise.all(ops.map((o) => statusOf(o.operationKey)))).every((s) => s === 'sent');

beforeAll(async () => {
  redis = await startTestBackend();
  sink = await startHttpSink();
  const config = testConfig({
    ...redis.config,
    delivery: { leaseMs: LEASE_MS, attempts: 5, backoffMs: [100, 200, 400], concurrency: 4, metricsPort: 0 },
    routes: [{ name: 'test', match: {}, action: 'notify', channel: 'webhook' }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] },
  });
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

describe(`batch deliver jobs (${testBackendKind()} Redis)`, () => {
  it('sends every operation of a batch once, each with its own claim and commit', async () => {
    const w = worker();
    const ops = fanOut(3);
    const id = await enqueueBatch(ops);
    await waitUntil(() => allSent(ops), 'the batch to be sent', { timeoutMs: 60_000 });
    for (const op of ops) {
      expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
      expect(await rt.operations.get(op.operationKey)).toMatchObject({ status: 'sent', attempts: 1, fence: '1' });
      expect(await sentJournal(op.operationKey)).toHaveLength(1);
    }
    const queue = rt.queues.deliverOf(ops[0]!.operationKey);
    await waitUntil(async () => (await queue.getJob(id))?.isCompleted(), 'the batch job to complete');
    expect((await queue.getJob(id))?.returnvalue).toMatchObject({ kind: 'batch', members: 3, outcomes: { sent: 3 }, followUps: 0 });
    // One sample per attempt, as with single jobs.
    expect(await w.metric('singleshot_deliveries_total', { result: 'sent' })).toBe(3);
  });

  it('hands a retried operation to its own deliver job while the others are sent', async () => {
    worker();
    const ops = fanOut(3);
    const retried = ops[1]!;
    sink.scriptFor(retried.recipient, { status: 503 });
    const id = await enqueueBatch(ops);
    await waitUntil(() => allSent(ops), 'every operation to be sent', { timeoutMs: 60_000 });
    expect(await rt.operations.get(retried.operationKey)).toMatchObject({ status: 'sent', attempts: 2 });
    for (const op of [ops[0]!, ops[2]!]) expect(await rt.operations.get(op.operationKey)).toMatchObject({ status: 'sent', attempts: 1 });
    for (const op of ops) expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
    // The second attempt ran as an ordinary deliver job under the operation key.
    const followUp = await waitUntil(async () => {
      const job = await rt.queues.deliverOf(retried.operationKey).getJob(retried.operationKey);
      return (await job?.isCompleted()) ? rt.queues.deliverOf(retried.operationKey).getJob(retried.operationKey) : undefined;
    }, 'the follow-up job to complete');
    expect(followUp.name).toBe('deliver');
    expect(followUp.returnvalue).toMatchObject({ kind: 'ended', status: 'sent' });
    const batch = await rt.queues.deliverOf(ops[0]!.operationKey).getJob(id);
    expect(batch?.returnvalue).toMatchObject({ outcomes: { sent: 2, retry: 1 }, followUps: 1 });
  });

  it('a lock held elsewhere: that operation conflicts, waits on its own deliver job, and is sent once when the lock is free', async () => {
    const w = worker();
    await w.metricsPort();
    const ops = fanOut(2);
    const [held, other] = ops as [DeliverJobData, DeliverJobData];
    // Another holder has it claimed, with a lease far longer than this test.
    const claim = await rt.operations.claim({ ...held, owner: 'elsewhere', leaseMs: 600_000, job: held });
    if (claim.kind !== 'go') throw new Error(`expected a claim, got ${claim.kind}`);
    await enqueueBatch(ops);
    await waitUntil(
      async () => (await statusOf(other.operationKey)) === 'sent' && (await w.metric('singleshot_lock_conflicts_total')) >= 1,
      'the other operation sent and the conflict counted',
      { timeoutMs: 60_000 },
    );
    const queue = rt.queues.deliverOf(held.operationKey);
    const followUp = await waitUntil(() => queue.getJob(held.operationKey), 'the follow-up job');
    expect(followUp.name).toBe('deliver');
    expect(await followUp.getState()).toBe('delayed');
    expect(sink.countFor(held.operationKey)).toBe(0);
    // The other holder hands it back unsent; the follow-up is brought forward.
    await rt.operations.commit({ operationKey: held.operationKey, fence: claim.fence, outcome: 'released', messageKey: held.messageKey, recipient: held.recipient, channel: held.channel, releaseTo: 'pending', refundAttempt: true });
    await followUp.promote();
    await waitUntil(() => allSent(ops), 'the held operation to be sent', { timeoutMs: 60_000 });
    expect(await rt.operations.get(held.operationKey)).toMatchObject({ status: 'sent', attempts: 1, fence: '2' });
    for (const op of ops) {
      expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
      expect(await sentJournal(op.operationKey)).toHaveLength(1);
    }
  });

  it('a worker SIGKILLed mid-batch, every send in flight: another worker finishes the batch, each operation sent once', async () => {
    const a = worker();
    await a.metricsPort();
    const ops = fanOut(3);
    // Every first request hangs, unaccepted: the worker dies with all three `sending`.
    for (const op of ops) sink.scriptFor(op.recipient, 'hang');
    await enqueueBatch(ops);
    await waitUntil(
      async () => (await Promise.all(ops.map((o) => statusOf(o.operationKey)))).every((s) => s === 'sending') && ops.every((o) => sink.countFor(o.operationKey) === 1),
      'three claims and their first requests',
    );
    a.signal('SIGKILL');
    await a.exited();
    const b = worker();
    await waitUntil(() => allSent(ops), 'another worker to send', { timeoutMs: 60_000 });
    for (const op of ops) {
      expect(sink.accepted.get(op.operationKey)?.count).toBe(1);
      expect(await sentJournal(op.operationKey)).toHaveLength(1);
      // Reconciled before the second request (docs/protocol.md, invariant 5).
      expect(sink.lookups.filter((l) => l.key === op.operationKey)).toContainEqual({ key: op.operationKey, found: false });
    }
    await b.stop();
  });
});
