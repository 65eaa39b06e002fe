import { formatRoundRatios, roundRatios, type Summary } from './report';

/** One of singleshot's speed targets (docs/benchmarks.md), as measured in this run. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const KIB = 1024;

/** How the run's open loop was paced, so its latency is only judged against the target it is about. */
export interface JudgedRun {
  /** The open loop ran at half of each system's maximum (not at a fixed `--open-rate`). */
  openLoopAtHalfMax: boolean;
}

/**
 * The speed targets singleshot's embedded default (`singleshot start`) is held
 * to, checked against the peers of the same run. A missing peer leaves its
 * comparison out rather than passing it, and so does a figure the run did not
 * measure: an open loop at a fixed rate is not the one at half the maximum,
 * and a run without saturated rounds has no throughput to compare.
 */
export function checkTargets(s: Summary[], run: JudgedRun = { openLoopAtHalfMax: true }): TargetCheck[] {
  const ours = s.find((x) => x.system === 'singleshot-start');
  if (!ours) return [];
  const out: TargetCheck[] = [];
  // Every copy the run sent counts, the open loop's as well as the rounds'.
  const duplicates = ours.duplicates + (ours.openLoop?.duplicates ?? 0);
  const lost = ours.lost + (ours.openLoop?.lost ?? 0);
  const exact: TargetCheck = { target: '0 duplicates and 0 lost', measured: `${duplicates} duplicates, ${lost} lost`, met: duplicates === 0 && lost === 0 };
  // Without saturated rounds (`--rounds 0`) there is no throughput, CPU or memory figure to judge.
  if (ours.rounds === 0) return [exact, ...openLoopTargets(ours, run)];
  const x2 = (n: number) => `${n.toFixed(2)}×`;
  for (const id of ['bullmq-naive', 'postgres-outbox'] as const) {
    const peer = s.find((x) => x.system === id);
    if (!peer) continue;
    // Judged on the ratio of the medians (the issue's figure); the rounds' own
    // ratios are shown beside it so a verdict on a noisy machine can be read.
    const r = ours.perSecond.median / peer.perSecond.median;
    const byRound = roundRatios(ours, peer);
    const rounds = byRound.length > 1 ? `; round by round ${formatRoundRatios(byRound)}` : '';
    out.push({ target: `notifications/s ≥ 1.25× ${id}`, measured: `${x2(r)} (${ours.perSecond.median} vs ${peer.perSecond.median}${rounds})`, met: r >= 1.25 });
  }
  const pg = s.find((x) => x.system === 'postgres-outbox');
  if (pg) {
    const r = ours.cpuMsPerNotification.system / pg.cpuMsPerNotification.system;
    out.push({ target: 'system CPU per notification ≤ 0.8× postgres-outbox', measured: `${x2(r)} (${ours.cpuMsPerNotification.system} vs ${pg.cpuMsPerNotification.system} ms)`, met: r <= 0.8 });
  }
  out.push(exact);
  out.push(...openLoopTargets(ours, run));
  out.push({ target: 'Redis CPU per notification ≤ 0.3 ms', measured: `${ours.cpuMsPerNotification.store} ms`, met: ours.cpuMsPerNotification.store <= 0.3 });
  const bytes = ours.bytesPerOperationWithoutJobs;
  if (bytes !== undefined && Number.isFinite(bytes)) out.push({ target: 'Redis memory per retained operation ≤ 1.5 KiB', measured: `${bytes} bytes`, met: bytes <= 1.5 * KIB });
  return out;
}

function openLoopTargets(ours: Summary, run: JudgedRun): TargetCheck[] {
  if (!ours.openLoop || !run.openLoopAtHalfMax) return [];
  return [
    { target: 'open loop at half max: p95 < 25 ms', measured: `${ours.openLoop.p95} ms`, met: ours.openLoop.p95 < 25 },
    { target: 'open loop at half max: p99 < 100 ms', measured: `${ours.openLoop.p99} ms`, met: ours.openLoop.p99 < 100 },
  ];
}

/** The checks as Markdown lines. */
export function targetLines(checks: TargetCheck[]): string[] {
  return checks.map((c) => `${c.met ? 'met' : 'NOT met'}: ${c.target} — ${c.measured}`);
}
