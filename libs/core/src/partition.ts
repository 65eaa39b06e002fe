import { shardOf } from './shard';

/**
 * The queue partition of a hex key (message key for decide jobs, operation key
 * for deliver jobs), out of `partitions`. Every producer and every consumer of a
 * partitioned queue goes through this one function. It is the shard function,
 * so with as many partitions as shards a job's queue and its key's state share
 * a hash tag, hence a cluster master (one `WAIT` covers both).
 */
export function partitionOf(hexKey: string, partitions: number): number {
  return partitions === 1 ? 0 : shardOf(hexKey, partitions);
}
