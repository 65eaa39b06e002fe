import { describe, expect, it } from 'vitest';
import { benchmarksMarkdown, type StoredResult } from './benchmarks-md';
import { storedResult } from './stored-result.fixture';
import { digestsTable, type DigestRow, type DigestsResult } from './digests-table';

const workload: DigestsResult['workload'] = { events: 300, recipientsPerEvent: 2, recipients: 30, batch: 50, digest: { window: '2s', maxItems: 20, mode: 'aligned' } };

const plain: DigestRow = {
  route: 'plain',
  events: 300,
  expected: 600,
  eventsPerSecond: 500,
  perSecond: 1000,
  latencyMs: { p50: 20, p95: 40, p99: 60 },
  sent: 600,
  duplicates: 0,
  lost: 0,
  redis: { commandsPer: 30.25, scriptCallsPer: 2.5, top: {} },
};

const digest: DigestRow = {
  route: 'digest',
  events: 300,
  expected: 600,
  eventsPerSecond: 150,
  perSecond: 300,
  latencyMs: { p50: 1200, p95: 2100, p99: 2300 },
  sent: 45,
  duplicates: 1,
  lost: 2,
  redis: { commandsPer: 12, scriptCallsPer: 1.125, top: {} },
  digests: { repeatedDigests: 1, repeatedMembers: 0, closedBy: { window: 15, max_items: 30 } },
};

describe('digests table', () => {
  it('puts the plain route first, with the digest row per member against it', () => {
    const lines = digestsTable({ workload, rows: [digest, plain] }).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| plain route | 300 | 500 | 1,000 notifications/s | 1.00× | 20 / 40 | 600 notifications | 30.3 | 2.5 | 0 | 0 |');
    expect(lines[3]).toBe('| digest route (`2s` aligned window, maxItems 20) | 300 | 150 | 300 members/s | 0.30× | 1,200 / 2,100 | 45 digests (30 max_items, 15 window) | 12 | 1.13 | 1 | 2 |');
  });

  it('shows no ratio without a plain row', () => {
    expect(digestsTable({ workload, rows: [digest] }).split('\n')[2]).toContain('| 300 members/s | — |');
  });
});

describe('BENCHMARKS.md', () => {
  const result = (digests?: DigestsResult): StoredResult => storedResult(digests ? { digests } : {});

  it('has a Digests section with the table and the route it measured when the run measured digests', () => {
    const digests = { workload, rows: [plain, digest] };
    const md = benchmarksMarkdown(result(digests), 'bench/results/x.json');
    expect(md).toContain('## Digests');
    expect(md).toContain('`digest: { window: 2s, maxItems: 20, mode: aligned }`');
    expect(md).toContain(digestsTable(digests));
  });

  it('has none when it did not', () => {
    expect(benchmarksMarkdown(result(), 'bench/results/x.json')).not.toContain('## Digests');
  });
});
