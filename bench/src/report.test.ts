import { describe, expect, it } from 'vitest';
import { markdownTables, ratios, roundRatios, type Summary } from './report';
import { checkTargets } from './targets';
import { SYSTEMS, type SystemId } from './systems';
import { whyPartial } from './benchmarks-md';

// The bench's verdicts are printed from these functions; a pairing off by one
// round, or a ratio turned upside down, would report a different machine's luck.
function summary(system: SystemId, byRound: number[] | undefined, cpu = 1): Summary {
  const sorted = [...(byRound ?? [1000])].sort((a, b) => a - b);
  return {
    system,
    name: system,
    exact: true,
    rounds: sorted.length,
    perSecond: { median: sorted[Math.floor((sorted.length - 1) / 2)] as number, min: sorted[0] as number, max: sorted.at(-1) as number },
    ...(byRound ? { perSecondByRound: byRound } : {}),
    latencyMs: { p50: 1, p95: 2, p99: 3 },
    duplicates: 0,
    lost: 0,
    cpuMsPerNotification: { fleet: cpu, store: 0, harness: 0, system: cpu },
    peakRssMb: { fleet: 1, store: 1 },
    syscallsPerNotification: { fleet: 1, store: 1 },
  };
}

describe('round-by-round ratios', () => {
  it('pairs round i with round i, in round order, not sorted', () => {
    const ours = summary('singleshot-start', [1800, 1400, 1600]);
    const naive = summary('bullmq-naive', [1600, 1400, 1700]);
    expect(roundRatios(ours, naive)).toEqual([1.13, 1, 0.94]);
  });

  it('pairs only the rounds both systems have', () => {
    expect(roundRatios(summary('singleshot-start', [2000, 1000, 3000]), summary('bullmq-naive', [1000, 1000]))).toEqual([2, 1]);
  });

  it('is empty for results stored before per-round figures were kept', () => {
    expect(roundRatios(summary('singleshot-start', undefined), summary('bullmq-naive', [1000]))).toEqual([]);
  });

  it('shows the rounds beside the ratio of medians, which stays the judged figure', () => {
    const ours = summary('singleshot-start', [1800, 1400, 1600]);
    const naive = summary('bullmq-naive', [1600, 1400, 1700]);
    expect(ratios([ours, naive], 'singleshot-start')).toEqual([
      'singleshot-start vs bullmq-naive: 1.00× the notifications/s (round by round 1.13×, 1.00×, 0.94×; median 1.00×), 1.00× the system CPU per notification',
    ]);
    const [naiveTarget] = checkTargets([ours, naive]);
    expect(naiveTarget).toEqual({ target: 'notifications/s ≥ 1.25× bullmq-naive', measured: '1.00× (1600 vs 1600; round by round 1.13×, 1.00×, 0.94×)', met: false });
  });
});

describe('targets judged only on what the run measured', () => {
  const open = { offeredPerSecond: 1000, perSecond: 1000, p50: 5, p95: 20, p99: 60, duplicates: 0, lost: 0 };

  it('judges no open-loop target on an open loop at a fixed rate (--open-rate), which is not the one at half the maximum', () => {
    const ours = { ...summary('singleshot-start', [1800]), openLoop: open };
    const judged = checkTargets([ours, summary('bullmq-naive', [1000])], { openLoopAtHalfMax: false }).map((t) => t.target);
    expect(judged).toContain('notifications/s ≥ 1.25× bullmq-naive');
    expect(judged.filter((t) => t.startsWith('open loop'))).toEqual([]);
  });

  it('judges only duplicates and lost without saturated rounds (--rounds 0): no throughput, CPU or memory to compare', () => {
    const ours = { ...summary('singleshot-start', []), openLoop: { ...open, duplicates: 1 } };
    expect(checkTargets([ours, summary('bullmq-naive', [])], { openLoopAtHalfMax: false })).toEqual([
      { target: '0 duplicates and 0 lost', measured: '1 duplicates, 0 lost', met: false },
    ]);
  });

  it('counts the open loop\'s duplicates and lost with the rounds\'', () => {
    const ours = { ...summary('singleshot-start', [1800]), lost: 2, openLoop: { ...open, duplicates: 3 } };
    const exact = checkTargets([ours]).find((t) => t.target === '0 duplicates and 0 lost');
    expect(exact).toEqual({ target: '0 duplicates and 0 lost', measured: '3 duplicates, 2 lost', met: false });
  });
});

describe('a run of open loops only (--rounds 0)', () => {
  it('prints no saturated table and no throughput ratios, which would be empty cells and NaN', () => {
    const open = { offeredPerSecond: 200, perSecond: 200, p50: 5, p95: 11, p99: 19, duplicates: 0, lost: 0 };
    const ours = { ...summary('singleshot-start', []), openLoop: open };
    const naive = { ...summary('bullmq-naive', []), openLoop: open };
    expect(ratios([ours, naive], 'singleshot-start')).toEqual([]);
    const md = markdownTables([ours, naive], 'singleshot-start', 200);
    expect(md.startsWith('Open loop at a fixed 200 notifications/s (--open-rate)')).toBe(true);
    expect(md).not.toContain('NaN');
  });
});

describe('when a run rewrites BENCHMARKS.md', () => {
  const every = SYSTEMS.map((s) => s.id);
  const full = { rounds: 5, openRate: undefined, openLoops: true, systems: every };

  it('is the complete comparison: every system, saturated rounds, open loops at half each maximum', () => {
    expect(whyPartial(full)).toBeUndefined();
  });

  it('names what a partial run lacks, so it leaves the page alone', () => {
    expect(whyPartial({ ...full, systems: ['singleshot-start'] })).toBe('not every system (bullmq-noop, bullmq-naive, postgres-outbox, singleshot-split left out)');
    expect(whyPartial({ ...full, openLoops: false })).toBe('no open loops (--no-open-loop)');
    expect(whyPartial({ ...full, openRate: 1000 })).toBe('open loops at a fixed 1000/s (--open-rate)');
    expect(whyPartial({ ...full, rounds: 0, openRate: 1000 })).toBe('open loops only (--rounds 0)');
    expect(whyPartial({ ...full, processes: 3 })).toBe('singleshot start on --processes 3, not its default layout');
  });
});
