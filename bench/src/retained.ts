import type { Workload } from './driver';
import { measure, type Measurement } from './measure';
import type { TargetCheck } from './targets';

/** `singleshot start` on an empty store and on one already holding retained operations, side by side. */
export interface RetainedResult {
  operations: number;
  saturated: { empty: Measurement; filled: Measurement };
  openLoop?: { empty: Measurement; filled: Measurement };
}

type MeasureOptions = Parameters<typeof measure>[2];

/**
 * The cost as the store fills: a saturated round, then an open loop, each on
 * an empty store and right after on a store holding `operations` retained
 * operations (retained-fill.ts), so the pair shares the machine's state of the
 * moment. The open loop runs at the rate of the run's own open loop.
 */
export async function measureRetained(
  w: Workload,
  common: MeasureOptions,
  o: { operations: number; open?: { eventsPerSecond: number; seconds: number; warmSeconds: number } },
  log: (line: string) => void,
): Promise<RetainedResult> {
  const pair = async (label: string, w: Workload, opts: MeasureOptions) => {
    const empty = await measure('singleshot-start', w, opts);
    const filled = await measure('singleshot-start', w, { ...opts, retained: o.operations });
    log(`retained ${label}: empty ${line(empty)}; ${o.operations} retained ${line(filled)} (filled in ${filled.retained?.fillSeconds} s, ${filled.retained?.bytesPerOperation} bytes each)`);
    return { empty, filled };
  };
  const saturated = await pair('saturated', w, common);
  if (!o.open) return { operations: o.operations, saturated };
  const events = Math.max(10, Math.round(o.open.eventsPerSecond * o.open.seconds));
  const openLoop = await pair('open loop', { ...w, events }, { ...common, eventsPerSecond: o.open.eventsPerSecond, warmSeconds: o.open.warmSeconds });
  return { operations: o.operations, saturated, openLoop };
}

function line(m: Measurement): string {
  return `${m.perSecond}/s, p50/p95/p99 ${m.latencyMs.p50}/${m.latencyMs.p95}/${m.latencyMs.p99} ms, dup ${m.duplicates}, lost ${m.lost}`;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);

/** The table of BENCHMARKS.md's "As the store fills". */
export function retainedTable(r: RetainedResult): string {
  const n = r.operations.toLocaleString('en-US');
  const open = r.openLoop;
  const row = (label: string, sat: Measurement, op: Measurement | undefined, bytes: string) =>
    `| ${label} | ${sat.perSecond} | ${sat.latencyMs.p50} / ${sat.latencyMs.p99} | ${op ? `${op.latencyMs.p50} / ${op.latencyMs.p95} / ${op.latencyMs.p99}` : '—'} | ${sat.duplicates + (op?.duplicates ?? 0)} / ${sat.lost + (op?.lost ?? 0)} | ${bytes} |`;
  const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');
  return [
    `| store | notifications/s (saturated) | p50 / p99 ms (saturated) | open loop at ${open?.empty.offeredPerSecond ?? '—'}/s: p50 / p95 / p99 ms | duplicates / lost | Redis bytes per retained operation |`,
    '|---|---:|---:|---:|---:|---:|',
    row('empty', r.saturated.empty, open?.empty, '—'),
    row(`${n} retained`, r.saturated.filled, open?.filled, String(r.saturated.filled.retained?.bytesPerOperation ?? '—')),
    `| retained ÷ empty | ${x(ratio(r.saturated.filled.perSecond, r.saturated.empty.perSecond))} | ${x(ratio(r.saturated.filled.latencyMs.p99, r.saturated.empty.latencyMs.p99))} (p99) | ${open ? `${x(ratio(open.filled.latencyMs.p99, open.empty.latencyMs.p99))} (p99)` : '—'} | | |`,
  ].join('\n');
}

/** Throughput ≥ 0.9× and open-loop p99 ≤ 1.2× the empty store's, with every notification sent once. */
export function retainedTargets(r: RetainedResult): TargetCheck[] {
  const n = r.operations.toLocaleString('en-US');
  const through = ratio(r.saturated.filled.perSecond, r.saturated.empty.perSecond);
  const out: TargetCheck[] = [{ target: `with ${n} retained operations: throughput ≥ 0.9× the empty store's`, measured: `${through.toFixed(2)}× (${r.saturated.filled.perSecond} vs ${r.saturated.empty.perSecond}/s)`, met: through >= 0.9 }];
  if (r.openLoop) {
    const { empty, filled } = r.openLoop;
    const p99 = ratio(filled.latencyMs.p99, empty.latencyMs.p99);
    out.push({ target: `with ${n} retained operations: open-loop p99 ≤ 1.2× the empty store's`, measured: `${p99.toFixed(2)}× (${filled.latencyMs.p99} vs ${empty.latencyMs.p99} ms)`, met: p99 <= 1.2 });
  }
  const all = [r.saturated.empty, r.saturated.filled, ...(r.openLoop ? [r.openLoop.empty, r.openLoop.filled] : [])];
  const dup = all.reduce((s, m) => s + m.duplicates, 0);
  const lost = all.reduce((s, m) => s + m.lost, 0);
  out.push({ target: 'with retained operations: 0 duplicates and 0 lost', measured: `${dup} duplicates, ${lost} lost`, met: dup === 0 && lost === 0 });
  return out;
}
