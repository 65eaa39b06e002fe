import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import type { DeliverJobData } from '@singleshot/core';
import { createLogger } from '@singleshot/observability';
import { createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { deliverJob } from '@singleshot/test-jobs';
import { BatchRunner, type InvalidMember, type MemberHandler } from './batch-runner';

// The one runner of decide and deliver jobs, with the per-member work stubbed
// out (the real attempts run in test/e2e/delivery-batch.test.ts and
// event-dedup.test.ts). A batch's bookkeeping runs on a job literal; a job of
// its own runs under a real BullMQ worker on a real Redis, since what becomes
// of it (moved to delayed, retried by BullMQ) is BullMQ's doing.
const logger = createLogger({ app: 'test', level: 'silent' });

interface Ended {
  kind: string;
  delayMs?: number;
}

/**
 * A deliver-queue handler whose members end as `outcomes` says (by operation
 * key; with `once`, on their first run only), `sent` otherwise.
 */
function harness(outcomes: Map<string, Ended | Error>, options: { handOffFails?: Error; invalidFails?: Error; invalidHandsOff?: boolean; once?: boolean } = {}) {
  const events: string[] = [];
  const invalid: InvalidMember[] = [];
  const runs = new Map<string, number>();
  const handler: MemberHandler<DeliverJobData, Ended> = {
    queue: 'deliver',
    run: async (op) => {
      runs.set(op.operationKey, (runs.get(op.operationKey) ?? 0) + 1);
      events.push(`run ${op.recipient}`);
      const o = outcomes.get(op.operationKey) ?? { kind: 'sent' };
      if (options.once) outcomes.delete(op.operationKey);
      if (o instanceof Error) throw o;
      return o;
    },
    kindOf: (o) => o.kind,
    againAfterMs: (o) => o.delayMs,
    logFields: (op, o) => ({ operationKey: op.operationKey, outcome: o }),
    invalid: async (_entry, where) => {
      invalid.push(where);
      events.push(`invalid ${where.key}`);
      if (options.invalidFails) throw options.invalidFails;
      return options.invalidHandsOff ? undefined : { kind: 'dead' };
    },
    handOff: async (op, delayMs) => {
      if (options.handOffFails) throw options.handOffFails;
      events.push(`handOff ${op.recipient} ${delayMs}`);
    },
    // One key per member, and the job's queue.
    written: (op) => [op.operationKey],
    replicas: { owners: () => '', after: async (keys) => void events.push(`replicate ${keys.length - 1}`) },
  };
  return { runner: new BatchRunner(handler, logger), events, invalid, runs };
}

const batchJob = (data: unknown) => ({
  id: 'b1',
  name: 'batch',
  data,
  attemptsMade: 0,
  queueQualifiedName: '{ssq}:deliver',
  moveToDelayed: () => Promise.reject(new Error('a batch job never moves itself')),
});
const ops = (n: number, tag: string): DeliverJobData[] => Array.from({ length: n }, (_, i) => deliverJob(`${tag}-${i}`));
const down = () => Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });

describe('BatchRunner: a batch job', () => {
  it('counts every ending and hands members that must run again to their own job, before the replica wait', async () => {
    const list = ops(4, 'mix');
    const { runner, events } = harness(
      new Map([
        [list[1]!.operationKey, { kind: 'retry', delayMs: 1000 }],
        [list[2]!.operationKey, { kind: 'conflict', delayMs: 700 }],
        [list[3]!.operationKey, { kind: 'duplicate' }],
      ]),
    );
    const outcome = await runner.run(batchJob({ operations: list }));
    expect(outcome).toEqual({ kind: 'batch', members: 4, outcomes: { sent: 1, retry: 1, conflict: 1, duplicate: 1 }, followUps: 2 });
    expect(events.filter((e) => e.startsWith('handOff')).sort()).toEqual([`handOff ${list[1]!.recipient} 1000`, `handOff ${list[2]!.recipient} 700`]);
    expect(events.at(-1)).toBe('replicate 4');
  });

  it("gives a member whose run threw its own job after the queue's first backoff step; the others stay done", async () => {
    const list = ops(3, 'threw');
    const { runner, events } = harness(new Map([[list[0]!.operationKey, down()]]));
    const outcome = await runner.run(batchJob({ operations: list }));
    expect(outcome).toEqual({ kind: 'batch', members: 3, outcomes: { failed: 1, sent: 2 }, followUps: 1 });
    expect(events).toContain(`handOff ${list[0]!.recipient} 500`);
    expect(events.at(-1)).toBe('replicate 3');
  });

  it('throws after every member settled when a hand-off cannot be added (BullMQ retries the batch whole)', async () => {
    const list = ops(3, 'lost');
    const failure = down();
    const { runner, events } = harness(new Map([[list[1]!.operationKey, { kind: 'retry', delayMs: 100 }]]), { handOffFails: failure });
    await expect(runner.run(batchJob({ operations: list }))).rejects.toBe(failure);
    expect(events.filter((e) => e.startsWith('run'))).toHaveLength(3);
    expect(events.some((e) => e.startsWith('replicate'))).toBe(false);
  });

  it('hands each entry that is no member to the handler with its key and issues; the others run', async () => {
    const [good] = ops(1, 'inv');
    const bad = { ...good!, operationKey: 'f'.repeat(64), recipient: '' };
    const { runner, events, invalid } = harness(new Map());
    const outcome = await runner.run(batchJob({ operations: [good, bad, 42] }));
    expect(outcome).toMatchObject({ members: 3, outcomes: { sent: 1, dead: 2 }, followUps: 0 });
    expect(events).toContain(`run ${good!.recipient}`);
    expect(invalid.map((w) => [w.key, w.index, w.alone])).toEqual([
      ['f'.repeat(64), 1, false],
      ['b1-2', 2, false],
    ]);
    expect(invalid[0]!.issues).toEqual([expect.stringMatching(/^operations\.1\.recipient: /)]);
  });

  it('throws once the others ran when an invalid entry cannot be recorded', async () => {
    const list = ops(2, 'unrecorded');
    const failure = down();
    const { runner, events } = harness(new Map(), { invalidFails: failure });
    await expect(runner.run(batchJob({ operations: [...list, 42] }))).rejects.toBe(failure);
    expect(events.filter((e) => e.startsWith('run'))).toHaveLength(2);
    expect(events.some((e) => e.startsWith('replicate'))).toBe(false);
  });

  it('counts an entry the handler hands to a job of its own as invalid and followed up; no list is one such entry', async () => {
    const { runner, invalid } = harness(new Map(), { invalidHandsOff: true });
    expect(await runner.run(batchJob({ nope: true }))).toEqual({ kind: 'batch', members: 1, outcomes: { invalid: 1 }, followUps: 1 });
    expect(invalid[0]).toMatchObject({ key: 'b1-0', issues: ['operations: expected an array of deliver jobs'] });
  });
});

describe('BatchRunner: a job of its own is a batch of one (real BullMQ worker)', () => {
  let server: TestRedis;
  let redis: RedisClient;
  let queue: Queue;
  let round = 0;

  beforeAll(async () => {
    server = await startTestRedis();
    redis = createRedis({ url: server.url, role: 'client' });
    queue = new Queue('deliver', { connection: redis, prefix: '{rt}' });
  });

  afterAll(async () => {
    await queue.close();
    redis.disconnect();
    await server.destroy();
  });

  /**
   * Runs a worker whose processor is the runner until job `id` completed, and
   * returns the job read afterwards (a job object read before it completed
   * carries no return value).
   */
  async function work(runner: BatchRunner<DeliverJobData, Ended>, id: string) {
    const conn = createRedis({ url: server.url, role: 'worker' });
    const worker = new Worker('deliver', (job, token) => runner.run(job, token), { connection: conn, prefix: '{rt}' });
    try {
      await waitUntil(async () => (await queue.getJob(id))?.isCompleted(), 'the job to complete', { timeoutMs: 30_000 });
    } finally {
      await worker.close();
      conn.disconnect();
    }
    const job = await queue.getJob(id);
    if (!job) throw new Error(`job ${id} is gone`);
    return job;
  }

  const fresh = () => deliverJob(`alone-${++round}`);

  it('a member that must run again moves its own job to delayed: same id, nothing added, then its result', async () => {
    const op = fresh();
    const { runner, runs, events } = harness(new Map([[op.operationKey, { kind: 'retry', delayMs: 50 }]]), { once: true });
    await queue.add('deliver', op, { jobId: op.operationKey, attempts: 3 });
    const seen = await work(runner, op.operationKey);
    expect(runs.get(op.operationKey)).toBe(2);
    expect(seen.returnvalue).toEqual({ kind: 'sent' });
    // The wait used up no BullMQ attempt (those are for infrastructure failures): only the completion counts.
    expect(seen.attemptsMade).toBe(1);
    expect(events.filter((e) => e.startsWith('handOff'))).toEqual([]);
    expect(await queue.getJobCountByTypes('completed', 'delayed', 'waiting', 'failed')).toBe(1);
  });

  it('a member whose run threw fails its own job, which BullMQ retries with its attempts', async () => {
    const op = fresh();
    const { runner, runs } = harness(new Map([[op.operationKey, down()]]), { once: true });
    await queue.add('deliver', op, { jobId: op.operationKey, attempts: 2 });
    const seen = await work(runner, op.operationKey);
    expect(runs.get(op.operationKey)).toBe(2);
    // The failed attempt and the completed one.
    expect(seen.attemptsMade).toBe(2);
    expect(seen.returnvalue).toEqual({ kind: 'sent' });
  });

  it('an invalid job of its own goes to the handler keyed by its job id, and ends with what it returned', async () => {
    const { runner, invalid } = harness(new Map());
    const id = `junk-${++round}`;
    await queue.add('deliver', { operationKey: 'not-hex' }, { jobId: id });
    const seen = await work(runner, id);
    expect(seen.returnvalue).toEqual({ kind: 'dead' });
    expect(invalid).toMatchObject([{ alone: true, index: 0, key: id, jobId: id }]);
  });
});
