import { Pool } from 'undici';
import { startSink, type Sink } from './sink';
import { startOrigin, type BenchEvent, type Origin } from './source-origins';
import type { SourceKind, SourceRow } from './sources-table';
import { quantiles } from './stats';
import { startSystem, type RunningSystem } from './systems';

/** The sources rows' workload: the same for every row of a run. */
export interface SourcesWorkload {
  events: number;
  recipients: number;
  /** Events per publish call (one confirm, one transaction, one pipeline, or that many POSTs at once). */
  batch: number;
  /** Events/s the producer publishes at; undefined: as fast as its confirms come back. */
  rate?: number;
  concurrency: number;
  appendfsync: 'everysec' | 'always';
  drainSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function benchEvents(prefix: string, count: number, recipients: number): BenchEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `${prefix}${i}`;
    return { id, type: 'order.created', recipients: Array.from({ length: recipients }, (_, r) => `r${r}-${i}@bench.example`), data: { benchEvent: id, orderId: id } };
  });
}

/** The HTTP row's producer (and the digest rows'): ingest's `POST /v1/events`, a batch's POSTs at once, each retried on 429/5xx as a producer would. */
export function httpProducer(ingestUrl: string, inFlight: number, key?: string): Pick<Origin, 'publish' | 'stop'> {
  const pool = new Pool(ingestUrl, { connections: inFlight, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const post = async (e: BenchEvent): Promise<void> => {
    const body = JSON.stringify({ ...e, source: 'bench' });
    for (let attempt = 0; ; attempt++) {
      const res = await pool.request({ method: 'POST', path: '/v1/events', headers, body });
      const text = await res.body.text();
      if (res.statusCode >= 200 && res.statusCode < 300) return;
      if ((res.statusCode !== 429 && res.statusCode < 500) || attempt === 7) throw new Error(`bench: ingest answered ${res.statusCode}: ${text}`);
      await sleep(50 * 2 ** attempt);
    }
  };
  return { publish: async (events) => void (await Promise.all(events.map(post))), stop: () => pool.close() };
}

/** Waits up to 60 s for ingest's /readyz to answer 200. */
export async function waitReady(sys: RunningSystem): Promise<void> {
  // Under `start` the relay's readiness is part of ingest's /readyz (relay-worker, source-<name>).
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${sys.ingestUrl}/readyz`).then((r) => r.ok, () => false)) return;
    await sleep(100);
  }
  throw new Error(`bench: ${sys.ingestUrl}/readyz did not answer 200 within 60 s`);
}

async function waitPairs(sink: Sink, prefix: string, expected: number, seconds: number): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  const count = () => [...sink.received.values()].filter((v) => v.event.startsWith(prefix)).length;
  while (count() < expected && performance.now() < deadline) await sleep(50);
}

/**
 * Publishes every event twice (an at-least-once producer: the batch, then the
 * same batch again), at `rate` or as fast as the origin confirms. Returns each
 * event's first publish time (performance.now()).
 */
export async function publishTwice(origin: Pick<Origin, 'publish'>, events: BenchEvent[], w: Pick<SourcesWorkload, 'batch' | 'rate'>): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += w.batch) {
    if (w.rate) {
      const wait = t0 + (i * 1000) / w.rate - performance.now();
      if (wait > 1) await sleep(wait);
    }
    const batch = events.slice(i, i + w.batch);
    const at = performance.now();
    for (const e of batch) sent.set(e.id, at);
    await origin.publish(batch);
    await origin.publish(batch);
  }
  return sent;
}

/**
 * One row: a fresh `singleshot start` (its own Redis, the relay in process
 * when the row is a source) and origin, a short warm-up through the same way
 * in, then N events each published twice; events/s is first publish → last
 * notification at the sink, latency publish → the provider's first POST.
 */
export async function measureSource(kind: SourceKind, w: SourcesWorkload): Promise<SourceRow> {
  const sink = await startSink();
  let origin: Origin | undefined;
  let sys: RunningSystem | undefined;
  let producer: Pick<Origin, 'publish' | 'stop'> | undefined;
  try {
    origin = kind === 'http' ? undefined : await startOrigin(kind);
    sys = await startSystem('singleshot-start', { sinkPort: sink.port, concurrency: w.concurrency, appendfsync: w.appendfsync, sources: origin ? [origin.source] : [] });
    await waitReady(sys);
    producer = origin ?? httpProducer(sys.ingestUrl, w.batch);
    const warm = benchEvents(`w-${kind}-`, Math.min(50, w.events), w.recipients);
    await publishTwice(producer, warm, w);
    await waitPairs(sink, `w-${kind}-`, warm.length * w.recipients, w.drainSeconds);

    const prefix = `s-${kind}-`;
    const events = benchEvents(prefix, w.events, w.recipients);
    const expected = w.events * w.recipients;
    const sent = await publishTwice(producer, events, w);
    await waitPairs(sink, prefix, expected, w.drainSeconds);
    // A little longer, so a late duplicate is still seen.
    await sleep(1500);
    const ours = [...sink.received.values()].filter((v) => v.event.startsWith(prefix));
    const first = Math.min(...sent.values());
    const last = ours.reduce((m, v) => Math.max(m, v.firstAt), first);
    const q = quantiles(ours.map((v) => v.firstAt - (sent.get(v.event) ?? v.firstAt)));
    return {
      kind,
      events: w.events,
      expected,
      eventsPerSecond: Math.round(w.events / Math.max(0.001, (last - first) / 1000)),
      latencyMs: { p50: q.p50, p95: q.p95, p99: q.p99 },
      duplicates: ours.reduce((t, v) => t + v.count - 1, 0),
      lost: expected - ours.length,
      ...(w.rate ? { rate: w.rate } : {}),
    };
  } finally {
    if (producer && producer !== origin) await producer.stop();
    await sys?.stop();
    await origin?.stop();
    await sink.close();
  }
}
