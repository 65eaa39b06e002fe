import { describe, expect, it } from 'vitest';
import { ReplicaBarrier } from './replica-barrier';

describe('ReplicaBarrier', () => {
  it('one wait for every caller of a turn, with all their keys; a later turn waits again', async () => {
    const waits: string[][] = [];
    const barrier = new ReplicaBarrier(async (keys) => void waits.push([...keys]));
    await Promise.all(['a', 'b', 'a', 'c'].map((k) => barrier.after([k])));
    expect(waits).toEqual([['a', 'b', 'c']]);
    await barrier.after(['d']);
    expect(waits).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('a failed wait rejects every caller that joined it, and the next turn starts afresh', async () => {
    let fail = true;
    const barrier = new ReplicaBarrier(async () => {
      if (fail) throw Object.assign(new Error('only 0 of 1 replica(s)'), { code: 'REPLICA_WAIT_TIMEOUT' });
    });
    const results = await Promise.allSettled([barrier.after(['a']), barrier.after(['b'])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(barrier.after(['c'])).resolves.toBeUndefined();
  });
});
