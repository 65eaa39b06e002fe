import type { ChainableCommander } from 'ioredis';
import { isCluster, type RedisClient } from './connection';

/** One queued command of a batch (e.g. `(p) => p.zcount(key, 0, 1)`). */
export type BatchedCommand = (pipeline: ChainableCommander) => unknown;

/**
 * Runs commands on keys of many slots in one round trip and returns their
 * replies as `pipeline.exec()` does (`[error, reply]` in order). A single Redis
 * gets one pipeline. A cluster client refuses a pipeline whose keys live on
 * different nodes, so there every command is its own one-command pipeline, all
 * sent at once (still one round trip of latency, spread over the masters).
 */
export async function execAcrossSlots(redis: RedisClient, commands: readonly BatchedCommand[]): Promise<[Error | null, unknown][]> {
  if (commands.length === 0) return [];
  if (!isCluster(redis)) {
    const pipeline = redis.pipeline();
    for (const command of commands) command(pipeline);
    return ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
  }
  return Promise.all(
    commands.map(async (command) => {
      const pipeline = redis.pipeline();
      command(pipeline);
      const [reply] = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
      return reply ?? [new Error('no reply'), null];
    }),
  );
}
