import type { TestRedisCluster } from '@singleshot/test-harness';

/**
 * Commands each current master executed since CONFIG RESETSTAT (INFO
 * commandstats, summed over commands). A master promoted during the run also
 * counts what it applied as a replica before, which is the same traffic its
 * old master carried.
 */
export async function commandsPerMaster(cluster: TestRedisCluster): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const master of await cluster.masters()) {
    const info = await cluster.cli(master, 'INFO', 'commandstats');
    let calls = 0;
    for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
    result[master.address] = calls;
  }
  return result;
}

/** Each entry's share of the total (0..1). */
export function shares(counts: Record<string, number>): Record<string, number> {
  const total = Object.values(counts).reduce((a, b) => a + b, 0) || 1;
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Math.round((v / total) * 1000) / 1000]));
}
