import type { Measurement } from './measure';
import { median, round } from './stats';
import { SYSTEMS, type SystemId } from './systems';

/** Medians over the rounds of one system, with the spread (min–max) of throughput. */
export interface Summary {
  system: SystemId;
  name: string;
  exact: boolean;
  rounds: number;
  perSecond: { median: number; min: number; max: number };
  /**
   * Each round's notifications/s, in round order. Round i of every system ran
   * back to back, so round i of two systems is a pair that shares the machine's
   * state of that moment (optional: a stored result may lack it).
   */
  perSecondByRound?: number[];
  latencyMs: { p50: number; p95: number; p99: number };
  duplicates: number;
  lost: number;
  cpuMsPerNotification: { fleet: number; store: number; harness: number; system: number };
  peakRssMb: { fleet: number; store: number };
  syscallsPerNotification: { fleet: number; store: number };
  redisCommandsPerNotification?: number;
  scriptCallsPerNotification?: number;
  bytesPerOperation?: number;
  bytesPerOperationWithoutJobs?: number;
  /** Bytes appended to Redis's AOF per notification (median over the rounds). */
  aofBytesPerNotification?: number;
  openLoop?: { offeredPerSecond: number; perSecond: number; p50: number; p95: number; p99: number; duplicates: number; lost: number; stages?: Measurement['stages'] };
  stages?: Measurement['stages'];
}

export function summarize(id: SystemId, runs: Measurement[], open?: Measurement): Summary {
  const def = SYSTEMS.find((s) => s.id === id);
  const med = (f: (m: Measurement) => number | undefined) => {
    const v = runs.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
    return v.length ? round(median(v)) : Number.NaN;
  };
  const redis = runs.some((r) => r.redis);
  return {
    system: id,
    name: def?.name ?? id,
    exact: def?.exact ?? false,
    rounds: runs.length,
    perSecond: { median: med((r) => r.perSecond), min: Math.min(...runs.map((r) => r.perSecond)), max: Math.max(...runs.map((r) => r.perSecond)) },
    perSecondByRound: runs.map((r) => r.perSecond),
    latencyMs: { p50: med((r) => r.latencyMs.p50), p95: med((r) => r.latencyMs.p95), p99: med((r) => r.latencyMs.p99) },
    duplicates: runs.reduce((s, r) => s + r.duplicates, 0),
    lost: runs.reduce((s, r) => s + r.lost, 0),
    cpuMsPerNotification: {
      fleet: med((r) => r.cpuMsPerNotification.fleet),
      store: med((r) => r.cpuMsPerNotification.store),
      harness: med((r) => r.cpuMsPerNotification.harness),
      system: med((r) => r.cpuMsPerNotification.system),
    },
    peakRssMb: { fleet: med((r) => r.peakRssMb.fleet), store: med((r) => r.peakRssMb.store) },
    syscallsPerNotification: { fleet: med((r) => r.syscallsPerNotification.fleet), store: med((r) => r.syscallsPerNotification.store) },
    ...(redis ? { redisCommandsPerNotification: med((r) => r.redis?.commandsPerNotification), scriptCallsPerNotification: med((r) => r.redis?.scriptCallsPerNotification), aofBytesPerNotification: med((r) => r.redis?.aofBytesPerNotification) } : {}),
    bytesPerOperation: med((r) => r.redis?.bytesPerOperation ?? r.postgres?.bytesPerOperation),
    bytesPerOperationWithoutJobs: med((r) => r.redis?.bytesPerOperationWithoutJobs ?? r.postgres?.bytesPerOperation),
    ...(open
      ? { openLoop: { offeredPerSecond: open.offeredPerSecond ?? 0, perSecond: open.perSecond, p50: open.latencyMs.p50, p95: open.latencyMs.p95, p99: open.latencyMs.p99, duplicates: open.duplicates, lost: open.lost, ...(open.stages ? { stages: open.stages } : {}) } }
      : {}),
    ...(runs.at(-1)?.stages ? { stages: runs.at(-1)?.stages } : {}),
  };
}

const f0 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : String(Math.round(n)));
const f2 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(2));

/** The side-by-side tables as Markdown (printed and written to BENCHMARKS.md). */
export function markdownTables(s: Summary[], reference: SystemId, openRate?: number): string {
  const ref = s.find((x) => x.system === reference);
  // Without saturated rounds (`--rounds 0`) there is no row to fill: only the open loops ran.
  const saturated = s.some((x) => x.rounds > 0);
  const lines = !saturated ? [] : [
    `| system | notifications/s (median, min–max) | ${ref?.name ?? reference} ÷ this | p50 / p95 / p99 ms (saturated) | duplicates | lost | CPU ms/notification fleet + store = system (harness) | Redis commands / script calls per notification | AOF bytes per notification | syscalls per notification fleet / store | peak RSS fleet / store MiB | store bytes per operation: jobs retained / jobs gone |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...s.map((x) =>
      `| ${x.name} | ${f0(x.perSecond.median)} (${f0(x.perSecond.min)}–${f0(x.perSecond.max)}) | ${ref ? (ref.perSecond.median / x.perSecond.median).toFixed(2) : '—'} | ${f0(x.latencyMs.p50)} / ${f0(x.latencyMs.p95)} / ${f0(x.latencyMs.p99)} | ${x.duplicates} | ${x.lost} | ${f2(x.cpuMsPerNotification.fleet)} + ${f2(x.cpuMsPerNotification.store)} = ${f2(x.cpuMsPerNotification.system)} (${f2(x.cpuMsPerNotification.harness)}) | ${x.redisCommandsPerNotification !== undefined ? `${x.redisCommandsPerNotification} / ${x.scriptCallsPerNotification}` : '—'} | ${f0(x.aofBytesPerNotification)} | ${x.syscallsPerNotification.fleet} / ${x.syscallsPerNotification.store} | ${f0(x.peakRssMb.fleet)} / ${f0(x.peakRssMb.store)} | ${f0(x.bytesPerOperation)} / ${f0(x.bytesPerOperationWithoutJobs)} |`,
    ),
  ];
  if (s.some((x) => x.openLoop)) {
    const at = openRate === undefined ? 'at half of each system\'s own median maximum' : `at a fixed ${openRate} notifications/s (--open-rate)`;
    lines.push(...(saturated ? [''] : []), `Open loop ${at} (first copy sent → first provider POST):`, '');
    lines.push('| system | offered notifications/s | achieved | p50 ms | p95 ms | p99 ms | duplicates | lost |', '|---|---|---|---|---|---|---|---|');
    for (const x of s) if (x.openLoop) lines.push(`| ${x.name} | ${f0(x.openLoop.offeredPerSecond)} | ${f0(x.openLoop.perSecond)} | ${x.openLoop.p50} | ${x.openLoop.p95} | ${x.openLoop.p99} | ${x.openLoop.duplicates} | ${x.openLoop.lost} |`);
  }
  if (s.some((x) => x.stages)) {
    lines.push('', 'Where a singleshot notification waits (last saturated round, and the open-loop run; BullMQ job timestamps, ms p50 / p95 / p99; lock conflicts and the largest event-loop delay from the apps\' metrics):', '');
    lines.push('| system | run | decide queue wait | decide run | deliver queue wait | deliver run | deliver jobs retried | lock conflicts | event-loop delay p99 / max ms |', '|---|---|---|---|---|---|---|---|---|');
    const q = (v: { p50: number; p95: number; p99: number }) => `${v.p50} / ${v.p95} / ${v.p99}`;
    const row = (name: string, run: string, st: NonNullable<Summary['stages']>) =>
      `| ${name} | ${run} | ${q(st.decideQueueWaitMs)} | ${q(st.decideRunMs)} | ${q(st.deliverQueueWaitMs)} | ${q(st.deliverRunMs)} | ${st.deliverRetriedJobs} | ${st.lockConflicts} | ${st.eventLoopLagMs.p99} / ${st.eventLoopLagMs.max} |`;
    for (const x of s) {
      if (x.stages) lines.push(row(x.name, 'saturated', x.stages));
      if (x.openLoop?.stages) lines.push(row(x.name, 'open loop', x.openLoop.stages));
    }
  }
  return lines.join('\n');
}

/**
 * `a`'s notifications/s ÷ `b`'s, round by round (round i with round i): on a
 * shared VM the machine's speed drifts by tens of percent between rounds
 * (the same build's CPU per notification moved 0.60 → 0.87 ms one round to
 * the next), and a pair measured back to back shares that drift, so the
 * per-round ratios show how far one run's ratio of medians can be trusted.
 * Empty when either lacks per-round figures.
 */
export function roundRatios(a: Summary, b: Summary): number[] {
  const x = a.perSecondByRound ?? [];
  const y = b.perSecondByRound ?? [];
  return x.slice(0, y.length).map((v, i) => round(v / (y[i] as number)));
}

/** Round-by-round ratios as printed: `1.13×, 0.97×, …`. */
export function formatRoundRatios(ratios: number[]): string {
  return ratios.map((r) => `${r.toFixed(2)}×`).join(', ');
}

/** Throughput and CPU ratios of a reference system against each other system. */
export function ratios(s: Summary[], reference: SystemId): string[] {
  const ref = s.find((x) => x.system === reference);
  if (!ref || ref.rounds === 0) return [];
  return s
    .filter((x) => x.system !== reference)
    .map((x) => {
      const byRound = roundRatios(ref, x);
      const rounds = byRound.length > 1 ? ` (round by round ${formatRoundRatios(byRound)}; median ${median(byRound).toFixed(2)}×)` : '';
      return `${reference} vs ${x.system}: ${(ref.perSecond.median / x.perSecond.median).toFixed(2)}× the notifications/s${rounds}, ${(ref.cpuMsPerNotification.system / x.cpuMsPerNotification.system).toFixed(2)}× the system CPU per notification`;
    });
}
