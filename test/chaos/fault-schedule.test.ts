import { describe, expect, it } from 'vitest';
import { planFaults, type FaultAction } from './fault-schedule';

const members = ['ingest', 'decision', 'decision', 'delivery', 'delivery', 'delivery'];
const plan = (seed: string, windowMs: number, clusterNodeTimeoutMs?: number) =>
  planFaults({ seed, windowMs, members, leaseMs: 3000, ...(clusterNodeTimeoutMs !== undefined ? { clusterNodeTimeoutMs } : {}) });
const of = <K extends FaultAction['kind']>(actions: FaultAction[], kind: K) => actions.filter((a): a is Extract<FaultAction, { kind: K }> => a.kind === kind);

describe('planFaults', () => {
  it('on a single Redis: Redis kills, no master faults', () => {
    const { actions } = plan('7', 40_000);
    expect(of(actions, 'kill-redis').length).toBeGreaterThan(0);
    expect(of(actions, 'kill-master')).toEqual([]);
    expect(of(actions, 'stop-master')).toEqual([]);
  });

  it('on a cluster: master kills and master stops past the node timeout replace the Redis kills, the rest of the timeline unchanged', () => {
    for (const seed of ['1', '7', '20240917', 'abc']) {
      for (const windowMs of [20_000, 41_000, 200_000]) {
        const single = plan(seed, windowMs).actions;
        const cluster = plan(seed, windowMs, 1000).actions;
        expect(of(cluster, 'kill-redis')).toEqual([]);
        const kills = of(cluster, 'kill-master');
        const stops = of(cluster, 'stop-master');
        expect(kills.length, `${seed}/${windowMs}`).toBeGreaterThan(0);
        expect(stops.length, `${seed}/${windowMs}`).toBeGreaterThan(0);
        for (const stop of stops) expect(stop.durationMs).toBeGreaterThanOrEqual(3000);
        const masterTimes = [...kills, ...stops].map((a) => a.atMs).sort((a, b) => a - b);
        for (const t of masterTimes) expect(t).toBeLessThan(Math.max(3000, windowMs - 10_000));
        // Worker faults and proxy faults are the single-Redis plan's, at the same times (only `pick` is drawn anew).
        const rest = (actions: FaultAction[]) =>
          actions.filter((a) => a.kind === 'kill-worker' || a.kind === 'stop-holder' || a.kind === 'proxy').map((a) => ({ ...a, pick: 0 }));
        expect(rest(cluster)).toEqual(rest(single));
      }
    }
  });

  it('is a function of the seed', () => {
    expect(plan('42', 60_000, 1000)).toEqual(plan('42', 60_000, 1000));
    expect(plan('42', 60_000, 1000)).not.toEqual(plan('43', 60_000, 1000));
  });
});
