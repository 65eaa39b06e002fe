import { Redis, type RedisOptions } from 'ioredis';
import { readFileSync } from 'node:fs';
import { batchSocketWrites } from './write-batching';

/**
 * How a connection is used decides how it behaves while Redis is away:
 * - `worker`: BullMQ workers and blocking reads; waits for Redis forever
 *   (`maxRetriesPerRequest: null`, as BullMQ requires).
 * - `producer`: the ingest path; fails fast while disconnected so the HTTP
 *   caller gets a 503 instead of a hanging request (never a 2xx).
 * - `client`: everything else (state scripts, admin reads); commands queue while
 *   reconnecting, so a short Redis restart delays a commit instead of losing it.
 */
export type ConnectionRole = 'worker' | 'producer' | 'client';

export interface RedisConnectionOptions {
  url: string;
  role: ConnectionRole;
  /** Connection name shown in CLIENT LIST. */
  name?: string;
  password?: string;
  tls?: { rejectUnauthorized?: boolean; ca?: string; caFile?: string };
}

/** The one Redis connection factory (URL, TLS for `rediss://`, password). */
export function createRedis(options: RedisConnectionOptions): Redis {
  const url = new URL(options.url);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError(`REDIS_URL must start with redis:// or rediss:// (got ${url.protocol}//)`);
  }
  const base: RedisOptions = {
    connectionName: options.name,
    // Reconnect quickly at first, then every 2 s at most.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
    lazyConnect: false,
  };
  if (options.password) base.password = options.password;
  if (url.protocol === 'rediss:' || options.tls) {
    const ca = options.tls?.ca ?? (options.tls?.caFile ? readFileSync(options.tls.caFile, 'utf8') : undefined);
    base.tls = { rejectUnauthorized: options.tls?.rejectUnauthorized ?? true, ...(ca ? { ca } : {}) };
  }
  switch (options.role) {
    case 'worker':
      Object.assign(base, { maxRetriesPerRequest: null, enableReadyCheck: true });
      break;
    // No auto-pipelining: the chaos suite crashed an ingest process with it
    // (ioredis 5.11 autoPipelining.js throws "results[i] is not iterable" from a
    // callback when a pipeline fails as the connection drops), for a gain of
    // about 15% in one benchmark. Robustness first.
    case 'producer':
      Object.assign(base, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 3000 });
      break;
    case 'client':
      Object.assign(base, { maxRetriesPerRequest: null });
      break;
  }
  const redis = new Redis(options.url, base);
  // ioredis emits 'error' on every failed reconnect; without a listener node
  // would print an unhandled-error warning per attempt. Callers log state changes.
  redis.on('error', () => undefined);
  batchSocketWrites(redis);
  return redis;
}
