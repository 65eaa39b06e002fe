import type { KeyBuilder, RedisClient } from '@singleshot/store';

/**
 * The claims one process holds now, read straight from Redis: every lock key
 * that exists (they expire with the lease) whose operation's `owner` is that
 * process's worker id (`host:pid:random`), with the fence the lock holds.
 * The run's keyspace is small, so the SCAN goes to the end.
 */
export async function claimsHeldBy(redis: RedisClient, keys: KeyBuilder, pid: number): Promise<Map<string, string>> {
  const locks: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.prefix}:*:lock:*`, 'COUNT', 1000);
    locks.push(...found);
    cursor = next;
  } while (cursor !== '0');
  const held = new Map<string, string>();
  if (locks.length === 0) return held;
  const pipeline = redis.pipeline();
  for (const lock of locks) {
    pipeline.get(lock);
    pipeline.hget(lock.replace(':lock:', ':op:'), 'owner');
  }
  const replies = (await pipeline.exec()) ?? [];
  locks.forEach((lock, i) => {
    const fence = replies[2 * i]?.[1];
    const owner = replies[2 * i + 1]?.[1];
    const ownerPid = typeof owner === 'string' ? /:(\d+):[0-9a-f]+$/.exec(owner)?.[1] : undefined;
    if (typeof fence === 'string' && ownerPid === String(pid)) held.set(lock.slice(lock.indexOf(':lock:') + ':lock:'.length), fence);
  });
  return held;
}
