import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, type IngestInput } from '@singleshot/core';
import { parseConfig } from '@singleshot/config';
import { BATCH_JOB_NAME, type DecideBatchJobData, type Queues } from '@singleshot/queues';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { MessageStore } from '@singleshot/store';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { Acceptor, type AcceptResult } from './accept';
import { StoreUnavailableError } from './errors';

// The real decide queues and Redis; the wrapper only counts (and, when asked,
// refuses) the adds ingest makes, to see which arrivals enqueued.
let redis: TestRedis;
let rt: Runtime;

beforeAll(async () => {
  redis = await startTestRedis();
  rt = await createRuntime(parseConfig({ redis: { url: redis.url }, log: { level: 'silent' } }), { app: 'test' });
  // The producer connection fails fast: nothing is sent before it is up.
  await waitUntil(() => rt.producer.status === 'ready' || undefined, 'the producer connection');
});

afterAll(async () => {
  await rt?.close();
  await redis?.destroy();
});

function acceptor(refuseAdds = 0, opts: { hangAdds?: number; enqueueTimeoutMs?: number; slowArrives?: { count: number; ms: number } } = {}): { acceptor: Acceptor; adds: () => number } {
  let adds = 0;
  let refuse = refuseAdds;
  let hang = opts.hangAdds ?? 0;
  // One wrapper per real queue, so that adds grouped by queue stay grouped.
  const wrappers = new Map<unknown, unknown>();
  const decideQueues = {
    decideOf: (key: string) => {
      const queue = rt.producerQueues.decideOf(key);
      const known = wrappers.get(queue);
      if (known) return known;
      const wrapper = {
        add: (...args: Parameters<typeof queue.add>) => {
          adds++;
          if (refuse-- > 0) return Promise.reject(new Error('refused by the test'));
          // A command that never comes back (sent to a master that died).
          if (hang-- > 0) return new Promise(() => undefined);
          return queue.add(...args);
        },
      };
      wrappers.set(queue, wrapper);
      return wrapper;
    },
  } as unknown as Pick<Queues, 'decideOf'>;
  const store = new MessageStore(rt.producer, rt.keys, { retentionMs: rt.retentionMs });
  let slow = opts.slowArrives?.count ?? 0;
  const acceptor = new Acceptor({
    messages: {
      // The first arrivals' record round trips are slow, when asked: their
      // enqueue starts well after their deadlines did.
      arrive: async (key, via) => {
        const recorded = await store.arrive(key, via);
        if (slow-- > 0) await new Promise((resolve) => setTimeout(resolve, opts.slowArrives?.ms));
        return recorded;
      },
      markQueued: (key) => store.markQueued(key),
    },
    decideQueues,
    keys: rt.keys,
    enqueueTimeoutMs: opts.enqueueTimeoutMs ?? 10_000,
  });
  return { acceptor, adds: () => adds };
}

const message = (id: string) => {
  const input: IngestInput = { kind: 'event', source: 'shop', eventId: id, type: 't', data: {} };
  return { messageKey: eventMessageKey('shop', id), via: 'api', input };
};

describe('Acceptor', () => {
  it('parallel arrivals of one message: one BullMQ add, one accepted, every arrival recorded', async () => {
    const { acceptor: a, adds } = acceptor();
    const m = message('parallel-1');
    const results = await Promise.all([a.accept(m), a.accept(m), a.accept(m)]);
    expect(results.map((r) => r.status).sort()).toEqual(['accepted', 'duplicate', 'duplicate']);
    expect(adds()).toBe(1);
    expect(await rt.queues.decide.getJob(m.messageKey)).toBeDefined();
    const record = await rt.messages.get(m.messageKey);
    expect(record?.arrivals).toBe(3);
    expect(record?.queuedAt).toBeGreaterThan(0);
    // Later arrivals find it queued: no add at all.
    expect((await a.accept(m)).status).toBe('duplicate');
    expect(adds()).toBe(1);
  });

  it('when the enqueue they waited for fails, the waiting arrivals enqueue themselves; still exactly one accepted', async () => {
    const { acceptor: a, adds } = acceptor(1);
    const m = message('parallel-2');
    const settled = await Promise.allSettled([a.accept(m), a.accept(m), a.accept(m)]);
    const refused = settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason as unknown);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(StoreUnavailableError);
    expect((refused[0] as StoreUnavailableError).code).toBe('STORE_UNAVAILABLE');
    const answered = settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<AcceptResult>).value.status);
    expect(answered.sort()).toEqual(['accepted', 'duplicate']);
    // The refused add, then one add for both waiters (they enqueue in one turn, the message once).
    expect(adds()).toBe(2);
    expect(await rt.queues.decide.getJob(m.messageKey)).toBeDefined();
  });

  it('an enqueue that never settles does not hold later arrivals: after its deadline the next arrival enqueues itself', async () => {
    // The two arrivals' record round trips take half the deadline, so the hung
    // add starts 150 ms after their deadlines did. The retry comes right after
    // they expire and must not find the hung add still standing (it did when
    // the add was forgotten on a deadline of its own, counted from its start).
    const { acceptor: a, adds } = acceptor(0, { hangAdds: 1, enqueueTimeoutMs: 300, slowArrives: { count: 2, ms: 150 } });
    const m = message('hung-1');
    // The first arrival's add hangs: it times out (503), and so does a parallel one waiting for it.
    const first = await Promise.allSettled([a.accept(m), a.accept(m)]);
    expect(first.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(adds()).toBe(1);
    // The producer retries: this arrival must not wait for the hung add again.
    const retry = await a.accept(m);
    expect(retry.status).toBe('accepted');
    expect(adds()).toBe(2);
    expect(await rt.queues.decide.getJob(m.messageKey)).toBeDefined();
  });

  it('first arrivals of several messages in one turn share one add, a batch decide job holding each once', async () => {
    const { acceptor: a, adds } = acceptor();
    const [m1, m2, m3] = [message('together-1'), message('together-2'), message('together-3')];
    const results = await Promise.all([a.accept(m1), a.accept(m2), a.accept(m2), a.accept(m3)]);
    expect(results.map((r) => r.status).sort()).toEqual(['accepted', 'accepted', 'accepted', 'duplicate']);
    expect(adds()).toBe(1);
    const jobs = await rt.queues.decide.getJobs(['waiting']);
    const batch = jobs.find((j) => j.name === BATCH_JOB_NAME && (j.data as unknown as DecideBatchJobData).messages.some((m) => m.messageKey === m1.messageKey));
    expect((batch?.data as unknown as DecideBatchJobData).messages.map((m) => m.messageKey).sort()).toEqual([m1, m2, m3].map((m) => m.messageKey).sort());
    for (const m of [m1, m2, m3]) expect((await rt.messages.get(m.messageKey))?.queuedAt).toBeGreaterThan(0);
  });

  it('does not wait for the enqueue of another message taken in an earlier turn', async () => {
    const { acceptor: a, adds } = acceptor(0, { hangAdds: 1, enqueueTimeoutMs: 10_000 });
    const hung = a.accept(message('other-1'));
    hung.catch(() => undefined);
    await waitUntil(() => adds() === 1 || undefined, 'the first add to be sent');
    expect((await a.accept(message('other-2'))).status).toBe('accepted');
    expect(adds()).toBe(2);
  });
});
