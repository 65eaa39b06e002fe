import type { Config } from './schema';

/** Queue partitions of a config: `redis.partitions`, else 1 on a single Redis and `redis.shards` (16) on a cluster, so a job's queue shares its state's slot. */
export function partitionsOf(config: Pick<Config, 'redis'>): number {
  return config.redis.partitions ?? (config.redis.cluster ? config.redis.shards : 1);
}

/** Replicas an acceptance and a fenced commit wait for: `redis.cluster.waitReplicas`, 0 on a single Redis. */
export function waitReplicasOf(config: Pick<Config, 'redis'>): number {
  return config.redis.cluster?.waitReplicas ?? 0;
}
