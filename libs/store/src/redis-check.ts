import type { Redis } from 'ioredis';

/**
 * Start-up check of the Redis a process is about to trust with its dedup state.
 * Returns human-readable problems; callers log them as warnings. INFO is used,
 * not CONFIG GET, because managed Redis often disables CONFIG.
 */
export async function checkRedisServer(redis: Redis): Promise<{ version: string; problems: string[] }> {
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
  return { version, problems };
}
