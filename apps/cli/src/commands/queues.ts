import type { Command } from 'commander';
import { QUEUES, QUEUE_NAMES, openQueues } from '@singleshot/queues';
import type { RedisClient } from '@singleshot/store';
import { redactUrl, type Config } from '@singleshot/config';
import { SourceStatusStore, createRedis, sourceRows } from '@singleshot/store';
import { keysOf, loadConfigOrExit, redisConnectionOptions } from '@singleshot/runtime';
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
export async function connectForCommand(config: Config, role: 'client' | 'worker' = 'client', timeoutMs = 5_000): Promise<RedisClient> {
  const redis = createRedis(redisConnectionOptions(config, role, `singleshot:cli${role === 'worker' ? ':follow' : ''}`));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`cannot reach Redis at ${config.redis.cluster ? config.redis.cluster.nodes.join(',') : redactUrl(config.redis.url)} within ${timeoutMs} ms`)), timeoutMs);
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
    .description(`jobs per queue and state (${QUEUE_NAMES.join(', ')}), and each configured source`)
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const redis = await connectForCommand(config);
      const keys = keysOf(config);
      const queues = openQueues(redis, keys);
      try {
        // One row per queue of the fleet, summed over its partitions (paused if any partition is).
        const rows: QueueCountsRow[] = await Promise.all(
          QUEUE_NAMES.map(async (name) => {
            const list = queues.byName[name];
            const read = await Promise.all(list.map((q) => Promise.all([q.getJobCounts(...QUEUE_STATES), q.isPaused()] as const)));
            const counts = Object.fromEntries(QUEUE_STATES.map((s) => [s, read.reduce((n, [c]) => n + (c[s] ?? 0), 0)])) as Record<QueueState, number>;
            return { queue: name, counts, paused: read.some(([, paused]) => paused) };
          }),
        );
        const sources = sourceRows(config.sources, config.sources.length > 0 ? await new SourceStatusStore(redis, keys).read() : new Map(), Date.now());
        if (opts.json) {
          console.log(JSON.stringify({ queues: rows, sources }, null, 2));
          return;
        }
        printTable([
          ['QUEUE', ...QUEUE_STATES.map((s) => s.toUpperCase()), 'PAUSED'],
          ...rows.map((r) => [r.queue, ...QUEUE_STATES.map((s) => String(r.counts[s])), r.paused ? 'yes' : 'no']),
        ]);
        if (sources.length > 0) {
          console.log('');
          printTable([['SOURCE', 'TYPE', 'STATE', 'LAG', 'REPORTED', 'BY'], ...sources.map((r) => [r.source, r.type, r.state, r.lag === null ? '?' : String(r.lag), r.reportedAt ?? '', r.reporter ?? ''])]);
        }
        const dead = rows.find((r) => r.queue === QUEUES.dead);
        const records = dead ? dead.counts.waiting + dead.counts.failed : 0;
        if (records > 0) console.log(`\n${records} dead operation(s): singleshot dlq list`);
      } finally {
        await queues.close().catch(() => undefined);
        redis.disconnect();
      }
    });
}
