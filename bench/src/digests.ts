import type { DigestRow, DigestSettings, DigestsWorkload } from './digests-table';
import { startSink, type Sink } from './sink';
import type { BenchEvent } from './source-origins';
import { httpProducer, publishTwice, waitReady } from './sources';
import { quantiles, round } from './stats';
import { commandTotals, redisResetStats, redisSnapshot, topCommands } from './store-stats';
import { startSystem, type RunningSystem } from './systems';

/** How the digest rows run, beside their workload: the same options as the rest of the bench. */
export interface DigestsRunOptions {
  concurrency: number;
  appendfsync: 'everysec' | 'always';
  drainSeconds: number;
}

/** What the sink accepted of one run, per member (`event|recipient`): a plain notification or a place in a digest. */
interface Tally {
  /** Member → when it was first accepted at the sink (performance.now()). */
  firstAt: Map<string, number>;
  sent: number;
  duplicates: number;
  digests?: NonNullable<DigestRow['digests']>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The run's events: event i names `recipientsPerEvent` recipients of the pool
 * in turn, so every recipient (one digest group) gets its share. `pool`
 * prefixes the recipients, so the warm-up's digest groups are not the run's.
 */
function digestEvents(prefix: string, count: number, w: DigestsWorkload, pool: string): BenchEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `${prefix}${i}`;
    const recipients = Array.from({ length: w.recipientsPerEvent }, (_, k) => `${pool}${(i + k) % w.recipients}@bench.example`);
    return { id, type: 'order.created', recipients, data: { benchEvent: id, orderId: id } };
  });
}

/** The bench route as a digest route: the `digest` option and a template over its items (docs/digests.md). */
function digestRoute(s: DigestSettings): Record<string, unknown> {
  return {
    digest: { window: s.window, maxItems: s.maxItems, mode: s.mode },
    template: { subject: '{{count}} orders', text: '{{#each items}}Order {{data.orderId}} was created\n{{/each}}' },
  };
}

function plainTally(sink: Sink, prefix: string): Tally {
  const firstAt = new Map<string, number>();
  let duplicates = 0;
  for (const [key, v] of sink.received) {
    if (!v.event.startsWith(prefix)) continue;
    firstAt.set(key, v.firstAt);
    duplicates += v.count - 1;
  }
  return { firstAt, sent: firstAt.size, duplicates };
}

/**
 * A digest accepted twice is a duplicate send; a member in two digests (or
 * twice in one) is a duplicate notification: both count.
 */
function digestTally(sink: Sink, prefix: string): Tally {
  const firstAt = new Map<string, number>();
  const appearances = new Map<string, number>();
  const closedBy: Record<string, number> = {};
  let sent = 0;
  let repeatedDigests = 0;
  for (const d of sink.digests.values()) {
    const ours = d.events.filter((e) => e.startsWith(prefix));
    if (ours.length === 0) continue;
    sent++;
    repeatedDigests += d.count - 1;
    closedBy[d.reason] = (closedBy[d.reason] ?? 0) + 1;
    for (const e of ours) {
      const member = `${e}|${d.recipient}`;
      appearances.set(member, (appearances.get(member) ?? 0) + 1);
      firstAt.set(member, Math.min(firstAt.get(member) ?? d.firstAt, d.firstAt));
    }
  }
  let repeatedMembers = 0;
  for (const n of appearances.values()) repeatedMembers += n - 1;
  return { firstAt, sent, duplicates: repeatedDigests + repeatedMembers, digests: { repeatedDigests, repeatedMembers, closedBy } };
}

const tallyOf = (route: DigestRow['route'], sink: Sink, prefix: string): Tally => (route === 'plain' ? plainTally(sink, prefix) : digestTally(sink, prefix));

async function waitMembers(route: DigestRow['route'], sink: Sink, prefix: string, expected: number, seconds: number): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  while (tallyOf(route, sink, prefix).firstAt.size < expected && performance.now() < deadline) await sleep(50);
}

/**
 * Posts the events twice, waits until every notification or member reached
 * the sink (or the drain time passed), and reads the counters; Redis's
 * command counts start after the warm-up's last digest has been sent, so
 * they are this run's alone.
 */
async function runRoute(route: DigestRow['route'], sys: RunningSystem, sink: Sink, w: DigestsWorkload, o: DigestsRunOptions): Promise<DigestRow> {
  const producer = httpProducer(sys.ingestUrl, w.batch);
  try {
    // Warm-up on recipients of its own: connections, JIT, scripts loaded, a first window closed.
    const warm = digestEvents(`dw-${route}-`, Math.min(50, w.events), w, 'warm');
    await publishTwice(producer, warm, w);
    await waitMembers(route, sink, `dw-${route}-`, warm.length * w.recipientsPerEvent, o.drainSeconds);
    // The warm-up's last flush commits after the sink answered it.
    await sleep(500);
    await redisResetStats(sys.store.url);

    const prefix = `d-${route}-`;
    const events = digestEvents(prefix, w.events, w, 'd');
    const expected = w.events * w.recipientsPerEvent;
    const sentAt = await publishTwice(producer, events, w);
    await waitMembers(route, sink, prefix, expected, o.drainSeconds);
    // A little longer, so a late duplicate is still seen and the last commits are counted.
    await sleep(1500);
    const after = await redisSnapshot(sys.store.url);
    const tally = tallyOf(route, sink, prefix);

    const first = [...sentAt.values()].reduce((m, t) => Math.min(m, t), Number.POSITIVE_INFINITY);
    const last = [...tally.firstAt.values()].reduce((m, t) => Math.max(m, t), first);
    const seconds = Math.max(0.001, (last - first) / 1000);
    const latencies = [...tally.firstAt].map(([member, at]) => at - (sentAt.get(member.slice(0, member.indexOf('|'))) ?? at));
    const q = quantiles(latencies);
    const n = Math.max(1, tally.firstAt.size);
    const { commands, scripts } = commandTotals(after);
    return {
      route,
      events: w.events,
      expected,
      eventsPerSecond: Math.round(w.events / seconds),
      perSecond: Math.round(tally.firstAt.size / seconds),
      latencyMs: { p50: q.p50, p95: q.p95, p99: q.p99 },
      sent: tally.sent,
      duplicates: tally.duplicates,
      lost: expected - tally.firstAt.size,
      redis: { commandsPer: round(commands / n, 1), scriptCallsPer: round(scripts / n, 2), top: topCommands(after, n, 16) },
      ...(tally.digests ? { digests: tally.digests } : {}),
    };
  } finally {
    await producer.stop();
  }
}

/**
 * One row: a fresh `singleshot start` (its own Redis) whose one route is
 * plain (the control) or a digest route, the same events posted twice to
 * each.
 */
export async function measureDigestRoute(route: DigestRow['route'], w: DigestsWorkload, o: DigestsRunOptions): Promise<DigestRow> {
  const sink = await startSink();
  let sys: RunningSystem | undefined;
  try {
    sys = await startSystem('singleshot-start', { sinkPort: sink.port, concurrency: o.concurrency, appendfsync: o.appendfsync, ...(route === 'digest' ? { route: digestRoute(w.digest) } : {}) });
    await waitReady(sys);
    return await runRoute(route, sys, sink, w, o);
  } finally {
    await sys?.stop();
    await sink.close();
  }
}
