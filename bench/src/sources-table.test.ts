import { describe, expect, it } from 'vitest';
import { benchmarksMarkdown, type StoredResult } from './benchmarks-md';
import { storedResult } from './stored-result.fixture';
import { parseSourceList, SourceOptionError, sourcesTable, SOURCE_KINDS, type SourceRow } from './sources-table';

const row = (kind: SourceRow['kind'], eventsPerSecond: number, p95: number): SourceRow => ({
  kind,
  events: 300,
  expected: 600,
  eventsPerSecond,
  latencyMs: { p50: p95 / 2, p95, p99: p95 * 2 },
  duplicates: 0,
  lost: 0,
});

describe('--source-list', () => {
  it('runs every way in when not given', () => {
    expect(parseSourceList(undefined)).toEqual([...SOURCE_KINDS]);
  });

  it('keeps the HTTP row beside the chosen sources, in the table order', () => {
    expect(parseSourceList('redis-streams, rabbitmq')).toEqual(['http', 'rabbitmq', 'redis-streams']);
  });

  it('refuses an unknown source with a code', () => {
    expect(() => parseSourceList('rabbitmq,sqs')).toThrow(SourceOptionError);
    expect(() => parseSourceList('sqs')).toThrow(expect.objectContaining({ code: 'BENCH_SOURCE_OPTION' }));
  });
});

describe('sources table', () => {
  it('puts HTTP first and gives each row its rate against HTTP', () => {
    const lines = sourcesTable([row('nats', 500, 40), row('http', 1000, 20)]).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| HTTP ingest (`POST /v1/events`) | 300 | 1,000 | 1.00× | 10 | 20 | 40 | 0 | 0 |');
    expect(lines[3]).toBe('| `nats` source | 300 | 500 | 0.50× | 20 | 40 | 80 | 0 | 0 |');
  });

  it('shows no ratio without an HTTP row', () => {
    expect(sourcesTable([row('rabbitmq', 800, 30)]).split('\n')[2]).toContain('| 800 | — |');
  });
});

describe('BENCHMARKS.md', () => {
  const result = (sources?: SourceRow[]): StoredResult => storedResult(sources ? { sources } : {});

  it('has a Sources section with the table when the run measured sources', () => {
    const rows = [row('http', 1000, 20), row('rabbitmq', 800, 30)];
    const md = benchmarksMarkdown(result(rows), 'bench/results/x.json');
    expect(md).toContain('## Sources');
    expect(md).toContain(sourcesTable(rows));
  });

  it('has none when it did not', () => {
    expect(benchmarksMarkdown(result(), 'bench/results/x.json')).not.toContain('## Sources');
  });
});
