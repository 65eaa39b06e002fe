import type { Command } from 'commander';
import { QUEUES, openQueues } from '@singleshot/queues';
import type { Redis } from 'ioredis';
import { redactUrl, type Config } from '@singleshot/config';
import { KeyBuilder, createRedis } from '@singleshot/store';
import { loadConfigOrExit } from '@singleshot/runtime';
import { printTable } from '../format';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;
type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueCountsRow {
  queue: string;
  counts: Record<QueueState, number>;
  paused: boolean;
}

/**
 * A Redis connection for an operator command, with the config's password and
 * TLS, resolved once it answers (or rejected after `timeoutMs` with where it
 * tried, never a hang). `worker` connections may block (XREAD BLOCK).
 */
export async function connectForCommand(config: Config, role: 'client' | 'worker' = 'client', timeoutMs = 5_000): Promise<Redis> {
  const redis = createRedis({
    url: config.redis.url,
    role,
    name: `singleshot:cli${role === 'worker' ? ':follow' : ''}`,
    ...(config.redis.password ? { password: config.redis.password } : {}),
    ...(config.redis.tls ? { tls: config.redis.tls } : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`cannot reach Redis at ${redactUrl(config.redis.url)} within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return redis;
  } catch (err) {
    redis.disconnect();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** `singleshot queues`: jobs per queue and state, read from Redis (the DLQ's records wait, never run). */
export function registerQueues(program: Command): void {
  program
    .command('queues')
    .description('jobs per queue and state (decide, deliver, render, dead)')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const redis = await connectForCommand(config);
      const keys = new KeyBuilder(config.redis.keyPrefix, config.redis.shards);
      const queues = openQueues(redis, keys.queuePrefix);
      try {
        const rows: QueueCountsRow[] = await Promise.all(
          [queues.decide, queues.deliver, queues.render, queues.dead].map(async (q) => {
            const [c, paused] = await Promise.all([q.getJobCounts(...QUEUE_STATES), q.isPaused()]);
            return { queue: q.name, counts: Object.fromEntries(QUEUE_STATES.map((s) => [s, c[s] ?? 0])) as Record<QueueState, number>, paused };
          }),
        );
        if (opts.json) {
          console.log(JSON.stringify({ queues: rows }, null, 2));
          return;
        }
        printTable([
          ['QUEUE', ...QUEUE_STATES.map((s) => s.toUpperCase()), 'PAUSED'],
          ...rows.map((r) => [r.queue, ...QUEUE_STATES.map((s) => String(r.counts[s])), r.paused ? 'yes' : 'no']),
        ]);
        const dead = rows.find((r) => r.queue === QUEUES.dead);
        const records = dead ? dead.counts.waiting + dead.counts.failed : 0;
        if (records > 0) console.log(`\n${records} dead operation(s): singleshot dlq list`);
      } finally {
        await queues.close().catch(() => undefined);
        redis.disconnect();
      }
    });
}
