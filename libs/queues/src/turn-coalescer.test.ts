import { describe, expect, it } from 'vitest';
import type { DeliverJobData } from '@singleshot/core';
import { deliverJob } from '@singleshot/test-jobs';
import { TurnCoalescer } from './turn-coalescer';

// The coalescer alone, with a recording enqueue (deliver jobs as the items): which calls share an add,
// and that no caller's promise settles before the add carrying its operations.
const ops = (tag: string, n: number): DeliverJobData[] => Array.from({ length: n }, (_, i) => deliverJob(`${tag}-${i}`));

function recorder() {
  const adds: DeliverJobData[][] = [];
  const pending: Array<{ resolve(): void; reject(err: unknown): void }> = [];
  const enqueue = (jobs: DeliverJobData[]) =>
    new Promise<void>((resolve, reject) => {
      adds.push(jobs);
      pending.push({ resolve, reject });
    });
  return { adds, pending, enqueue };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('TurnCoalescer', () => {
  it('hands the fan-outs of one event-loop turn to one add, and settles each caller only after it', async () => {
    const r = recorder();
    const c = new TurnCoalescer<DeliverJobData>(r.enqueue, 16);
    const a = ops('a', 2);
    const b = ops('b', 3);
    const settled: string[] = [];
    const pa = c.add(a).then(() => settled.push('a'));
    const pb = c.add(b).then(() => settled.push('b'));
    await turn();
    expect(r.adds).toEqual([[...a, ...b]]);
    await turn();
    // The add has not answered: nobody may be told the deliveries are in Redis.
    expect(settled).toEqual([]);
    r.pending[0]?.resolve();
    await Promise.all([pa, pb]);
    expect(settled.sort()).toEqual(['a', 'b']);
  });

  it('adds at once when a full batch is waiting, without waiting for the turn to end', () => {
    const r = recorder();
    const c = new TurnCoalescer<DeliverJobData>(r.enqueue, 4);
    void c.add(ops('a', 2));
    expect(r.adds).toHaveLength(0);
    void c.add(ops('b', 2));
    expect(r.adds).toHaveLength(1);
    expect(r.adds[0]).toHaveLength(4);
  });

  it('fails every caller of a failed add (their decide jobs are retried), and the next add starts afresh', async () => {
    const r = recorder();
    const c = new TurnCoalescer<DeliverJobData>(r.enqueue, 16);
    const pa = c.add(ops('a', 1));
    const pb = c.add(ops('b', 1));
    await turn();
    const outage = new Error('Redis down');
    r.pending[0]?.reject(outage);
    await expect(pa).rejects.toBe(outage);
    await expect(pb).rejects.toBe(outage);
    const pc = c.add(ops('c', 1));
    await turn();
    expect(r.adds).toHaveLength(2);
    expect(r.adds[1]?.map((j) => j.operationKey)).toEqual(ops('c', 1).map((j) => j.operationKey));
    r.pending[1]?.resolve();
    await pc;
  });

  it('a throwing enqueue fails its callers instead of escaping into the event loop', async () => {
    const bug = new TypeError('cannot serialize');
    const c = new TurnCoalescer<DeliverJobData>(() => {
      throw bug;
    }, 16);
    const pa = c.add(ops('a', 1));
    await expect(pa).rejects.toBe(bug);
  });

  it('an empty fan-out (an unrouted message) adds nothing and resolves at once', async () => {
    const r = recorder();
    const c = new TurnCoalescer<DeliverJobData>(r.enqueue, 16);
    await c.add([]);
    await turn();
    expect(r.adds).toHaveLength(0);
  });
});
