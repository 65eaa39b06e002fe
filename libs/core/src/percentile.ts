/**
 * Nearest-rank percentile of an ascending array (NaN when empty). One
 * definition for every figure we report: the loadtest's and the benchmark's
 * latencies are read the same way.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}
