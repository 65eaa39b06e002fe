/**
 * The sources rows of the bench (`--sources`): what each row is, how the
 * command line names them, and the table they print as. Pure: no I/O.
 */

/** `http` is ingest's own `POST /v1/events`, measured the same way as the sources beside it. */
export const SOURCE_KINDS = ['http', 'postgres-outbox', 'rabbitmq', 'nats', 'redis-streams', 'kafka'] as const;

export type SourceKind = (typeof SOURCE_KINDS)[number];

/** One row: N events, each published twice, through one way in to `singleshot start`. */
export interface SourceRow {
  kind: SourceKind;
  events: number;
  /** Notifications the sink should get (events × recipients). */
  expected: number;
  /** Events per second, first publish → last notification at the sink. */
  eventsPerSecond: number;
  /** Publish (the event's first copy) → the provider's first POST for it, ms. */
  latencyMs: { p50: number; p95: number; p99: number };
  /** POSTs beyond the first for an (event, recipient). */
  duplicates: number;
  /** (event, recipient) pairs never POSTed. */
  lost: number;
  /** The producer's publishing rate, events/s, or undefined for as fast as it could. */
  rate?: number;
}

export class SourceOptionError extends Error {
  readonly code = 'BENCH_SOURCE_OPTION';
}

/**
 * `--source-list a,b`: the rows to run, in SOURCE_KINDS order, `http` always
 * among them (the comparison the other rows are read against). Undefined: all.
 */
export function parseSourceList(value: string | undefined): SourceKind[] {
  if (value === undefined) return [...SOURCE_KINDS];
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(SOURCE_KINDS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new SourceOptionError(`unknown source(s) ${unknown.join(', ')} (known: ${SOURCE_KINDS.join(', ')})`);
  return SOURCE_KINDS.filter((k) => k === 'http' || names.includes(k));
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : '—');

/** The rows as a markdown table, HTTP ingest first; ratios are against the HTTP row of the same run. */
export function sourcesTable(rows: readonly SourceRow[]): string {
  const http = rows.find((r) => r.kind === 'http');
  const lines = [
    '| way in | events | events/s | vs HTTP | p50 ms | p95 ms | p99 ms | duplicates | lost |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of [...rows].sort((a, b) => SOURCE_KINDS.indexOf(a.kind) - SOURCE_KINDS.indexOf(b.kind))) {
    const ratio = http && http.eventsPerSecond > 0 ? `${(r.eventsPerSecond / http.eventsPerSecond).toFixed(2)}×` : '—';
    const name = r.kind === 'http' ? 'HTTP ingest (`POST /v1/events`)' : `\`${r.kind}\` source`;
    lines.push(`| ${name} | ${fmt(r.events)} | ${fmt(r.eventsPerSecond)} | ${ratio} | ${fmt(r.latencyMs.p50)} | ${fmt(r.latencyMs.p95)} | ${fmt(r.latencyMs.p99)} | ${r.duplicates} | ${r.lost} |`);
  }
  return lines.join('\n');
}
