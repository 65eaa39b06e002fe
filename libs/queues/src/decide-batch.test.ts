import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventMessageKey, partitionOf, type DecideJobData } from '@singleshot/core';
import { KeyBuilder, createRedis, type RedisClient } from '@singleshot/store';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import { DECIDE_BATCH_JOB_NAME, DECIDE_BATCH_MAX, DECIDE_JOB_NAME, enqueueDecideJobs, handOffInvalidDecide, requeueDecide } from './decide-batch';
import { openQueues, type Queues } from './queues';
import type { DecideBatchJobData } from './schemas';

// Batch decide jobs as ingest adds them, on a real Redis with real BullMQ queues (no worker).
let server: TestRedis;
let redis: RedisClient;
let queues: Queues;
let split: Queues;
let round = 0;

/** `n` messages with fresh keys (tests do not share job ids). */
function messages(n: number): DecideJobData[] {
  round++;
  return Array.from({ length: n }, (_, i) => {
    const eventId = `e-${round}-${i}`;
    return { messageKey: eventMessageKey('shop', eventId), firstArrivalAt: 1_700_000_000_000, via: 'api', input: { kind: 'event', source: 'shop', eventId, type: 't', data: {} } };
  });
}

const batchData = (data: unknown) => data as DecideBatchJobData;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  queues = openQueues(redis, new KeyBuilder('qb', 4));
  split = openQueues(redis, new KeyBuilder('qp', 4, 4));
});

afterAll(async () => {
  await queues.close();
  await split.close();
  redis.disconnect();
  await server.destroy();
});

beforeEach(async () => {
  await redis.flushall();
});

describe('enqueueDecideJobs', () => {
  it('a message alone gets its ordinary decide job under its message key', async () => {
    const [m] = messages(1) as [DecideJobData];
    await enqueueDecideJobs(queues, [m]);
    const job = await queues.decide.getJob(m.messageKey);
    expect(job?.name).toBe(DECIDE_JOB_NAME);
    expect(job?.data).toEqual(m);
  });

  it('several messages share one batch job holding each once; the same messages again add nothing', async () => {
    const list = messages(3);
    await enqueueDecideJobs(queues, [...list, list[1] as DecideJobData]);
    await enqueueDecideJobs(queues, list);
    const jobs = await queues.decide.getJobs(['waiting']);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.name).toBe(DECIDE_BATCH_JOB_NAME);
    expect(jobs[0]?.id).not.toContain(':');
    expect(batchData(jobs[0]?.data).messages).toEqual(list);
  });

  it(`splits more than ${DECIDE_BATCH_MAX} messages evenly`, async () => {
    const list = messages(DECIDE_BATCH_MAX + 8);
    await enqueueDecideJobs(queues, list);
    const jobs = await queues.decide.getJobs(['waiting']);
    expect(jobs.map((j) => batchData(j.data).messages.length).sort()).toEqual([20, 20]);
    expect(jobs.flatMap((j) => batchData(j.data).messages.map((m) => m.messageKey)).sort()).toEqual(list.map((m) => m.messageKey).sort());
  });

  it('batches per decide partition: every message of a batch belongs to its queue', async () => {
    const list = messages(24);
    await enqueueDecideJobs(split, list);
    let seen = 0;
    for (const [p, queue] of split.decideAll.entries()) {
      for (const job of await queue.getJobs(['waiting'])) {
        const held = job.name === DECIDE_BATCH_JOB_NAME ? batchData(job.data).messages : [job.data];
        for (const m of held) expect(partitionOf(m.messageKey, 4)).toBe(p);
        seen += held.length;
      }
    }
    expect(seen).toBe(24);
  });
});

describe('requeueDecide and handOffInvalidDecide: what a batch hands on', () => {
  it('requeueDecide adds one delayed decide job per batch, not swallowed by a finished job under the message key', async () => {
    const [m] = messages(1) as [DecideJobData];
    await queues.decide.add(DECIDE_JOB_NAME, m, { jobId: m.messageKey });
    await requeueDecide(queues, m, 'batch-1');
    await requeueDecide(queues, m, 'batch-1');
    const job = await queues.decide.getJob(`${m.messageKey}-from-batch-1`);
    expect(job?.name).toBe(DECIDE_JOB_NAME);
    expect(await job?.getState()).toBe('delayed');
    // The first step of the decide job's own backoff.
    expect(job?.opts.delay).toBe(500);
    expect(job?.data).toEqual(m);
    expect(await queues.decide.getJobs(['delayed'])).toHaveLength(1);
  });

  it("handOffInvalidDecide adds the entry as it is to the batch's own queue, with one attempt", async () => {
    const target = split.decideAll[2]!;
    await handOffInvalidDecide(split, target.qualifiedName, { messageKey: 'nope' }, 'b-invalid-0');
    const job = await target.getJob('b-invalid-0');
    expect(job?.data).toEqual({ messageKey: 'nope' });
    expect(job?.opts.attempts).toBe(1);
  });
});
