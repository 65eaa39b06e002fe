import { startSink, type Sink } from './sink';
import type { BenchEvent } from './source-origins';
import { httpProducer, waitReady } from './sources';
import { quantiles, round } from './stats';
import { startSystem, type RunningSystem } from './systems';

/** The tenants rows' workload: one burst of events, posted once each, as fast as ingest takes them. */
export interface TenantsWorkload {
  events: number;
  /** Tenants of the skewed row; the first posts `heavyShare` of the events, the others share the rest evenly. */
  tenants: number;
  heavyShare: number;
  /** The provider's answer time per call: the sends, not the decisions, are what the burst waits for. */
  providerMs: number;
  inFlight: number;
  concurrency: number;
  appendfsync: 'everysec' | 'always';
  drainSeconds: number;
}

/** The skewed rows' tenants: ten, the first posting half of the burst. */
export const TENANTS_BENCH = { tenants: 10, heavyShare: 0.5, providerMs: 50 } as const;

/** What `--tenants` keeps in the results JSON. */
export interface TenantsResult {
  workload: TenantsWorkload;
  rows: TenantsRow[];
}

/** One tenant's figures in the skewed row. */
export interface TenantFigures {
  tenant: string;
  events: number;
  /** Sends per second while every tenant still had work (the window of Jain's index). */
  shareRate: number;
  p50: number;
  p99: number;
}

/** One producer without a tenant; a key per tenant with the fair queue; the same keys first in, first out. */
export type TenantsLayout = 'one tenant' | 'tenants' | 'tenants, no fair share';

export interface TenantsRow {
  layout: TenantsLayout;
  events: number;
  sent: number;
  lost: number;
  duplicates: number;
  /** Notifications per second, first post to last send. */
  perSecond: number;
  p99: number;
  /** The skewed row only. */
  tenants?: TenantFigures[];
  /** Jain's index of the tenants' send rates while all had work: 1 is an equal share. */
  jain?: number;
  /** p99 of the light tenants together, and of the heavy one. */
  lightP99?: number;
  heavyP99?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tenantName = (i: number) => `t${i}`;

/** Event i's tenant: every other event is the heavy tenant's (at heavyShare 0.5), the rest go round the others. */
function tenantOf(i: number, w: TenantsWorkload): number {
  const heavyEvery = 1 / w.heavyShare;
  const heavy = Math.floor((i + 1) / heavyEvery) > Math.floor(i / heavyEvery);
  return heavy || w.tenants === 1 ? 0 : 1 + (i % (w.tenants - 1));
}

/** Jain's fairness index of `x`: (Σx)² / (n Σx²). */
export function jainIndex(x: readonly number[]): number {
  const sum = x.reduce((a, b) => a + b, 0);
  const squares = x.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (x.length * squares);
}

/**
 * One row on a fresh `singleshot start`: the same burst from one producer
 * without a tenant (first in, first out, as a deployment without tenants), or
 * from one producer key per tenant, the heavy tenant posting `heavyShare` of
 * it interleaved with the others, with the fair queue or without it.
 */
export async function measureTenantsRow(layout: TenantsLayout, w: TenantsWorkload): Promise<TenantsRow> {
  const sink = await startSink({ delayMs: w.providerMs });
  let sys: RunningSystem | undefined;
  const keys = layout !== 'one tenant' ? Array.from({ length: w.tenants }, (_, i) => ({ tenant: tenantName(i), key: `bench-${tenantName(i)}-producer-key-000000` })) : undefined;
  try {
    const tenancy = keys ? { tenantKeys: keys, ...(layout === 'tenants, no fair share' ? { fairShare: 'off' as const } : {}) } : {};
    sys = await startSystem('singleshot-start', { sinkPort: sink.port, concurrency: w.concurrency, appendfsync: w.appendfsync, ...tenancy });
    await waitReady(sys);
    return await runBurst(layout, sys, sink, w, keys);
  } finally {
    await sys?.stop();
    await sink.close();
  }
}

async function runBurst(layout: TenantsLayout, sys: RunningSystem, sink: Sink, w: TenantsWorkload, keys: Array<{ key: string }> | undefined): Promise<TenantsRow> {
  const producers = (keys ?? [{ key: undefined }]).map((k) => httpProducer(sys.ingestUrl, Math.max(1, Math.ceil(w.inFlight / (keys?.length ?? 1))), k.key));
  try {
    // Warm-up: connections, JIT, scripts loaded; its events are not counted.
    const warm = (n: number): BenchEvent[] => Array.from({ length: 20 }, (_, i) => ({ id: `tw${n}-${i}`, type: 'order.created', recipients: [`warm${i}@bench.example`], data: { benchEvent: `tw${n}-${i}`, orderId: `w${i}` } }));
    await Promise.all(producers.map((p, n) => p.publish(warm(n))));
    const warmDeadline = performance.now() + w.drainSeconds * 1000;
    while ([...sink.received.values()].filter((v) => v.event.startsWith('tw')).length < 20 * producers.length && performance.now() < warmDeadline) await sleep(50);

    const events = Array.from({ length: w.events }, (_, i) => {
      const t = keys ? tenantOf(i, w) : 0;
      const id = `${tenantName(t)}-e${i}`;
      return { tenant: t, event: { id, type: 'order.created', recipients: [`r${i}@bench.example`], data: { benchEvent: id, orderId: String(i) } } };
    });
    const postedAt = new Map<string, number>();
    const t0 = performance.now();
    // The burst: one batch at a time, each split over the tenants' producers, so arrivals stay interleaved.
    for (let i = 0; i < events.length; i += w.inFlight) {
      const batch = events.slice(i, i + w.inFlight);
      const at = performance.now();
      for (const e of batch) postedAt.set(e.event.id, at);
      await Promise.all(producers.map((p, n) => p.publish(batch.filter((e) => (keys ? e.tenant === n : true)).map((e) => e.event))));
    }
    const deadline = performance.now() + w.drainSeconds * 1000;
    const ours = () => [...sink.received.values()].filter((v) => postedAt.has(v.event));
    while (ours().length < events.length && performance.now() < deadline) await sleep(50);
    const received = ours();
    const last = received.reduce((m, v) => Math.max(m, v.firstAt), t0);
    const latency = received.map((v) => v.firstAt - (postedAt.get(v.event) ?? v.firstAt));
    const row: TenantsRow = {
      layout,
      events: events.length,
      sent: received.length,
      lost: events.length - received.length,
      duplicates: received.reduce((n, v) => n + v.count - 1, 0),
      perSecond: Math.round(received.length / Math.max(0.001, (last - t0) / 1000)),
      p99: quantiles(latency).p99,
    };
    if (!keys) return row;
    return { ...row, ...perTenant(keys.length, received, postedAt, t0) };
  } finally {
    await Promise.all(producers.map((p) => p.stop()));
  }
}

/** Per-tenant figures, and Jain's index over the window in which every tenant still had something to send. */
function perTenant(n: number, received: ReadonlyArray<{ event: string; firstAt: number }>, postedAt: ReadonlyMap<string, number>, t0: number): Pick<TenantsRow, 'tenants' | 'jain' | 'lightP99' | 'heavyP99'> {
  const byTenant = Array.from({ length: n }, () => [] as Array<{ at: number; latency: number }>);
  for (const v of received) {
    const t = Number(v.event.slice(1, v.event.indexOf('-')));
    byTenant[t]?.push({ at: v.firstAt, latency: v.firstAt - (postedAt.get(v.event) ?? v.firstAt) });
  }
  const windowEnd = Math.min(...byTenant.map((sends) => sends.reduce((m, s) => Math.max(m, s.at), t0)));
  const seconds = Math.max(0.001, (windowEnd - t0) / 1000);
  const tenants = byTenant.map((sends, i) => {
    const q = quantiles(sends.map((s) => s.latency));
    return { tenant: tenantName(i), events: sends.length, shareRate: round(sends.filter((s) => s.at <= windowEnd).length / seconds, 1), p50: q.p50, p99: q.p99 };
  });
  return {
    tenants,
    jain: round(jainIndex(tenants.map((t) => t.shareRate)), 3),
    lightP99: quantiles(byTenant.slice(1).flat().map((s) => s.latency)).p99,
    heavyP99: tenants[0]?.p99 ?? Number.NaN,
  };
}

/** The rows of `--tenants`, in an order that puts the control first: one tenant, the fair queue, and first in, first out. */
export const TENANTS_LAYOUTS: readonly TenantsLayout[] = ['one tenant', 'tenants', 'tenants, no fair share'];

/** The rows as a Markdown table (BENCHMARKS.md and the log). */
export function tenantsTable(rows: readonly TenantsRow[], w: Pick<TenantsWorkload, 'events' | 'tenants' | 'heavyShare' | 'providerMs'>): string {
  const head = [
    `${w.events} events in one burst, posted once each; ${w.tenants} tenants, the first posting ${Math.round(w.heavyShare * 100)}% and the others the rest evenly, interleaved; the provider answers in ${w.providerMs} ms.`,
    "Jain's index is over the tenants' send rates while every tenant still had work (1: an equal share).",
    '',
    '| layout | notifications/s | ÷ one tenant | p99 ms | light tenants p99 ms | heavy tenant p99 ms | Jain | sent | lost | duplicates |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const base = rows.find((r) => r.layout === 'one tenant')?.perSecond;
  const cell = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '' : String(n));
  const body = rows.map((r) =>
    `| ${r.layout} | ${r.perSecond} | ${base ? round(r.perSecond / base, 2) : ''} | ${r.p99} | ${cell(r.lightP99)} | ${cell(r.heavyP99)} | ${cell(r.jain)} | ${r.sent} | ${r.lost} | ${r.duplicates} |`,
  );
  return [...head, ...body].join('\n');
}
