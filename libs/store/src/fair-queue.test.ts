import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '@singleshot/test-harness';
import type { RedisClient } from './connection';
import { createRedis } from './connection';
import { FairQueue } from './fair-queue';
import { KeyBuilder } from './keys';

let server: TestRedis;
let redis: RedisClient;
let clock = 1_700_000_000_000;
const keys = new KeyBuilder('fq', 16, 4);
const P = 2;
// Stand in for the deliver queue's wait and active lists: in the partition's slot, as BullMQ's are.
const waitList = `${keys.queuePrefixOf(P)}:deliver-02:wait`;
const wait = { wait: waitList, active: `${keys.queuePrefixOf(P)}:deliver-02:active` };
let fair: FairQueue;

beforeAll(async () => {
  server = await startTestRedis();
  redis = createRedis({ url: server.url, role: 'client' });
  fair = new FairQueue(redis, keys, () => clock);
});

afterAll(async () => {
  redis.disconnect();
  await server.destroy();
});

beforeEach(async () => {
  await redis.flushall();
});

const docs = (tenant: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${tenant}${from + i}`);

/** Adds without moving anything (a full window), so the whole backlog waits before the first choice. */
async function backlog(tenant: string, n: number, weight = 1, from = 0): Promise<void> {
  expect(await fair.move(P, wait, [{ tenant, weight, documents: docs(tenant, n, from) }], 0)).toEqual([]);
}

/**
 * A worker of capacity `window` that takes one job at a time from the wait
 * list, each time asking the fair queue to fill it up again: returns the
 * tenants in the order the worker took them.
 */
async function dispatch(count: number, window: number): Promise<string> {
  let order = '';
  const fill = async (taken: number) => {
    const moved = await fair.move(P, wait, [], window, taken);
    if (moved.length > 0) await redis.rpush(waitList, ...moved);
    await fair.done(P, moved);
  };
  await fill(0);
  for (let i = 0; i < count; i++) {
    const doc = await redis.lpop(waitList);
    if (doc === null) break;
    order += doc.replace(/\d+$/, '');
    await fill(1);
  }
  return order;
}

describe('FairQueue (start-time fair queueing between tenants, fair-move.lua)', () => {
  it('takes three backlogged tenants of equal weight in turn, with a capacity of 2', async () => {
    await backlog('a', 5);
    await backlog('b', 5);
    await backlog('c', 5);
    expect(await dispatch(15, 2)).toBe('abcabcabcabcabc');
  });

  it('gives weights 3 and 1 three jobs to one', async () => {
    await backlog('a', 12, 3);
    await backlog('b', 4, 1);
    expect(await dispatch(16, 2)).toBe('abaaabaaabaaabaa');
  });

  it('keeps a tenant first in, first out', async () => {
    await backlog('a', 3);
    await backlog('a', 2, 1, 3);
    const moved = await fair.move(P, wait, [], 5);
    expect(moved).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('gives a tenant alone every free place (work-conserving), and no more than the window holds', async () => {
    await backlog('a', 10);
    const moved = await fair.move(P, wait, [], 4);
    expect(moved).toEqual(['a0', 'a1', 'a2', 'a3']);
    await redis.rpush(waitList, ...moved);
    await fair.done(P, moved);
    // Four moved and none started: no room.
    expect(await fair.move(P, wait, [], 4)).toEqual([]);
    // Workers started three (a batch job carries several): three places.
    expect(await fair.move(P, wait, [], 4, 3)).toEqual(['a4', 'a5', 'a6']);
    expect(await fair.waiting(P)).toEqual(new Map([['a', 3]]));
  });

  it('forgets an unreported start once nothing waits, runs or is in transit', async () => {
    await backlog('a', 6);
    const moved = await fair.move(P, wait, [], 2);
    await redis.rpush(waitList, ...moved);
    await fair.done(P, moved);
    // Still waiting in the queue: no room.
    expect(await fair.move(P, wait, [], 2)).toEqual([]);
    // Started, and the start never reported (its process died after the job ended).
    await redis.del(waitList);
    expect(await fair.move(P, wait, [], 2)).toEqual(['a2', 'a3']);
  });

  it('gives no credit for a past share: a tenant that joins a backlog starts at the virtual time', async () => {
    await backlog('a', 20);
    expect(await dispatch(8, 1)).toBe('aaaaaaaa');
    await backlog('b', 4);
    // b is not owed the eight jobs a had alone, and a is not pushed back for
    // them: after a's job already in the queue, they alternate.
    expect(await dispatch(8, 1)).toBe('abababab');
  });

  it('forgets the shares once nothing waits: after a drain, two tenants start level', async () => {
    await backlog('a', 6);
    expect(await dispatch(6, 1)).toBe('aaaaaa');
    await backlog('b', 3);
    await backlog('a', 3, 1, 6);
    expect(await dispatch(6, 1)).toBe('ababab');
  });

  it('applies a weight change to the backlog that is already waiting', async () => {
    await backlog('a', 12);
    await backlog('b', 12);
    expect(await dispatch(4, 1)).toBe('abab');
    // A new weight with nothing added: the jobs already waiting are chosen by it.
    await fair.move(P, wait, [{ tenant: 'a', weight: 3, documents: [] }], 0);
    // a's job already in the queue and the tags handed out before the change
    // come first (abab); from then on the new weight holds (aaab).
    expect(await dispatch(12, 1)).toBe('ababaaabaaab');
  });

  it("sends a tenant's transactional job before its bulk backlog, inside the same share", async () => {
    await fair.move(P, wait, [{ tenant: 'a', weight: 1, documents: docs('bulk', 6), bulk: true }], 0);
    await backlog('b', 4);
    await fair.move(P, wait, [{ tenant: 'a', weight: 1, documents: ['reset0'] }], 0);
    expect(await fair.waiting(P)).toEqual(new Map([['a', 7], ['b', 4]]));
    // a's reset goes first of a's, and a's bulk takes a's turns only: b is not slowed by it.
    expect(await dispatch(8, 1)).toBe('resetbbulkbbulkbbulkb');
  });

  it('passes over a tenant at its in-flight cap, keeping its turn, until a worker says one ended', async () => {
    await fair.move(P, wait, [{ tenant: 'a', weight: 1, documents: docs('a', 4), cap: 2 }], 0);
    await backlog('b', 4);
    // a takes its two places, then b has every free one.
    expect(await fair.move(P, wait, [], 6)).toEqual(['a0', 'b0', 'a1', 'b1', 'b2', 'b3']);
    expect(await fair.inFlight(P, 'a')).toBe(2);
    // Started: still in flight. Ended: its place is free, and a is first again.
    expect(await fair.move(P, wait, [], 10, 6, { started: [{ tenant: 'a', keys: ['a0', 'a1'] }], ended: [] })).toEqual([]);
    expect(await fair.move(P, wait, [], 10, 0, { started: [], ended: [{ tenant: 'a', keys: ['a0'] }] })).toEqual(['a2']);
    expect(await fair.inFlight(P, 'a')).toBe(2);
  });

  it("frees a capped operation's place at its deadline when no worker ever says it ended", async () => {
    const short = new FairQueue(redis, keys, () => clock, { startedMs: 1_000, movedMs: 5_000 });
    await short.move(P, wait, [{ tenant: 'a', weight: 1, documents: docs('a', 3), cap: 1 }], 0);
    expect(await short.move(P, wait, [], 5)).toEqual(['a0']);
    expect(await short.move(P, wait, [], 5)).toEqual([]);
    // Started: its deadline is renewed from the start, shorter than a moved one's.
    clock += 4_000;
    expect(await short.move(P, wait, [], 5, 0, { started: [{ tenant: 'a', keys: ['a0'] }], ended: [] })).toEqual([]);
    clock += 999;
    expect(await short.move(P, wait, [], 5)).toEqual([]);
    expect(await short.inFlight(P, 'a')).toBe(1);
    clock += 2;
    expect(await short.inFlight(P, 'a')).toBe(0);
    expect(await short.move(P, wait, [], 5)).toEqual(['a1']);
  });

  it('keeps moved jobs in transit until done, where a mover that died leaves them for stale', async () => {
    await backlog('a', 3);
    const moved = await fair.move(P, wait, [], 2);
    expect(moved).toEqual(['a0', 'a1']);
    expect(await fair.stale(P, 30_000)).toEqual([]);
    clock += 30_000;
    expect((await fair.stale(P, 30_000)).sort()).toEqual(['a0', 'a1']);
    await fair.done(P, ['a0']);
    expect(await fair.stale(P, 30_000)).toEqual(['a1']);
    expect(await fair.waiting(P)).toEqual(new Map([['a', 1]]));
  });

  it('keeps each partition its own: another partition\'s backlog neither moves nor counts', async () => {
    await backlog('a', 2);
    const other = { wait: `${keys.queuePrefixOf(3)}:deliver-03:wait`, active: `${keys.queuePrefixOf(3)}:deliver-03:active` };
    expect(await fair.move(3, other, [{ tenant: 'b', weight: 1, documents: ['b0'] }], 5)).toEqual(['b0']);
    expect(await fair.waiting(P)).toEqual(new Map([['a', 2]]));
    expect(await fair.waiting(3)).toEqual(new Map());
  });
});
