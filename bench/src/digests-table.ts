/**
 * The digest rows of the bench (`--digests`): a plain route and a digest route
 * fed the same events, what each row holds, and the table they print as.
 * Pure: no I/O.
 */

/** The digest route's `digest` option (libs/config/src/digest-schema.ts), as the bench sets it. */
export interface DigestSettings {
  /** A duration, as the config takes it (`2s`). */
  window: string;
  maxItems: number;
  mode: 'fixed' | 'aligned';
}

/**
 * The digest route of the bench: a window short enough that several close
 * during a run of a few seconds, and maxItems below what a recipient gets in
 * one window, so digests also close early: both ways a digest closes are
 * measured. Fixed, not aligned: an aligned boundary falling inside a short
 * run splits each recipient's members in two and can leave maxItems unreached.
 */
export const DIGEST_BENCH_SETTINGS: DigestSettings = { window: '2s', maxItems: 15, mode: 'fixed' };

/** Recipients the digest rows' events are spread over: each is one digest group, so every digest gathers members. */
export const DIGEST_BENCH_RECIPIENTS = 30;

/** The digest rows' workload: the same for both rows of a run. */
export interface DigestsWorkload {
  events: number;
  /** Recipients each event names, taken in turn from the pool. */
  recipientsPerEvent: number;
  /** The pool of recipients: each is one digest group, so digests fill up. */
  recipients: number;
  /** Events per publish call: that many POSTs at once, then the same POSTs again. */
  batch: number;
  digest: DigestSettings;
}

/** One route on its own `singleshot start`, every event posted twice. */
export interface DigestRow {
  route: 'plain' | 'digest';
  events: number;
  /** What should reach the sink, events × recipients per event: notifications (plain) or members (digest). */
  expected: number;
  /** Events per second, the first POST → the last notification (plain) or the last member's digest (digest) at the sink. */
  eventsPerSecond: number;
  /** Notifications/s (plain) or members/s (digest) over the same span. */
  perSecond: number;
  /** An event's first POST → its notification, or the digest it is in, first accepted at the sink; ms. */
  latencyMs: { p50: number; p95: number; p99: number };
  /** Distinct messages the sink accepted: notifications (plain) or digests (digest). */
  sent: number;
  /**
   * Plain: POSTs beyond the first for an (event, recipient). Digest: POSTs
   * beyond the first of a digest id, plus each member's appearances beyond
   * its first digest.
   */
  duplicates: number;
  /** Notifications or members never accepted at the sink. */
  lost: number;
  /** `INFO commandstats` deltas after the warm-up, per notification (plain) or per member (digest). */
  redis: { commandsPer: number; scriptCallsPer: number; top: Record<string, number> };
  /** Digest row: its duplicates apart, and how its digests closed (`window`, `max_items`, `bytes`). */
  digests?: { repeatedDigests: number; repeatedMembers: number; closedBy: Record<string, number> };
}

/** `--digests` in the results JSON. */
export interface DigestsResult {
  workload: DigestsWorkload;
  rows: DigestRow[];
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : '—');

function routeName(r: DigestRow, s: DigestSettings): string {
  return r.route === 'plain' ? 'plain route' : `digest route (\`${s.window}\` ${s.mode} window, maxItems ${s.maxItems})`;
}

function sentCell(r: DigestRow): string {
  if (r.route === 'plain') return `${fmt(r.sent)} notifications`;
  const closed = Object.entries(r.digests?.closedBy ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${fmt(n)} ${reason}`);
  return `${fmt(r.sent)} digests${closed.length ? ` (${closed.join(', ')})` : ''}`;
}

/**
 * The rows as a markdown table, the plain route first: its rate is
 * notifications/s and its Redis figures are per notification; the digest
 * route's are per member (one event in one recipient's digest). Ratios are
 * against the plain row of the same run.
 */
export function digestsTable(result: DigestsResult): string {
  const plain = result.rows.find((r) => r.route === 'plain');
  const lines = [
    '| route | events | events/s | notifications/s or members/s | vs plain | p50 / p95 ms | sent at the sink | Redis commands per notification or member | script calls per notification or member | duplicates | lost |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const r of [...result.rows].sort((a, b) => (a.route === b.route ? 0 : a.route === 'plain' ? -1 : 1))) {
    const ratio = plain && plain.perSecond > 0 ? `${(r.perSecond / plain.perSecond).toFixed(2)}×` : '—';
    const unit = r.route === 'plain' ? 'notifications/s' : 'members/s';
    lines.push(
      `| ${routeName(r, result.workload.digest)} | ${fmt(r.events)} | ${fmt(r.eventsPerSecond)} | ${fmt(r.perSecond)} ${unit} | ${ratio} | ${fmt(r.latencyMs.p50)} / ${fmt(r.latencyMs.p95)} | ${sentCell(r)} | ${fmt(r.redis.commandsPer)} | ${fmt(r.redis.scriptCallsPer, 2)} | ${r.duplicates} | ${r.lost} |`,
    );
  }
  return lines.join('\n');
}
