import type { StoredResult } from './benchmarks-md';

/**
 * The smallest stored run BENCHMARKS.md can be made from, with `extra` laid
 * over it: what the report tests add (sources, digests) to see their section.
 */
export function storedResult(extra: Partial<StoredResult> = {}): StoredResult {
  return {
    startedAt: '2026-12-03T00:00:00.000Z',
    workload: { events: 10, recipients: 2, dup: 3, inFlight: 4 },
    options: { concurrency: 4, appendfsync: 'everysec' },
    rounds: 1,
    env: { machine: { cpus: 2, cpuModel: 'test', memoryGiB: 1, loadAverage: '0', loadAverageAtStart: '0' }, versions: {} },
    summaries: [],
    targets: [],
    ...extra,
  };
}
