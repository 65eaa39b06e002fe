import type { Redis } from 'ioredis';
import { isCluster, mastersOf, type RedisClient } from './connection';

/**
 * Start-up check of the Redis a process is about to trust with its dedup state.
 * Returns human-readable problems; callers log them as warnings. INFO is used,
 * not CONFIG GET, because managed Redis often disables CONFIG.
 */
export async function checkRedisServer(redis: Redis): Promise<{ version: string; problems: string[]; replicas: number }> {
  const info = await redis.info();
  const field = (name: string) => info.match(new RegExp(`^${name}:(.*)$`, 'm'))?.[1]?.trim() ?? '';
  const version = field('redis_version');
  const problems: string[] = [];
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major < 6 || (major === 6 && minor < 2)) {
    problems.push(`Redis ${version} is older than 6.2: journal trimming by MINID needs 6.2 or later`);
  }
  const policy = field('maxmemory_policy');
  if (policy && policy !== 'noeviction') {
    problems.push(
      `maxmemory-policy is ${policy}: Redis may evict dedup records and locks under memory pressure, ` +
        'which can cause duplicate notifications; set maxmemory-policy noeviction',
    );
  }
  if (field('aof_enabled') !== '1') {
    problems.push(
      'AOF is off (appendonly no): a Redis crash loses queued jobs and dedup records; ' +
        'set appendonly yes (appendfsync everysec or always)',
    );
  }
  return { version, problems, replicas: Number(field('connected_slaves')) || 0 };
}

/** Resolves once the connection (for a cluster: its slot map) is ready. */
export async function whenReady(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis not ready after ${timeoutMs} ms (status ${redis.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

export interface ServerCheck {
  /** `host:port` of the master (or `redis` for a single Redis). */
  node: string;
  version: string;
  problems: string[];
  /** Connected replicas of this master. */
  replicas: number;
}

/**
 * Runs the start-up check on every master of a cluster (each holds part of the
 * dedup state, so each must be configured right), or on the one Redis.
 * `waitReplicas` adds a problem for a master with fewer replicas than the
 * acceptance `WAIT` needs (every acceptance on its slots would time out).
 */
export async function checkRedisServers(redis: RedisClient, waitReplicas = 0): Promise<ServerCheck[]> {
  if (isCluster(redis)) await whenReady(redis);
  return Promise.all(
    mastersOf(redis).map(async (node) => {
      const check = await checkRedisServer(node);
      if (check.replicas < waitReplicas) {
        check.problems.push(
          `this master has ${check.replicas} replica(s) but redis.cluster.waitReplicas is ${waitReplicas}: ` +
            'acceptances on its slots will time out (503) until a replica connects',
        );
      }
      return { node: isCluster(redis) ? `${node.options.host}:${node.options.port}` : 'redis', ...check };
    }),
  );
}
