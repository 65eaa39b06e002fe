import type { Config } from './schema';

/** Default queue partitions on a Redis Cluster (one partition per shard tag). */
export const DEFAULT_CLUSTER_PARTITIONS = 16;

/** Queue partitions of a config: `redis.partitions`, else 1 on a single Redis and 16 on a cluster. */
export function partitionsOf(config: Pick<Config, 'redis'>): number {
  return config.redis.partitions ?? (config.redis.cluster ? DEFAULT_CLUSTER_PARTITIONS : 1);
}

/** Replicas an acceptance and a fenced commit wait for: `redis.cluster.waitReplicas`, 0 on a single Redis. */
export function waitReplicasOf(config: Pick<Config, 'redis'>): number {
  return config.redis.cluster?.waitReplicas ?? 0;
}
